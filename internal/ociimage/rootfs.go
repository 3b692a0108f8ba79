package ociimage

import (
	"archive/tar"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Paths inside the image.
const (
	// BinaryPath is the plugin's binary.
	BinaryPath = "/kubectl-informer"
	// DropInPath is a symbolic link to the binary, the name under which it
	// runs as kube-state-metrics.
	DropInPath = "/kube-state-metrics"
	// CACertificatesPath is the CA bundle, where Go's crypto/x509 looks on
	// Linux.
	CACertificatesPath = "/etc/ssl/certs/ca-certificates.crt"
	// ZoneinfoPath holds the time zone data, where Go's time package looks.
	ZoneinfoPath = "/usr/share/zoneinfo"
)

// User is the account the image runs as, written to /etc/passwd and
// /etc/group.
type User struct {
	Name  string
	Group string
	UID   int
	GID   int
}

// Nobody is the user kube-state-metrics' image runs as (USER nobody on a
// distroless base), uid and gid 65534, which the kube-state-metrics chart
// and kube-prometheus set as runAsUser and runAsGroup.
var Nobody = User{Name: "nobody", Group: "nogroup", UID: 65534, GID: 65534}

// Spec is the image's user, as the config's User field names it: numeric,
// so that the kubelet can check runAsNonRoot without reading /etc/passwd.
func (u User) Spec() string { return fmt.Sprintf("%d:%d", u.UID, u.GID) }

// Base names the files of this machine the base layer takes.
type Base struct {
	// CACertificates is the CA bundle (Debian's ca-certificates package
	// writes /etc/ssl/certs/ca-certificates.crt).
	CACertificates string
	// Zoneinfo is the time zone database directory (Debian's tzdata
	// package installs /usr/share/zoneinfo).
	Zoneinfo string
	// User is the non-root user the image runs as.
	User User
}

// BaseEntries are the files every platform's image shares: /etc/passwd and
// /etc/group with root and the user, the CA bundle, the time zone data and
// a world-writable /tmp. Symbolic links of the time zone data that point
// outside it (Debian's localtime -> /etc/localtime) cannot resolve in the
// image and are left out; skipped names them.
func BaseEntries(b Base) (entries []Entry, skipped []string, err error) {
	if b.User.UID == 0 {
		return nil, nil, fmt.Errorf("user %q has uid 0: the image runs as a non-root user", b.User.Name)
	}
	if _, err := os.Stat(b.CACertificates); err != nil {
		return nil, nil, fmt.Errorf("CA certificates: %w (install Debian's ca-certificates package, or name the bundle)", err)
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:/nonexistent:/sbin/nologin\n",
		b.User.Name, b.User.UID, b.User.GID, b.User.Name)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", b.User.Group, b.User.GID)
	entries = []Entry{
		Dir("etc", 0o755),
		File("etc/passwd", 0o644, []byte(passwd)),
		File("etc/group", 0o644, []byte(group)),
		Dir("etc/ssl", 0o755),
		Dir("etc/ssl/certs", 0o755),
		{Name: strings.TrimPrefix(CACertificatesPath, "/"), Type: tar.TypeReg, Mode: 0o644, Source: b.CACertificates},
		Dir("tmp", 0o1777),
		Dir("usr", 0o755),
		Dir("usr/share", 0o755),
	}
	zone, skipped, err := TreeEntries(b.Zoneinfo, strings.TrimPrefix(ZoneinfoPath, "/"))
	if err != nil {
		return nil, nil, fmt.Errorf("time zone data: %w (install Debian's tzdata package, or name the directory)", err)
	}
	return append(entries, zone...), skipped, nil
}

// TreeEntries are the entries of the directory tree at dir, placed at into:
// directories 0755, files 0644, symbolic links kept when they resolve
// inside the tree. Other symbolic links and special files are left out and
// named in skipped (relative to dir).
func TreeEntries(dir, into string) (entries []Entry, skipped []string, err error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, nil, err
	}
	if !st.IsDir() {
		return nil, nil, fmt.Errorf("%s is not a directory", dir)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		name := path.Join(into, rel)
		switch {
		case d.IsDir():
			entries = append(entries, Dir(name, 0o755))
		case d.Type().IsRegular():
			entries = append(entries, Entry{Name: name, Type: tar.TypeReg, Mode: 0o644, Source: p})
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			target = filepath.ToSlash(target)
			resolved := path.Join(path.Dir(rel), target)
			if path.IsAbs(target) || resolved == ".." || strings.HasPrefix(resolved, "../") {
				skipped = append(skipped, rel)
				return nil
			}
			entries = append(entries, Symlink(name, target))
		default:
			skipped = append(skipped, rel)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return entries, skipped, nil
}

// AppEntries are the plugin's binary (the file at binary) at BinaryPath
// and the drop-in link to it at DropInPath.
func AppEntries(binary string) []Entry {
	return []Entry{
		{Name: strings.TrimPrefix(BinaryPath, "/"), Type: tar.TypeReg, Mode: 0o755, Source: binary},
		// Relative, so that it resolves wherever the file system is
		// unpacked.
		Symlink(strings.TrimPrefix(DropInPath, "/"), path.Base(BinaryPath)),
	}
}
