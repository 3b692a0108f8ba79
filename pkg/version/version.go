// Package version holds the build's version information. Version and Commit
// are stamped at build time with
//
//	-ldflags "-X github.com/kubectl-informer/kubectl-informer/pkg/version.Version=v1.2.3
//	          -X github.com/kubectl-informer/kubectl-informer/pkg/version.Commit=abc1234"
//
// and read "dev" and "unknown" otherwise.
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
	// stamped and not recorded by the Go toolchain.
	Commit = "unknown"
)

// Info describes the running binary.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the version information of the running binary. When Commit was
// not stamped it falls back to the VCS revision the Go toolchain recorded.
func Get() Info {
	commit := Commit
	if commit == "unknown" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" && s.Value != "" {
					commit = s.Value
				}
			}
		}
	}
	return Info{
		Version:   Version,
		Commit:    commit,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// String formats the information on one line.
func (i Info) String() string {
	return fmt.Sprintf("kubectl-informer %s (commit %s, %s, %s)", i.Version, i.Commit, i.GoVersion, i.Platform)
}
