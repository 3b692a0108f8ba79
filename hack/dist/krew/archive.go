package krew

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
)

// Archive is what a platform's uri downloads: a .tar.gz listed by entry.
type Archive struct {
	// Name is the file name, the last element of the uri.
	Name string
	// SHA256 is the archive's checksum; "" when it is not known.
	SHA256 string
	// Entries are the regular files by slash-separated path, with their mode.
	Entries map[string]fs.FileMode
}

// ReadArchive lists the .tar.gz file at p and computes its sha256.
func ReadArchive(p string) (*Archive, error) {
	f, err := os.Open(p) //nolint:gosec // G304: the archive the user named
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	entries, err := ListTarGz(io.TeeReader(f, h))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	// Hash whatever follows the end of the tar stream too.
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return &Archive{Name: filepath.Base(p), SHA256: hex.EncodeToString(h.Sum(nil)), Entries: entries}, nil
}

// ListTarGz returns the regular files of a .tar.gz stream with their modes.
// Paths that are absolute or leave the archive are errors, as krew refuses
// them.
func ListTarGz(r io.Reader) (map[string]fs.FileMode, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	entries := map[string]fs.FileMode{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		name := path.Clean(h.Name)
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return nil, fmt.Errorf("entry %q leaves the archive", h.Name)
		}
		if h.Typeflag == tar.TypeReg {
			entries[name] = fs.FileMode(h.Mode & 0o777)
		}
	}
	if _, err := io.Copy(io.Discard, zr); err != nil { //nolint:gosec // G110: into io.Discard, so no memory grows
		return nil, err
	}
	return entries, zr.Close()
}

// Install returns the files krew installs from an archive with entries,
// by path in the plugin's installation directory, following the file
// operations as krew does: a from naming an entry (or a directory) is copied
// to "to" (to "." keeps its name); otherwise from is a glob and each match
// is copied into the directory "to". No files copies everything.
func Install(files []FileOperation, entries map[string]fs.FileMode) (map[string]fs.FileMode, error) {
	if files == nil {
		files = []FileOperation{{From: "*", To: "."}}
	}
	installed := map[string]fs.FileMode{}
	for _, op := range files {
		if path.Clean(op.To) != op.To {
			return nil, fmt.Errorf("to %q is not a clean path", op.To)
		}
		from := path.Clean(op.From)
		if under := subtree(entries, from); len(under) > 0 {
			dest := op.To
			if dest == "." {
				dest = path.Base(from)
			}
			for rel, mode := range under {
				installed[path.Join(dest, rel)] = mode
			}
			continue
		}
		matched := false
		for _, c := range candidates(entries) {
			ok, err := path.Match(op.From, c)
			if err != nil {
				return nil, fmt.Errorf("from %q: %w", op.From, err)
			}
			if !ok {
				continue
			}
			matched = true
			for rel, mode := range subtree(entries, c) {
				installed[path.Join(op.To, path.Base(c), rel)] = mode
			}
		}
		if !matched {
			return nil, fmt.Errorf("from %q matches nothing in the archive", op.From)
		}
	}
	return installed, nil
}

// subtree returns the entries at p (a file: the key "") or under the
// directory p, relative to it.
func subtree(entries map[string]fs.FileMode, p string) map[string]fs.FileMode {
	out := map[string]fs.FileMode{}
	for name, mode := range entries {
		switch {
		case name == p:
			out[""] = mode
		case p == ".":
			out[name] = mode
		case strings.HasPrefix(name, p+"/"):
			out[strings.TrimPrefix(name, p+"/")] = mode
		}
	}
	return out
}

// candidates returns every entry and every directory holding one, sorted.
func candidates(entries map[string]fs.FileMode) []string {
	seen := sets.New[string]()
	for name := range entries {
		for p := name; p != "." && p != "/"; p = path.Dir(p) {
			seen.Insert(p)
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// ValidateArchives checks each platform of p against its archive, looked up
// in archives by the last element of its uri: the sha256 (when known)
// matches, every files entry finds something to copy, the bin is installed
// and can run (executable, or an .exe on Windows), and a LICENSE is
// installed with it. It returns every problem found, joined.
func ValidateArchives(p *Plugin, archives map[string]*Archive) error {
	var errs []error
	for i, pl := range p.Spec.Platforms {
		add := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("spec.platforms[%d]: "+format, append([]any{i}, args...)...))
		}
		name := path.Base(pl.URI)
		a, ok := archives[name]
		if !ok {
			add("no archive %q", name)
			continue
		}
		if a.SHA256 != "" && a.SHA256 != pl.SHA256 {
			add("sha256 %s, but %s has %s", pl.SHA256, name, a.SHA256)
		}
		installed, err := Install(pl.Files, a.Entries)
		if err != nil {
			add("files: %v", err)
			continue
		}
		bin := path.Clean(pl.Bin)
		mode, ok := installed[bin]
		goos, _ := pl.OSArch()
		switch {
		case !ok:
			add("bin %q is not among the installed files %v", pl.Bin, keys(installed))
		case goos == "windows" && !strings.HasSuffix(bin, ".exe"):
			add("bin %q: krew runs only .exe files on Windows", pl.Bin)
		case goos != "windows" && mode&0o111 == 0:
			add("bin %q is not executable (mode %v)", pl.Bin, mode)
		}
		hasLicense := false
		for f := range installed {
			if strings.HasPrefix(path.Base(f), "LICENSE") {
				hasLicense = true
			}
		}
		if !hasLicense {
			add("no LICENSE among the installed files %v", keys(installed))
		}
	}
	return errors.Join(errs...)
}

func keys(m map[string]fs.FileMode) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
