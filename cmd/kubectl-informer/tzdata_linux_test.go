package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// hostZoneDirs are the directories where Go looks for the time zone
// database on Linux, after $ZONEINFO and before the copy embedded by
// time/tzdata: time's platformZoneSources, then the zoneinfo.zip of the
// Go installation that built the binary (which a test binary knows of).
func hostZoneDirs() []string {
	dirs := []string{"/usr/share/zoneinfo", "/usr/share/lib/zoneinfo", "/usr/lib/locale/TZ", "/etc/zoneinfo"}
	if goroot := runtime.GOROOT(); goroot != "" { //nolint:staticcheck // SA1019: where time looks, as time does
		dirs = append(dirs, filepath.Join(goroot, "lib", "time"))
	}
	return dirs
}

// hideZonesEnv tells the test binary that it runs in its own mount
// namespace, where it hides the host's time zone database.
const hideZonesEnv = "KUBECTL_INFORMER_TEST_HIDE_ZONES"

// TestTimeZonesWithoutHostDatabase runs this package's test binary, which
// links what the command links, in a mount namespace of its own, where an
// empty directory is mounted over each of the host's time zone
// directories (and over the Go installation's) and $ZONEINFO is unset, as in an image without
// /usr/share/zoneinfo: a CronJob's time zone must still resolve there,
// from the database embedded in the binary.
func TestTimeZonesWithoutHostDatabase(t *testing.T) {
	if os.Getenv(hideZonesEnv) == "1" {
		resolveWithoutHost(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestTimeZonesWithoutHostDatabase$", "-test.v") //nolint:gosec // G204: this test's own binary
	cmd.Env = append(withoutEnv(withoutEnv(os.Environ(), "ZONEINFO"), "GOROOT"), hideZonesEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	switch {
	case err != nil && !errors.As(err, &exitErr) && (errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL)):
		t.Skipf("not checked: a mount namespace needs CAP_SYS_ADMIN (run as root): %v", err)
	case err != nil:
		t.Fatalf("without the host's time zone database: %v\n%s", err, out)
	}
	t.Logf("without the host's time zone database:\n%s", out)
}

// resolveWithoutHost hides the host's time zone directories from this
// process, checks that they are hidden, and resolves a zone as a CronJob's
// schedule does.
func resolveWithoutHost(t *testing.T) {
	empty := t.TempDir()
	dirs := hostZoneDirs()
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		if err := syscall.Mount(empty, dir, "", syscall.MS_BIND, ""); err != nil {
			t.Fatalf("hiding %s: %v", dir, err)
		}
	}
	for _, dir := range dirs {
		for _, name := range []string{"Europe/Paris", "zoneinfo.zip"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				t.Fatalf("%s/%s is still readable: the host's database is not hidden", dir, name)
			}
		}
	}
	if z, ok := os.LookupEnv("ZONEINFO"); ok {
		t.Fatalf("ZONEINFO is set (%q)", z)
	}
	if _, err := time.LoadLocation("Europe/Paris"); err != nil {
		t.Fatalf("time.LoadLocation: %v", err)
	}
	// The functions of kube_cronjob_next_schedule_time and
	// kube_cronjob_schedule_invalid, on a CronJob's time zone. 03:00 in
	// Paris on 1 January (winter time, UTC+1) is 02:00 UTC.
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	const expr = `isCronSchedule("CRON_TZ=Europe/Paris 0 3 * * *") &&
		cronNext("CRON_TZ=Europe/Paris 0 3 * * *", timestamp("2026-01-01T00:00:00Z")) == timestamp("2026-01-01T02:00:00Z")`
	p, err := env.Compile(expr, indexers.KindPredicate, "the test's expression")
	if err != nil {
		t.Fatal(err)
	}
	ok, err := p.Match(&unstructured.Unstructured{Object: map[string]any{"kind": "CronJob"}})
	if err != nil || !ok {
		t.Fatalf("%s: %v, %v; want true", expr, ok, err)
	}
}

// withoutEnv returns env without the variable name.
func withoutEnv(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if len(kv) <= len(name) || kv[:len(name)+1] != name+"=" {
			out = append(out, kv)
		}
	}
	return out
}
