package version

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	const rev = "3599f69d0c6d2d2a9f3e1c7b2d6a4b8e9f0a1b2c"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{
			{Key: "-trimpath", Value: "true"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: "2026-11-23T20:00:00Z"},
			{Key: "vcs.modified", Value: modified},
		}
	}
	tests := []struct {
		name                    string
		version, commit         string
		bi                      *debug.BuildInfo
		wantVersion, wantCommit string
	}{
		{
			name:    "no build information",
			version: "dev", commit: "unknown",
			wantVersion: "dev", wantCommit: "unknown",
		},
		{
			name:    "go install module@v1.2.3",
			version: "dev", commit: "unknown",
			bi:          &debug.BuildInfo{Main: debug.Module{Path: "github.com/kubectl-informer/kubectl-informer", Version: "v1.2.3"}},
			wantVersion: "v1.2.3", wantCommit: "unknown",
		},
		{
			name:    "go build in a clean checkout",
			version: "dev", commit: "unknown",
			bi:          &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261123200000-3599f69d0c6d"}, Settings: vcs("false")},
			wantVersion: "v0.0.0-20261123200000-3599f69d0c6d", wantCommit: rev,
		},
		{
			name:    "go build in a modified checkout",
			version: "dev", commit: "unknown",
			bi:          &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261123200000-3599f69d0c6d+dirty"}, Settings: vcs("true")},
			wantVersion: "v0.0.0-20261123200000-3599f69d0c6d+dirty", wantCommit: rev + "-dirty",
		},
		{
			name:    "go build without VCS information",
			version: "dev", commit: "unknown",
			bi:          &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			wantVersion: "dev", wantCommit: "unknown",
		},
		{
			name:    "ldflags win over build information",
			version: "v1.2.3", commit: "abc1234",
			bi:          &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261123200000-3599f69d0c6d+dirty"}, Settings: vcs("true")},
			wantVersion: "v1.2.3", wantCommit: "abc1234",
		},
		{
			name:    "a stamped version with the recorded commit",
			version: "v1.2.3", commit: "unknown",
			bi:          &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("false")},
			wantVersion: "v1.2.3", wantCommit: rev,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, c := resolve(tt.version, tt.commit, tt.bi)
			if v != tt.wantVersion || c != tt.wantCommit {
				t.Errorf("resolve = %q, %q; want %q, %q", v, c, tt.wantVersion, tt.wantCommit)
			}
		})
	}
}
