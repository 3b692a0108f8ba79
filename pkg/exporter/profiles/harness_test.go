package profiles_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-informer/kubectl-informer/internal/seriesset"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/internal/exportertest"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// render loads the kube-state-metrics profile's config file for resource
// as the exporter loads a config (parsed, validated, every expression
// compiled), with the families --resources naming it serves (not the
// opt-in ones: see optin_test.go), gives objs to its engine as the informer delivers them (typed
// API objects, as a typed informer caches them), and returns the
// exposition the engine serves. The exposition must pass promlint.
func render(t *testing.T, resource string, objs ...any) string {
	t.Helper()
	return renderWith(t, resource, "", "", objs...)
}

// renderWith is render with the label and annotation allowlists given as
// kube-state-metrics' --metric-labels-allowlist and
// --metric-annotations-allowlist.
func renderWith(t *testing.T, resource, labels, annotations string, objs ...any) string {
	t.Helper()
	files, err := exporter.Selection{Resources: []string{resource}}.Files(profiles.KubeStateMetrics)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("the profile has no file for %s", resource)
	}
	f := files[0]
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	c, err := exporter.Compile(f.Path, f.Data, env)
	if err != nil {
		t.Fatalf("loading %s: %v", f.Path, err)
	}
	l, err := exporter.ParseAllowlist(labels)
	if err != nil {
		t.Fatal(err)
	}
	a, err := exporter.ParseAllowlist(annotations)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetAllowlists(l, a); err != nil {
		t.Fatal(err)
	}
	// The profile's expressions never fail on a valid object, and the
	// exposition passes promlint but for its advice on names:
	// kube-state-metrics' own names are the specification.
	return exportertest.Exposition(t, c, objs...)
}

// expectFamilies checks that every family of want (exposition text with
// its # HELP and # TYPE lines) is in got with the same HELP text, TYPE and
// series: the same set of label sets (in any label order) with the same
// values. A label written with an empty value and one not written differ,
// as they do in kube-state-metrics' text. A family of want without samples must
// be absent from got or have none. Families of got that want does not name
// are not checked.
func expectFamilies(t *testing.T, got, want string) {
	t.Helper()
	g := parseExposition(t, "got", got)
	w := parseExposition(t, "want", want)
	for name, wf := range w {
		gf, ok := g[name]
		if !ok {
			if len(wf.Series) > 0 {
				t.Errorf("family %s: missing from the exposition", name)
			}
			continue
		}
		if gf.Help != wf.Help {
			t.Errorf("family %s: HELP %q, want %q", name, gf.Help, wf.Help)
		}
		if gf.Type != wf.Type {
			t.Errorf("family %s: TYPE %s, want %s", name, gf.Type, wf.Type)
		}
		if diff := cmp.Diff(wf.Series, gf.Series); diff != "" {
			t.Errorf("family %s: series differ (-want +got):\n%s", name, diff)
		}
	}
}

func parseExposition(t *testing.T, what, text string) map[string]seriesset.Family {
	t.Helper()
	fams, err := seriesset.ParseExact(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parsing %s: %v\n%s", what, err, text)
	}
	return fams
}

// expectWhole is expectFamilies where want is the whole exposition: a
// family of got with series that want does not name is an error too.
func expectWhole(t *testing.T, got, want string) {
	t.Helper()
	expectFamilies(t, got, want)
	w := parseExposition(t, "want", want)
	for name, gf := range parseExposition(t, "got", got) {
		if _, ok := w[name]; !ok && len(gf.Series) > 0 {
			t.Errorf("family %s: %d series the test does not expect:\n%s", name, len(gf.Series), strings.Join(gf.Series, "\n"))
		}
	}
}
