// Package version holds the build's version information. Version and Commit
// are stamped at build time, as make build and make dist do, with
//
//	-ldflags "-X github.com/kubectl-informer/kubectl-informer/pkg/version.Version=v1.2.3
//	          -X github.com/kubectl-informer/kubectl-informer/pkg/version.Commit=abc1234"
//
// Unstamped, they come from what the Go toolchain recorded in the binary:
// the module version that `go install …@v1.2.3` built, and the VCS revision
// of a build from a git checkout. They read "dev" and "unknown" when neither
// says.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set by -ldflags at build time.
var (
	// Version is the release version, "dev" when not stamped.
	Version = "dev"
	// Commit is the git commit the binary was built from, "unknown" when not
	// stamped.
	Commit = "unknown"
)

// Info describes the running binary.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the version information of the running binary.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	v, c := resolve(Version, Commit, bi)
	return Info{
		Version:   v,
		Commit:    c,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// resolve returns the version and commit of a binary stamped with version
// and commit ("dev" and "unknown" when not) whose build information is bi
// (nil when it has none). A stamped value wins. Otherwise the version is
// the main module's, as `go install module@v1.2.3` records it ("(devel)" for
// a build of a checkout without VCS information means none), and the commit
// is the recorded VCS revision, with "-dirty" when the work tree had
// changes, as `git describe --dirty` marks them.
func resolve(version, commit string, bi *debug.BuildInfo) (string, string) {
	if bi == nil {
		return version, commit
	}
	if version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		version = bi.Main.Version
	}
	if commit == "unknown" {
		var revision, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if revision != "" {
			commit = revision
			if modified == "true" {
				commit += "-dirty"
			}
		}
	}
	return version, commit
}

// String formats the information on one line.
func (i Info) String() string {
	return fmt.Sprintf("kubectl-informer %s (commit %s, %s, %s)", i.Version, i.Commit, i.GoVersion, i.Platform)
}
