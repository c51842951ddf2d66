package main

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// machineFacts describe the machine the figures were measured on.
type machineFacts struct {
	cores     int
	cpu       string // the first "model name" of /proc/cpuinfo
	memoryGiB float64
	goVersion string
	os        string
}

// readMachine reads what the report says about the machine. Facts that
// cannot be read stay empty: they describe the run, they do not gate it.
func readMachine() machineFacts {
	m := machineFacts{cores: runtime.NumCPU(), goVersion: runtime.Version(), os: runtime.GOOS + "/" + runtime.GOARCH, cpu: "unknown"}
	if v, ok := procField("/proc/cpuinfo", "model name"); ok {
		m.cpu = v
	}
	if v, ok := procField("/proc/meminfo", "MemTotal"); ok {
		if kib, err := strconv.ParseFloat(strings.TrimSuffix(v, " kB"), 64); err == nil {
			m.memoryGiB = kib / (1 << 20)
		}
	}
	return m
}

// procField returns the value of the first "name : value" line of a /proc
// file.
func procField(path, name string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}
