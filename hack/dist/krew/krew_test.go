package krew

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// valid returns a manifest that passes Validate as plugin "demo": two
// platforms, one of them Windows.
func valid() *Plugin {
	files := func(bin string) []FileOperation {
		return []FileOperation{{From: bin, To: "."}, {From: "LICENSE", To: "."}}
	}
	return &Plugin{
		APIVersion: APIVersion,
		Kind:       Kind,
		Metadata:   Metadata{Name: "demo"},
		Spec: Spec{
			Version:          "v1.2.3",
			Homepage:         "https://example.com/demo",
			ShortDescription: "Show a demo",
			Description:      "Shows a demo.\n",
			Caveats:          "Needs nothing.\n",
			Platforms: []Platform{
				{
					Selector: &Selector{MatchLabels: map[string]string{"os": "linux", "arch": "amd64"}},
					URI:      "https://example.com/demo_linux_amd64.tar.gz",
					SHA256:   sha,
					Bin:      "kubectl-demo",
					Files:    files("kubectl-demo"),
				},
				{
					Selector: &Selector{MatchLabels: map[string]string{"os": "windows", "arch": "amd64"}},
					URI:      "https://example.com/demo_windows_amd64.tar.gz",
					SHA256:   sha,
					Bin:      "kubectl-demo.exe",
					Files:    files("kubectl-demo.exe"),
				},
			},
		},
	}
}

func TestValidateAcceptsValid(t *testing.T) {
	if err := Validate(valid(), "demo"); err != nil {
		t.Fatal(err)
	}
	p := valid()
	p.Spec.Version = "v0.10.0-rc.1+build.5"
	p.Spec.Caveats = ""
	p.Spec.Platforms[0].Files = nil // krew's default: everything
	p.Spec.Platforms[0].Selector = &Selector{MatchExpressions: []Requirement{{Key: "os", Operator: "In", Values: []string{"linux", "darwin"}}}}
	if err := Validate(p, "demo"); err != nil {
		t.Fatal(err)
	}
}

