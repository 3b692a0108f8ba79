package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-informer/kubectl-informer/hack/dist/krew"
)

const (
	// project names the binary (kubectl-PLUGIN) and the archives.
	project = "kubectl-informer"
	// releases is where the archives of a version are published.
	releases = "https://github.com/kubectl-informer/kubectl-informer/releases/download"
)

// The executable kubectl (1.26 and later) runs from PATH to complete the
// arguments of "kubectl informer": a POSIX shell script, and for Windows a
// batch file that PATHEXT lets kubectl find by the same name.
var (
	//go:embed kubectl_complete-informer
	completionHelper []byte
	//go:embed kubectl_complete-informer.cmd
	completionHelperWindows []byte
)

// Platform is an os/arch pair Go builds for.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// DefaultPlatforms are the platforms released, in the manifest's order.
var DefaultPlatforms = []Platform{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// ParsePlatforms reads a list of os/arch separated by commas or spaces; ""
// is every default platform. The result is in DefaultPlatforms' order.
func ParsePlatforms(s string) ([]Platform, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
	if len(fields) == 0 {
		return slices.Clone(DefaultPlatforms), nil
	}
	want := sets.New[Platform]()
	for _, f := range fields {
		goos, goarch, ok := strings.Cut(f, "/")
		p := Platform{goos, goarch}
		if !ok || !slices.Contains(DefaultPlatforms, p) {
			return nil, fmt.Errorf("platform %q: want os/arch, one of %v", f, DefaultPlatforms)
		}
		want.Insert(p)
	}
	var out []Platform
	for _, p := range DefaultPlatforms {
		if want.Has(p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// BinaryName is the plugin's executable on goos.
func BinaryName(goos string) string { return exe(project, goos) }

// HelperName is the completion helper on goos.
func HelperName(goos string) string {
	name := "kubectl_complete-" + strings.TrimPrefix(project, "kubectl-")
	if goos == "windows" {
		return name + ".cmd"
	}
	return name
}

func exe(name, goos string) string {
	if goos == "windows" {
		return name + ".exe"
	}
	return name
}

// ArchiveName is the release archive of version for p.
func ArchiveName(version string, p Platform) string {
	return fmt.Sprintf("%s_%s_%s_%s.tar.gz", project, version, p.OS, p.Arch)
}

// Entry is a file of an archive: its content is Data, or the file at Path.
type Entry struct {
	Name string
	Mode fs.FileMode
	Data []byte
	Path string
}

// Entries are the files of the archive for goos: the binary, the
// completion helper, LICENSE and README.md from root. binary is the path
// of the built executable.
func Entries(goos, binary, root string) []Entry {
	helper := completionHelper
	if goos == "windows" {
		helper = completionHelperWindows
	}
	return []Entry{
		{Name: BinaryName(goos), Mode: 0o755, Path: binary},
		{Name: HelperName(goos), Mode: 0o755, Data: helper},
		{Name: "LICENSE", Mode: 0o644, Path: filepath.Join(root, "LICENSE")},
		{Name: "README.md", Mode: 0o644, Path: filepath.Join(root, "README.md")},
	}
}

// WriteArchive writes entries as a reproducible .tar.gz: entries sorted by
// name, every mtime set to mtime, owner root, no other metadata; the gzip
// header carries no name or time.
func WriteArchive(w io.Writer, entries []Entry, mtime time.Time) error {
	sorted := slices.Clone(entries)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, e := range sorted {
		r, size, err := e.open()
		if err != nil {
			return err
		}
		h := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     e.Name,
			Mode:     int64(e.Mode.Perm()),
			Size:     size,
			ModTime:  mtime.UTC().Truncate(time.Second),
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(h); err != nil {
			_ = r.Close()
			return fmt.Errorf("%s: %w", e.Name, err)
		}
		_, err = io.Copy(tw, r)
		_ = r.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

func (e Entry) open() (io.ReadCloser, int64, error) {
	if e.Path == "" {
		return io.NopCloser(bytes.NewReader(e.Data)), int64(len(e.Data)), nil
	}
	f, err := os.Open(e.Path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// Built is an archive written for a platform.
type Built struct {
	Platform Platform
	// Name is the archive's file name.
	Name   string
	SHA256 string
}

// PackArchive writes the archive of version for p into dir and returns it
// with its checksum.
func PackArchive(dir, version string, p Platform, entries []Entry, mtime time.Time) (Built, error) {
	name := ArchiveName(version, p)
	f, err := os.Create(filepath.Join(dir, name)) //nolint:gosec // G304: the archive, in the output directory the user named
	if err != nil {
		return Built{}, err
	}
	h := sha256.New()
	if err := WriteArchive(io.MultiWriter(f, h), entries, mtime); err != nil {
		_ = f.Close()
		return Built{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return Built{}, err
	}
	return Built{Platform: p, Name: name, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// Checksums is checksums.txt in sha256sum's format, sorted by file name.
func Checksums(built []Built) []byte {
	sorted := slices.Clone(built)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var b bytes.Buffer
	for _, a := range sorted {
		fmt.Fprintf(&b, "%s  %s\n", a.SHA256, a.Name)
	}
	return b.Bytes()
}

// ReleaseURL is where the archive name of version is downloaded from.
func ReleaseURL(version, name string) string {
	return releases + "/" + version + "/" + name
}

// PlatformSpec is the manifest's platform for an archive: selected by its
// os and arch, installing every file the archive holds.
func PlatformSpec(version string, a Built) krew.Platform {
	goos := a.Platform.OS
	files := []krew.FileOperation{}
	for _, name := range []string{BinaryName(goos), HelperName(goos), "LICENSE", "README.md"} {
		files = append(files, krew.FileOperation{From: name, To: "."})
	}
	return krew.Platform{
		Selector: &krew.Selector{MatchLabels: map[string]string{"os": goos, "arch": a.Platform.Arch}},
		URI:      ReleaseURL(version, a.Name),
		SHA256:   a.SHA256,
		Bin:      BinaryName(goos),
		Files:    files,
	}
}

// Render returns the manifest of version for the archives: base's
// metadata, homepage and texts (the root plugin.yaml is their one source),
// with the version and one platform per archive.
func Render(base *krew.Plugin, version string, built []Built) *krew.Plugin {
	p := *base
	p.Spec.Version = version
	p.Spec.Platforms = nil
	for _, a := range built {
		p.Spec.Platforms = append(p.Spec.Platforms, PlatformSpec(version, a))
	}
	return &p
}
