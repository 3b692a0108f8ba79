// Command dist builds the release of kubectl-informer: for each platform a
// CGO-free, version-stamped binary packed with the completion helper,
// LICENSE and README.md into a reproducible .tar.gz; checksums.txt; and
// plugin.yaml, the krew manifest of the release, rendered from the root
// plugin.yaml with each archive's uri and sha256 and checked against krew's
// rules and the archives themselves.
//
//	go run ./hack/dist --version v1.2.3 --ldflags "$(LDFLAGS)" [--platforms linux/amd64,darwin/arm64] [--out dist]
//
// `make dist VERSION=v1.2.3` runs it with the Makefile's LDFLAGS.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kubectl-informer/kubectl-informer/hack/dist/krew"
)

// defaultMTime is the time of every archive entry unless SOURCE_DATE_EPOCH
// gives another.
var defaultMTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

type options struct {
	version   string
	platforms string
	out       string
	ldflags   string
	manifest  string
	root      string
}

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "release version, a semantic version with the prefix v (required)")
	flag.StringVar(&o.platforms, "platforms", "", "os/arch list, comma-separated (default: every released platform)")
	flag.StringVar(&o.out, "out", "dist", "output directory")
	flag.StringVar(&o.ldflags, "ldflags", "", "go build -ldflags, stamping the version into pkg/version")
	flag.StringVar(&o.manifest, "manifest", "plugin.yaml", "the krew manifest whose metadata and texts the release manifest takes")
	flag.StringVar(&o.root, "root", ".", "the module's root directory")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "dist: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "dist: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, stdout, stderr io.Writer) error {
	if !krew.ValidVersion(o.version) {
		return fmt.Errorf("--version %q: want a semantic version with the prefix v, e.g. make dist VERSION=v1.2.3", o.version)
	}
	platforms, err := ParsePlatforms(o.platforms)
	if err != nil {
		return err
	}
	mtime, err := sourceDate()
	if err != nil {
		return err
	}
	base, err := krew.Load(o.manifest)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil { //nolint:gosec // G301: release files are published, readable by all
		return err
	}
	if err := removeOld(o.out); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "kubectl-informer-dist-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()

	var built []Built
	for _, p := range platforms {
		_, _ = fmt.Fprintf(stderr, "building %s\n", p)
		bin := filepath.Join(work, p.OS+"_"+p.Arch, BinaryName(p.OS))
		if err := goBuild(ctx, o.root, bin, p, o.ldflags, stderr); err != nil {
			return err
		}
		a, err := PackArchive(o.out, o.version, p, Entries(p.OS, bin, o.root), mtime)
		if err != nil {
			return err
		}
		built = append(built, a)
	}

	manifest := Render(base, o.version, built)
	if err := check(manifest, base.Metadata.Name, o.out, built); err != nil {
		return fmt.Errorf("the release manifest is not valid:\n%w", err)
	}
	y, err := krew.Marshal(manifest)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, "checksums.txt"), Checksums(built), 0o644); err != nil { //nolint:gosec // G306: release files are published, readable by all
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, "plugin.yaml"), y, 0o644); err != nil { //nolint:gosec // G306: release files are published, readable by all
		return err
	}
	for _, a := range built {
		_, _ = fmt.Fprintln(stdout, filepath.Join(o.out, a.Name))
	}
	_, _ = fmt.Fprintln(stdout, filepath.Join(o.out, "checksums.txt"))
	_, _ = fmt.Fprintln(stdout, filepath.Join(o.out, "plugin.yaml"))
	return nil
}

// check validates the manifest against krew's rules and the archives as
// written to dir.
func check(p *krew.Plugin, name, dir string, built []Built) error {
	archives := map[string]*krew.Archive{}
	for _, a := range built {
		ar, err := krew.ReadArchive(filepath.Join(dir, a.Name))
		if err != nil {
			return err
		}
		archives[a.Name] = ar
	}
	return errors.Join(krew.Validate(p, name), krew.ValidateArchives(p, archives))
}

// goBuild builds the plugin for p into out: no cgo, no local paths.
func goBuild(ctx context.Context, root, out string, p Platform, ldflags string, stderr io.Writer) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", ldflags, "-o", out, "./cmd/kubectl-informer") //nolint:gosec // G204: go build of this release, with its version flags
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch)
	cmd.Stdout = stderr
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for %s: %w", p, err)
	}
	return nil
}

// removeOld removes what an earlier run wrote to dir, so that dir holds
// exactly one release.
func removeOld(dir string) error {
	old, err := filepath.Glob(filepath.Join(dir, project+"_*.tar.gz"))
	if err != nil {
		return err
	}
	old = append(old, filepath.Join(dir, "checksums.txt"), filepath.Join(dir, "plugin.yaml"))
	for _, f := range old {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// sourceDate is SOURCE_DATE_EPOCH when set, else defaultMTime.
func sourceDate() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return defaultMTime, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", s, err)
	}
	return time.Unix(n, 0).UTC(), nil
}