// TestValidateRules breaks one rule of krew's at a time.
func TestValidateRules(t *testing.T) {
	tests := []struct {
		name   string
		plugin string // the name Validate is given; "demo" when empty
		mutate func(p *Plugin)
		want   string
	}{
		{name: "apiVersion", mutate: func(p *Plugin) { p.APIVersion = "krew.googlecontainertools.github.com/v1alpha1" }, want: "apiVersion"},
		{name: "kind", mutate: func(p *Plugin) { p.Kind = "Plugins" }, want: `kind "Plugins"`},
		{name: "name differs from the file", plugin: "other", want: `metadata.name "demo": the plugin (and its manifest file) is named "other"`},
		{name: "unsafe name", plugin: "de mo", mutate: func(p *Plugin) { p.Metadata.Name = "de mo" }, want: "is not allowed"},
		{name: "reserved name", plugin: "con", mutate: func(p *Plugin) { p.Metadata.Name = "con" }, want: "is not allowed"},
		{name: "no version", mutate: func(p *Plugin) { p.Spec.Version = "" }, want: "spec.version is empty"},
		{name: "version without v", mutate: func(p *Plugin) { p.Spec.Version = "1.2.3" }, want: "not a semantic version"},
		{name: "version not semver", mutate: func(p *Plugin) { p.Spec.Version = "v1.2" }, want: "not a semantic version"},
		{name: "version leading zero", mutate: func(p *Plugin) { p.Spec.Version = "v1.02.3" }, want: "not a semantic version"},
		{name: "no short description", mutate: func(p *Plugin) { p.Spec.ShortDescription = "" }, want: "spec.shortDescription is empty"},
		{name: "long short description", mutate: func(p *Plugin) { p.Spec.ShortDescription = strings.Repeat("x", 51) }, want: "51 characters, more than 50"},
		{name: "short description line break", mutate: func(p *Plugin) { p.Spec.ShortDescription = "a\nb" }, want: "line break"},
		{name: "no description", mutate: func(p *Plugin) { p.Spec.Description = " \n" }, want: "spec.description is empty"},
		{name: "long description line", mutate: func(p *Plugin) { p.Spec.Description = strings.Repeat("word ", 17) }, want: "spec.description: line 1 is longer than 80"},
		{name: "long caveats line", mutate: func(p *Plugin) { p.Spec.Caveats = "ok\n" + strings.Repeat("word ", 17) }, want: "spec.caveats: line 2"},
		{name: "no homepage", mutate: func(p *Plugin) { p.Spec.Homepage = "" }, want: "spec.homepage: empty"},
		{name: "http homepage", mutate: func(p *Plugin) { p.Spec.Homepage = "http://example.com" }, want: "not an https URL"},
		{name: "no platforms", mutate: func(p *Plugin) { p.Spec.Platforms = nil }, want: "spec.platforms is empty"},
		{name: "no uri", mutate: func(p *Plugin) { p.Spec.Platforms[0].URI = "" }, want: "spec.platforms[0]: uri: empty"},
		{name: "no sha256", mutate: func(p *Plugin) { p.Spec.Platforms[1].SHA256 = "" }, want: "spec.platforms[1]: sha256 is empty"},
		{name: "uppercase sha256", mutate: func(p *Plugin) { p.Spec.Platforms[0].SHA256 = strings.ToUpper(sha) }, want: "not 64 lowercase hexadecimal"},
		{name: "short sha256", mutate: func(p *Plugin) { p.Spec.Platforms[0].SHA256 = sha[1:] }, want: "not 64 lowercase hexadecimal"},
		{name: "no bin", mutate: func(p *Plugin) { p.Spec.Platforms[0].Bin = "" }, want: "bin is empty"},
		{name: "empty files", mutate: func(p *Plugin) { p.Spec.Platforms[0].Files = []FileOperation{} }, want: "files is empty"},
		{name: "files without from", mutate: func(p *Plugin) { p.Spec.Platforms[0].Files[1].From = "" }, want: "files[1].from is empty"},
		{name: "files without to", mutate: func(p *Plugin) { p.Spec.Platforms[0].Files[0].To = "" }, want: "files[0].to is empty"},
		{name: "files to unclean", mutate: func(p *Plugin) { p.Spec.Platforms[0].Files[0].To = "./bin/" }, want: "not a clean path"},
		{name: "no selector", mutate: func(p *Plugin) { p.Spec.Platforms[0].Selector = nil }, want: "selector: missing"},
		{name: "empty selector", mutate: func(p *Plugin) { p.Spec.Platforms[0].Selector = &Selector{} }, want: "selector: empty"},
		{name: "empty matchLabels", mutate: func(p *Plugin) { p.Spec.Platforms[0].Selector.MatchLabels = map[string]string{} }, want: "matchLabels is given but empty"},
		{name: "selector key", mutate: func(p *Plugin) { p.Spec.Platforms[0].Selector.MatchLabels["distro"] = "debian" }, want: `key "distro"`},
		{name: "selector operator", mutate: func(p *Plugin) {
			p.Spec.Platforms[0].Selector = &Selector{MatchExpressions: []Requirement{{Key: "os", Operator: "Like", Values: []string{"linux"}}}}
		}, want: "selector:"},
		{name: "selects nothing", mutate: func(p *Plugin) { p.Spec.Platforms[0].Selector.MatchLabels["os"] = "plan9" }, want: "selects none of the supported platforms"},
		{name: "overlapping selectors", mutate: func(p *Plugin) {
			p.Spec.Platforms[1].Selector = &Selector{MatchExpressions: []Requirement{{Key: "os", Operator: "In", Values: []string{"linux", "windows"}}}}
		}, want: "spec.platforms [0 1] all select os=linux arch=amd64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := valid()
			if tt.mutate != nil {
				tt.mutate(p)
			}
			name := tt.plugin
			if name == "" {
				name = "demo"
			}
			err := Validate(p, name)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestParseAndMarshal(t *testing.T) {
	p := valid()
	y, err := Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(y)
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	if !reflect.DeepEqual(got, p) {
		t.Fatalf("round trip changed the manifest:\n%s", y)
	}
	s := string(y)
	if !strings.Contains(s, "matchLabels:\n        os: linux\n        arch: amd64\n") {
		t.Errorf("matchLabels are not written os first:\n%s", s)
	}
	if !strings.Contains(s, "description: |\n    Shows a demo.\n") {
		t.Errorf("the description is not a literal block:\n%s", s)
	}

	if _, err := Parse(append(y, []byte("  colour: red\n")...)); err == nil || !strings.Contains(err.Error(), "colour") {
		t.Errorf("an unknown field: got %v, want an error naming it", err)
	}
	if _, err := Parse(append(y, []byte("---\nkind: Plugin\n")...)); err == nil {
		t.Error("two documents: got no error")
	}
	if _, err := Parse(nil); err == nil {
		t.Error("an empty manifest: got no error")
	}
}

func TestInstall(t *testing.T) {
	entries := map[string]fs.FileMode{
		"kubectl-demo":      0o755,
		"LICENSE":           0o644,
		"doc/README.md":     0o644,
		"doc/guide/one.md":  0o644,
		"scripts/a.sh":      0o755,
		"scripts/b.sh":      0o755,
		"scripts/notes.txt": 0o644,
	}
	tests := []struct {
		name  string
		files []FileOperation
		want  []string
		err   string
	}{
		{name: "everything by default", files: nil, want: []string{"LICENSE", "doc/README.md", "doc/guide/one.md", "kubectl-demo", "scripts/a.sh", "scripts/b.sh", "scripts/notes.txt"}},
		{name: "a file keeps its name", files: []FileOperation{{From: "kubectl-demo", To: "."}}, want: []string{"kubectl-demo"}},
		{name: "a file renamed", files: []FileOperation{{From: "doc/README.md", To: "README"}}, want: []string{"README"}},
		{name: "a directory", files: []FileOperation{{From: "doc", To: "."}}, want: []string{"doc/README.md", "doc/guide/one.md"}},
		{name: "a glob into a directory", files: []FileOperation{{From: "scripts/*.sh", To: "bin"}}, want: []string{"bin/a.sh", "bin/b.sh"}},
		{name: "no match", files: []FileOperation{{From: "kubectl-other", To: "."}}, err: `from "kubectl-other" matches nothing`},
		{name: "unclean to", files: []FileOperation{{From: "LICENSE", To: "a/"}}, err: "not a clean path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Install(tt.files, entries)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want an error containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(keys(got), tt.want) {
				t.Fatalf("installed %v, want %v", keys(got), tt.want)
			}
		})
	}
}

// writeTarGz writes a .tar.gz of files (name → mode) into dir and returns
// its path and sha256.
func writeTarGz(t *testing.T, dir, name string, files map[string]int64) (string, string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range keysOf(files) {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f, Mode: files[f], Size: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return p, hex.EncodeToString(sum[:])
}

func keysOf(m map[string]int64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestValidateArchives(t *testing.T) {
	dir := t.TempDir()
	linux, linuxSHA := writeTarGz(t, dir, "demo_linux_amd64.tar.gz", map[string]int64{"kubectl-demo": 0o755, "LICENSE": 0o644})
	windows, windowsSHA := writeTarGz(t, dir, "demo_windows_amd64.tar.gz", map[string]int64{"kubectl-demo.exe": 0o644, "LICENSE": 0o644})
	archives := map[string]*Archive{}
	for _, p := range []string{linux, windows} {
		a, err := ReadArchive(p)
		if err != nil {
			t.Fatal(err)
		}
		archives[a.Name] = a
	}
	if archives["demo_linux_amd64.tar.gz"].SHA256 != linuxSHA {
		t.Fatalf("ReadArchive computed %s, want %s", archives["demo_linux_amd64.tar.gz"].SHA256, linuxSHA)
	}
	ok := func() *Plugin {
		p := valid()
		p.Spec.Platforms[0].SHA256 = linuxSHA
		p.Spec.Platforms[1].SHA256 = windowsSHA
		return p
	}
	if err := ValidateArchives(ok(), archives); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		mutate   func(p *Plugin)
		archives map[string]*Archive
		want     string
	}{
		{name: "sha256 differs", mutate: func(p *Plugin) { p.Spec.Platforms[0].SHA256 = sha }, want: "spec.platforms[0]: sha256 " + sha + ", but demo_linux_amd64.tar.gz has " + linuxSHA},
		{name: "archive missing", mutate: func(p *Plugin) { p.Spec.Platforms[1].URI = "https://example.com/demo_windows_arm64.tar.gz" }, want: `spec.platforms[1]: no archive "demo_windows_arm64.tar.gz"`},
		{name: "bin not installed", mutate: func(p *Plugin) { p.Spec.Platforms[0].Bin = "demo" }, want: `bin "demo" is not among the installed files [LICENSE kubectl-demo]`},
		{name: "files entry not in the archive", mutate: func(p *Plugin) {
			p.Spec.Platforms[0].Files = append(p.Spec.Platforms[0].Files, FileOperation{From: "README.md", To: "."})
		}, want: `from "README.md" matches nothing in the archive`},
		{name: "no LICENSE", mutate: func(p *Plugin) { p.Spec.Platforms[0].Files = p.Spec.Platforms[0].Files[:1] }, want: "spec.platforms[0]: no LICENSE"},
		{name: "bin not executable", mutate: func(p *Plugin) {
			p.Spec.Platforms[0].Bin = "LICENSE"
		}, want: `bin "LICENSE" is not executable`},
		{name: "windows bin not an exe", mutate: func(p *Plugin) {
			p.Spec.Platforms[1].Bin = "LICENSE"
		}, want: `bin "LICENSE": krew runs only .exe files on Windows`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ok()
			tt.mutate(p)
			err := ValidateArchives(p, archives)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestListTarGzRefusesEscapes(t *testing.T) {
	dir := t.TempDir()
	p, _ := writeTarGz(t, dir, "bad.tar.gz", map[string]int64{"../kubectl-demo": 0o755})
	if _, err := ReadArchive(p); err == nil || !strings.Contains(err.Error(), "leaves the archive") {
		t.Fatalf("got %v, want an error for an entry outside the archive", err)
	}
}
