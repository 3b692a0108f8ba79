package watch_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestQueryWatchEmpty checks that query --watch prints an answer that
// became empty, in each form, after the last match is deleted or leaves
// the selectors or --where: "No resources found in NS namespace." on stderr
// for a table and for groups, as the query without --watch says, and for
// every form an empty line on stdout that sets the new answer apart.
func TestQueryWatchEmpty(t *testing.T) {
	ns := cluster.NewNamespace(t, "query-watch-empty")
	noResources := "No resources found in " + ns + " namespace.\n"
	tests := []struct {
		name string
		args []string
		// change makes the answer empty.
		change func(t *testing.T)
		// first is what stdout shows first.
		first string
	}{{
		name:  "table",
		args:  []string{"--no-headers"},
		first: "deleted",
	}, {
		name:  "count and groups",
		args:  []string{"-l", "app=web", "--count", "--group-by", "object.metadata.labels.app"},
		first: "web",
	}, {
		name:  "label selector",
		args:  []string{"-l", "x=1"},
		first: "relabelled",
	}, {
		name:  "where and names",
		args:  []string{"--where", `object.metadata.labels.?tier.orValue("") == "web"`, "-o", "name"},
		first: "pod/tier\n",
	}}
	deleted := cluster.CreatePod(t, ns, "deleted", map[string]string{"app": "web"})
	relabelled := cluster.CreatePod(t, ns, "relabelled", map[string]string{"x": "1"})
	tier := cluster.CreatePod(t, ns, "tier", map[string]string{"tier": "web"})
	tests[0].change = func(t *testing.T) { deletePod(t, deleted) }
	tests[1].change = func(*testing.T) {} // the same deletion
	tests[2].change = func(t *testing.T) { setLabel(t, relabelled, "x", "2") }
	tests[3].change = func(t *testing.T) { setLabel(t, tier, "tier", "db") }
	// Only "deleted" has the label app, only "relabelled" x=1, only
	// "tier" the label tier: narrow the table to "deleted".
	tests[0].args = append(tests[0].args, "-l", "app=web")

	runs := make([]*framework.Run, len(tests))
	for i, tt := range tests {
		runs[i] = cluster.StartPlugin(t, append([]string{"query", "pods", "-n", ns, "--watch"}, tt.args...)...)
	}
	first := make([]string, len(tests))
	for i, tt := range tests {
		r := runs[i]
		framework.Eventually(t, tt.name+" shows its first answer", func() bool { return strings.Contains(r.Out.String(), tt.first) })
		first[i] = r.Out.String()
		if r.ErrOut.String() != "" {
			t.Errorf("%s: stderr %q before any change", tt.name, r.ErrOut)
		}
	}
	for _, tt := range tests {
		tt.change(t)
	}
	for i, tt := range tests {
		r := runs[i]
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Every output says so of an answer that became empty, -o
			// name too, where kubectl get -o name says nothing.
			wantErr := noResources
			shown := func() bool { return strings.HasSuffix(r.Out.String(), "\n\n") && r.ErrOut.String() == wantErr }
			for deadline := time.Now().Add(framework.HangTimeout); !shown(); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("timed out after %s waiting for the empty answer\nstdout:\n%q\nstderr:\n%q", framework.HangTimeout, r.Out, r.ErrOut)
				}
			}
			if code := r.Stop(t); code != 0 {
				t.Errorf("exit %d after cancel", code)
			}
			// Answers in between (the deletion first sets
			// deletionTimestamp) may come before the empty one.
			if got := r.Out.String(); !strings.HasPrefix(got, first[i]) {
				t.Errorf("stdout %q does not begin with the first answer %q", got, first[i])
			}
		})
	}
}
