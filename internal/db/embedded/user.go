package embedded

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// defaultServerUser runs the server when clearing runs as root. Debian's and
// most other distributions' PostgreSQL packages create it.
const defaultServerUser = "postgres"

// serverAccount is the OS user that runs initdb, pg_ctl and postgres.
type serverAccount struct {
	name   string
	uid    int
	groups []int // primary group first
	// cred switches the server programs to this user. It is nil when they
	// run as the calling user, which is the case unless clearing is root.
	cred *syscall.Credential
}

// serverAccountFor decides who runs the server for the cluster in pgDir.
// PostgreSQL refuses to run as root, so root hands the server to the owner
// of an existing cluster folder, and otherwise to want (default postgres).
// Any other user runs the server itself and must own the cluster folder.
func serverAccountFor(pgDir, want string) (serverAccount, error) {
	owner := -1
	if st, err := os.Stat(pgDir); err == nil {
		owner = int(st.Sys().(*syscall.Stat_t).Uid)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return serverAccount{}, fmt.Errorf("embedded: %w", err)
	}
	euid := os.Geteuid()
	if euid != 0 {
		if owner >= 0 && owner != euid {
			return serverAccount{}, fmt.Errorf("embedded: %s belongs to user id %d, and only its owner can run that cluster; "+
				"run clearing as that user or set CLEARING_HOME to another folder: %w", pgDir, owner, ErrHome)
		}
		name := strconv.Itoa(euid)
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
		return serverAccount{name: name, uid: euid, groups: []int{os.Getegid()}}, nil
	}
	var u *user.User
	var err error
	if owner > 0 {
		u, err = user.LookupId(strconv.Itoa(owner))
	} else {
		if want == "" {
			want = defaultServerUser
		}
		u, err = user.Lookup(want)
	}
	if err != nil {
		return serverAccount{}, fmt.Errorf("%w (%v)", ErrNoServerUser, err)
	}
	return accountOf(u)
}

// accountOf builds the credentials that switch a child process to u.
func accountOf(u *user.User) (serverAccount, error) {
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err := errors.Join(err1, err2); err != nil {
		return serverAccount{}, fmt.Errorf("embedded: user %s: %w", u.Username, err)
	}
	if uid == 0 {
		return serverAccount{}, fmt.Errorf("embedded: user %s is root: %w", u.Username, ErrNoServerUser)
	}
	a := serverAccount{name: u.Username, uid: uid, groups: []int{gid}}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	ids, _ := u.GroupIds()
	for _, s := range ids {
		if g, err := strconv.Atoi(s); err == nil && g != gid {
			a.groups = append(a.groups, g)
			cred.Groups = append(cred.Groups, uint32(g))
		}
	}
	a.cred = cred
	return a, nil
}

// own gives path to the server's user when that is not the caller, so that
// the server can write what clearing prepared for it.
func (a serverAccount) own(path string) error {
	if a.cred == nil {
		return nil
	}
	if err := os.Lchown(path, a.uid, a.groups[0]); err != nil {
		return fmt.Errorf("embedded: %w", err)
	}
	return nil
}

// checkReachable fails when the server's user cannot enter dir, which
// happens when root keeps the cluster under its own home (mode 0700). It
// names the folder nearest the root that blocks the way, as fixing a deeper
// one would not help. Permissions are read from the mode bits; an ACL that
// grants more than they do is not taken into account.
func (a serverAccount) checkReachable(dir string) error {
	if a.cred == nil {
		return nil
	}
	blocked := ""
	for p := dir; ; p = filepath.Dir(p) {
		if st, err := os.Stat(p); err == nil && !a.canEnter(st) {
			blocked = p
		}
		if p == filepath.Dir(p) {
			break
		}
	}
	if blocked == "" {
		return nil
	}
	return fmt.Errorf("embedded: PostgreSQL refuses to run as root, so the embedded server runs as OS user %s, which cannot enter %s; "+
		"set CLEARING_HOME to a folder it can reach, such as /var/lib/clearing (the default for root), "+
		"let it pass through %s (chmod o+x), or use --database-url or CLEARING_DATABASE_URL: %w",
		a.name, blocked, blocked, ErrHome)
}

// canEnter applies the owner, group and other execute bits of st the way
// the kernel does for the server's user.
func (a serverAccount) canEnter(st fs.FileInfo) bool {
	sys := st.Sys().(*syscall.Stat_t)
	perm := st.Mode().Perm()
	if int(sys.Uid) == a.uid {
		return perm&0o100 != 0
	}
	for _, g := range a.groups {
		if int(sys.Gid) == g {
			return perm&0o010 != 0
		}
	}
	return perm&0o001 != 0
}
