package embedded

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// sqlstateCannotConnectNow is what the server answers while it starts, shuts
// down or recovers (57P03, cannot_connect_now).
const sqlstateCannotConnectNow = "57P03"

// maxServerLog is the size past which the server's log is rotated, once,
// when clearing starts the server; nothing else writes it then.
const maxServerLog = 16 << 20

// spawnAttempts bounds how often one start tries again after the server
// exited at once. A server killed with SIGKILL leaves children that hold
// its shared memory for a few milliseconds, and a new server refuses to
// start until they are gone; anything else that fails fails every time.
const spawnAttempts = 5

// prepare creates the cluster if needed and makes sure its server answers,
// starting it when nobody runs it. The caller holds the control lock.
// started reports whether this call started the server.
func (e *Cluster) prepare(ctx context.Context, deadline time.Time) (started bool, err error) {
	if err := os.Mkdir(e.pgDir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return false, fmt.Errorf("embedded: %w", err)
	}
	if err := e.account.own(e.pgDir); err != nil {
		return false, err
	}
	if err := e.initCluster(ctx); err != nil {
		return false, err
	}
	return e.ensureRunning(ctx, deadline)
}

// initCluster runs initdb on first use. It builds the cluster under a
// temporary name and renames it into place only when it is complete, so a
// process killed halfway leaves nothing that a later start would trust.
func (e *Cluster) initCluster(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(e.dataDir, "PG_VERSION")); err == nil {
		return nil
	}
	if _, err := os.Stat(e.dataDir); err == nil {
		return fmt.Errorf("embedded: %s exists but holds no PostgreSQL cluster; move it away to let clearing create one: %w",
			e.dataDir, ErrHome)
	}
	began := time.Now()
	tmp := e.dataDir + ".initdb"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("embedded: %w", err)
	}
	args := []string{"-D", tmp, "-U", superuser, "-A", "trust", "-E", "UTF8", "--locale=C", "--data-checksums"}
	if e.ephemeral {
		args = append(args, "--no-sync")
	}
	if out, err := e.command(ctx, "initdb", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("embedded: initdb %s: %v\n%s\n%w", tmp, err, lastLines(string(out), 20), ErrServer)
	}
	hba := hbaConf
	if e.loopback {
		hba += hbaLoopback
	}
	if err := e.writeFile(filepath.Join(tmp, "pg_hba.conf"), hba, false); err != nil {
		return err
	}
	if err := e.writeFile(filepath.Join(tmp, "postgresql.conf"), "\n"+includeLine, true); err != nil {
		return err
	}
	if err := os.Rename(tmp, e.dataDir); err != nil {
		return fmt.Errorf("embedded: %w", err)
	}
	if err := syncDir(e.pgDir); err != nil {
		return err
	}
	e.log.Info("embedded PostgreSQL cluster created", slog.String("data", e.dataDir), slog.Duration("took", time.Since(began)))
	return nil
}

// hbaConf allows only the unix socket, without a password. That is safe
// because the socket's folder is 0700: only the server's OS user and root
// can reach it. There is no host line, so TCP is refused even if someone
// enables listen_addresses.
const hbaConf = `# Written by clearing when it created this cluster.
# Only the unix socket is allowed; its folder is private (0700), so trust
# admits only the server's OS user and root.
local all all trust
`

// hbaLoopback lets a throw-away cluster's peers in over TCP on the
// loopback address (Options.Loopback).
const hbaLoopback = `host all all 127.0.0.1/32 trust
`

// includeLine appends clearing's settings to postgresql.conf. They come
// last, so they win over the file's own; ALTER SYSTEM still wins over them.
const includeLine = "include 'clearing.conf'\n"

// serverConf renders clearing.conf. It is rewritten before every start, so
// a moved home or a changed option takes effect.
func (e *Cluster) serverConf() string {
	var b strings.Builder
	b.WriteString("# Written by clearing before every start of this server; edits are lost.\n")
	b.WriteString("# Use ALTER SYSTEM (postgresql.auto.conf) to change a setting.\n")
	listen := ""
	if e.loopback {
		listen = "127.0.0.1"
	}
	fmt.Fprintf(&b, "listen_addresses = '%s'\nport = %d\n", listen, e.serverPort())
	fmt.Fprintf(&b, "unix_socket_directories = %s\n", quoteConfValue(`"`+e.pgDir+`"`))
	b.WriteString("unix_socket_permissions = 0700\n")
	b.WriteString("max_connections = 100\n")
	b.WriteString("timezone = 'UTC'\nlog_timezone = 'UTC'\n")
	if e.ephemeral {
		b.WriteString("fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n")
	}
	for _, line := range e.settings {
		b.WriteString(line + "\n")
	}
	return b.String()
}

// quoteConfValue quotes a string for postgresql.conf.
func quoteConfValue(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}

