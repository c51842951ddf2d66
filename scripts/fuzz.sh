#!/usr/bin/env bash
# make fuzz: a short coverage-guided run of every native Go fuzz target in the
# repository, one after the other, FUZZTIME each (default 10s; the first
# argument overrides it, e.g. ./scripts/fuzz.sh 60s). Targets are found by
# their declarations, so a new one is run without being listed here.
#
# A target that finds a failing input stops, and Go writes that input to the
# package's testdata/fuzz/<target>/ folder: commit it, and it runs as a
# regression case in every plain 'go test' from then on. The script exits 1
# when any target failed. A target that stops with nothing but "context
# deadline exceeded", and no failing input, met Go's own race at the end of
# -fuzztime (go.dev/issue/75804, fixed in Go 1.27) and is run once more. The targets seed themselves from the shared corpus
# when CLEARING_CORPUS names it, and from generated files either way.
set -uo pipefail

fuzztime=${1:-10s}
go=${GO:-go}
cd "$(dirname "$0")/.."

# Every "func FuzzX(" in a _test.go file, as "package-dir target" pairs.
targets=$(grep -r --include='*_test.go' -o -E '^func Fuzz[A-Za-z0-9_]*\(' --exclude-dir=.git --exclude-dir=testdata . |
	sed -E 's#^(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]*)\($#\1 \2#' | sort -u)
if [ -z "$targets" ]; then
	echo "fuzz: no fuzz targets found" >&2
	exit 1
fi

# fuzz runs $target of $dir for $fuzztime, its output in $log.
fuzz() { "$go" test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$dir" >"$log" 2>&1; }

failed=0
summary=""
started=$(date +%s)
while read -r dir target; do
	t0=$(date +%s)
	echo "== $target in $dir ($fuzztime)"
	log=$(mktemp)
	if fuzz; then
		result=ok
	elif grep -q 'context deadline exceeded' "$log" && ! grep -q -E 'Failing input written|panic:|\.go:[0-9]+:' "$log" &&
		echo "   $target stopped with a bare 'context deadline exceeded' and no failing input (Go's fuzz coordinator at -fuzztime's end, go.dev/issue/75804, fixed in Go 1.27): once more" && fuzz; then
		result=ok
	else
		result=FAIL
		failed=1
		cat "$log"
		# Go saves the failing input under the package's testdata/fuzz.
		grep -o -E 'testdata/fuzz/[^ ]+' "$log" | sed "s#^#   failing input: ${dir#./}/#" || true
	fi
	tail -n 3 "$log" | grep -E '^(ok|FAIL|---)' | sed 's/^/   /' || true
	rm -f "$log"
	summary+=$(printf '%-5s %-14s %-22s %4ss' "$result" "$target" "$dir" "$(($(date +%s) - t0))")$'\n'
done <<<"$targets"

echo
echo "fuzz summary ($fuzztime per target, $(($(date +%s) - started))s in all):"
printf '%s' "$summary"
if [ "$failed" != 0 ]; then
	echo "fuzz: a target failed; its input is saved under testdata/fuzz" >&2
	exit 1
fi
