package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Entry is a file, directory or symbolic link of a layer.
type Entry struct {
	// Name is the path inside the image, without a leading slash:
	// "etc/passwd".
	Name string
	// Type is tar.TypeReg, tar.TypeDir or tar.TypeSymlink.
	Type byte
	// Mode holds the permission bits (and sticky, setuid, setgid bits).
	Mode int64
	// UID and GID own the entry; 0 (root) unless set.
	UID, GID int
	// Data is a regular file's content when Source is empty.
	Data []byte
	// Source is the path of the file on this machine whose content a
	// regular file has.
	Source string
	// Link is a symbolic link's target.
	Link string
}

// File is a regular file of mode with content data, owned by root.
func File(name string, mode int64, data []byte) Entry {
	return Entry{Name: name, Type: tar.TypeReg, Mode: mode, Data: data}
}

// Dir is a directory of mode, owned by root.
func Dir(name string, mode int64) Entry {
	return Entry{Name: name, Type: tar.TypeDir, Mode: mode}
}

// Symlink is a symbolic link at name pointing to target.
func Symlink(name, target string) Entry {
	return Entry{Name: name, Type: tar.TypeSymlink, Mode: 0o777, Link: target}
}

// WriteLayer writes entries as a reproducible gzip-compressed tar: sorted
// by name (a directory before what it holds), every entry dated mtime
// (truncated to the second), no user or group names, no PAX times, and a
// gzip header without name or time. Two entries of one name are an error.
func WriteLayer(w io.Writer, entries []Entry, mtime time.Time) error {
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	mtime = mtime.UTC().Truncate(time.Second)
	for i, e := range sorted {
		if err := e.check(); err != nil {
			return err
		}
		if i > 0 && sorted[i-1].Name == e.Name {
			return fmt.Errorf("layer entry %q: given twice", e.Name)
		}
		if err := writeEntry(tw, e, mtime); err != nil {
			return fmt.Errorf("layer entry %q: %w", e.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

func (e Entry) check() error {
	clean := path.Clean(e.Name)
	if e.Name == "" || clean != e.Name || path.IsAbs(e.Name) || clean == "." || strings.HasPrefix(clean, "../") || clean == ".." {
		return fmt.Errorf("layer entry %q: want a clean relative path such as \"etc/passwd\"", e.Name)
	}
	switch e.Type {
	case tar.TypeReg, tar.TypeDir:
	case tar.TypeSymlink:
		if e.Link == "" {
			return fmt.Errorf("layer entry %q: a symbolic link needs a target", e.Name)
		}
	default:
		return fmt.Errorf("layer entry %q: type %q is not a file, directory or symbolic link", e.Name, e.Type)
	}
	return nil
}

func writeEntry(tw *tar.Writer, e Entry, mtime time.Time) error {
	h := &tar.Header{
		Typeflag: e.Type,
		Name:     e.Name,
		Mode:     e.Mode,
		Uid:      e.UID,
		Gid:      e.GID,
		ModTime:  mtime,
		Linkname: e.Link,
	}
	if e.Type == tar.TypeDir {
		h.Name += "/"
	}
	if e.Type != tar.TypeReg {
		return tw.WriteHeader(h)
	}
	r, size, err := e.open()
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }()
	h.Size = size
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	n, err := io.Copy(tw, r)
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("%s changed while it was read", e.Source)
	}
	return nil
}

func (e Entry) open() (io.ReadCloser, int64, error) {
	if e.Source == "" {
		return io.NopCloser(bytes.NewReader(e.Data)), int64(len(e.Data)), nil
	}
	f, err := os.Open(e.Source)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		_ = f.Close()
		return nil, 0, fmt.Errorf("%s is not a regular file", e.Source)
	}
	return f, st.Size(), nil
}

// NewLayer is the OCI layer (gzip-compressed tar) of entries, written by
// WriteLayer and held in memory.
func NewLayer(entries []Entry, mtime time.Time) (v1.Layer, error) {
	var b bytes.Buffer
	if err := WriteLayer(&b, entries, mtime); err != nil {
		return nil, err
	}
	compressed := b.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(compressed)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