// ensureRunning returns once the server answers and the database exists,
// starting the server when no live server owns the cluster. A server that
// is starting or shutting down (its starter or stopper may have been
// killed) is waited for.
func (e *Cluster) ensureRunning(ctx context.Context, deadline time.Time) (started bool, err error) {
	var srv *serverProcess
	attempts := 0
	wait := 2 * time.Millisecond
	for {
		err := e.ensureDatabase(ctx)
		if err == nil {
			return srv != nil, nil
		}
		var pgErr *pgconn.PgError
		answered := errors.As(err, &pgErr)
		if answered && pgErr.Code != sqlstateCannotConnectNow {
			return false, fmt.Errorf("embedded: embedded server: %w", err)
		}
		switch {
		case srv != nil && srv.exited():
			if attempts >= spawnAttempts {
				return false, e.startFailed("the server exited at once", err)
			}
			// Give the children of a killed server time to let go of its
			// shared memory before the next attempt.
			srv, wait = nil, 50*time.Millisecond
		case srv == nil && !answered:
			spawned, serr := e.startIfDown()
			if serr != nil {
				return false, serr
			}
			if spawned != nil {
				srv = spawned
				attempts++
			}
		}
		if time.Now().After(deadline) {
			what := fmt.Sprintf("the server did not answer within %s", e.timeout)
			if state, pid := e.postmasterState(); srv == nil && state == serverLive {
				what += fmt.Sprintf("; %s names process %d, which is still running: if it is not this cluster's server, remove that file",
					filepath.Join(e.dataDir, "postmaster.pid"), pid)
			}
			return false, e.startFailed(what, err)
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("embedded: waiting for the embedded server: %w", ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 20*time.Millisecond)
	}
}

// startIfDown starts the server unless a live one owns the cluster, in which
// case it returns nil and the caller waits for that one to answer.
func (e *Cluster) startIfDown() (*serverProcess, error) {
	state, pid := e.postmasterState()
	switch state {
	case serverLive:
		return nil, nil
	case serverDead:
		// The server was killed. Its children notice and exit, but one busy
		// with a query can hold the cluster's shared memory for a while, and
		// a new server refuses to start until it lets go.
		if n := e.orphans(); n > 0 {
			e.log.Debug("waiting for processes of a killed server to exit", slog.Int("processes", n))
			return nil, nil
		}
	case serverForeign:
		e.removeStaleLockFiles(pid)
	}
	return e.spawn()
}

// ensureDatabase connects to the server and creates the database that
// ConnString names when it is missing.
func (e *Cluster) ensureDatabase(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, e.connString("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var exists bool
	err = conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, e.database).Scan(&exists)
	if err != nil || exists {
		return err
	}
	_, err = conn.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{e.database}.Sanitize())
	return err
}

// startFailed explains a server that would not start, with the end of its
// log, where the server says why.
func (e *Cluster) startFailed(what string, last error) error {
	logPath := filepath.Join(e.pgDir, serverLogName)
	return fmt.Errorf("embedded: the embedded PostgreSQL server in %s did not start: %s (last attempt: %v); the end of %s:\n%s\n%w",
		e.dataDir, what, last, logPath, tailFile(logPath, 20), ErrServer)
}

// stop asks the server to shut down (fast: open transactions roll back) and
// waits until it has. It reports whether there was a server to stop.
func (e *Cluster) stop(ctx context.Context, deadline time.Time) (bool, error) {
	state, pid := e.postmasterState()
	if state != serverLive {
		return false, nil
	}
	// pg_ctl's own -w polls ten times a second; waiting here for the lock
	// file to go saves most of that from every command
	// (docs/decisions/embedded-cluster.md).
	out, err := e.command(context.WithoutCancel(ctx), "pg_ctl", "stop", "-D", e.dataDir, "-m", "fast", "-W", "-s").CombinedOutput()
	if err != nil {
		if state, _ := e.postmasterState(); state != serverLive {
			return true, nil
		}
		return false, fmt.Errorf("embedded: pg_ctl stop: %v: %s: %w", err, strings.TrimSpace(string(out)), ErrServer)
	}
	wait := 2 * time.Millisecond
	for {
		// The server removes its lock file just before it exits: stopped
		// means that its process is gone too, so that nothing of it is
		// left running when the command has ended.
		if state, _ := e.postmasterState(); state != serverLive && !processAlive(pid) {
			return true, nil
		}
		if time.Now().After(deadline) {
			logPath := filepath.Join(e.pgDir, serverLogName)
			return false, fmt.Errorf("embedded: the embedded server in %s did not stop within %s; the end of %s:\n%s\n%w",
				e.dataDir, e.timeout, logPath, tailFile(logPath, 20), ErrServer)
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("embedded: asked the embedded server to stop, but did not wait: %w", ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 20*time.Millisecond)
	}
}

// command prepares one of the server programs to run as the server's user,
// in the cluster's folder, with an environment that cannot redirect it.
func (e *Cluster) command(ctx context.Context, program string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, e.bin.path(program), args...)
	cmd.Dir = e.pgDir
	cmd.Env = serverEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: e.account.cred}
	return cmd
}

// serverEnv is the caller's environment without the PG* variables (PGPORT
// or PGDATA would move the server) and with messages in English, so that
// the log tails quoted in errors are readable by whoever supports them.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C")
}

// writeFile writes (or appends to) a file in the cluster and gives it to
// the server's user.
func (e *Cluster) writeFile(path, content string, appendTo bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendTo {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return fmt.Errorf("embedded: %w", err)
	}
	_, err = f.WriteString(content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("embedded: %w", err)
	}
	return e.account.own(path)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("embedded: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("embedded: %w", err)
	}
	return nil
}

// processAlive reports whether a process with this id exists (a zombie
// counts until it is reaped); 0 names none.
func processAlive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}
