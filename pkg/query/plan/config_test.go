package plan

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/query"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/internal/fixture"
)

func TestParseConfig(t *testing.T) {
	good := `apiVersion: kubectl-informer.io/v1alpha1
kind: QueryConfig
indexes:
  pods:
    byNode: object.spec.nodeName
    byImage: object.spec.containers.map(c, c.image)
defaults:
  syncTimeout: 5m
  output: wide
`
	c, err := ParseConfig("c.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if c.SyncTimeout(time.Minute) != 5*time.Minute || c.Defaults.Output != "wide" || c.Path() != "c.yaml" {
		t.Errorf("defaults %+v", c.Defaults)
	}
	ix := c.ResourceIndexes()["pods"]
	if len(ix) != 2 || ix[0].Name != "byImage" || ix[1].Expr != "object.spec.nodeName" {
		t.Errorf("indexes %v", ix)
	}

	bad := []struct{ yaml, want string }{
		{"", "the config is empty"},
		{"apiVersion: v1\nkind: QueryConfig\n", `apiVersion "v1"`},
		{"apiVersion: kubectl-informer.io/v1alpha1\nkind: QueryConfig\nindexs: {}\n", `unknown field "indexs"`},
		{"apiVersion: kubectl-informer.io/v1alpha1\nkind: QueryConfig\ndefaults: {syncTimeout: -1s}\n", "syncTimeout must be positive"},
		{"apiVersion: kubectl-informer.io/v1alpha1\nkind: QueryConfig\nindexes: {pods: {byNode: \"\"}}\n", `index "byNode" needs a name and an expression`},
		{"apiVersion: kubectl-informer.io/v1alpha1\nkind: QueryConfig\ndefaults: {syncTimeout: soon}\n", "c.yaml:"},
	}
	for _, b := range bad {
		if _, err := ParseConfig("c.yaml", []byte(b.yaml)); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("ParseConfig(%q) error %v, want %q", b.yaml, err, b.want)
		}
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	if c, err := LoadConfig(filepath.Join(dir, "none.yaml"), true); c != nil || err != nil {
		t.Errorf("optional missing file: %v, %v", c, err)
	}
	if _, err := LoadConfig(filepath.Join(dir, "none.yaml"), false); err == nil {
		t.Error("a missing --config file must be an error")
	}
	t.Setenv("XDG_CONFIG_HOME", dir)
	if got := DefaultConfigPath(); got != filepath.Join(dir, "kubectl-informer", "config.yaml") {
		t.Errorf("DefaultConfigPath() = %q", got)
	}
	var nilConfig *Config
	if nilConfig.ResourceIndexes() != nil || nilConfig.Path() != "" || nilConfig.SyncTimeout(time.Second) != time.Second {
		t.Error("a nil Config must behave as no config")
	}
}

func TestCompileConfigIndexes(t *testing.T) {
	env := fixture.Env(t)
	_, err := Compile(env, Request{ConfigPath: "c.yaml", ResourceIndexes: map[string][]NamedExpr{"pods": {{"byNode", "object.spec.nodeName +"}}}})
	if err == nil || !strings.Contains(err.Error(), `index "byNode" of pods in c.yaml`) {
		t.Errorf("error %v; want one naming the config's index", err)
	}
	p, err := Compile(env, Request{ResourceIndexes: map[string][]NamedExpr{"pods": {{"byNode", "object.spec.nodeName"}}}, By: []query.Selector{{Index: "byNode", Value: "n1"}}})
	if err != nil {
		t.Fatalf("--by on a config index: %v", err)
	}
	if !p.MetadataOnly() {
		t.Error("config indexes of other resources must not force full objects")
	}
}

// TestParseConfigErrors checks that every mistake of a config file is
// reported at its line, with the field meant, and that the exporter's
// config is named as such.
func TestParseConfigErrors(t *testing.T) {
	typos := `apiVersion: kubectl-informer.io/v1alpha1
kind: QueryConfig
indexes:
  pods:
    byNode: object.spec.nodeName
defaults:
  outptu: wide
  syncTimout: 5m
`
	_, err := ParseConfig("typos.yaml", []byte(typos))
	want := "typos.yaml:7: unknown field \"outptu\" (did you mean \"output\"?)\n" +
		"typos.yaml:8: unknown field \"syncTimout\" (did you mean \"syncTimeout\"?)"
	if err == nil || err.Error() != want {
		t.Errorf("two typos: error\n%v\nwant\n%s", err, want)
	}

	exporter := `apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
commonLabels:
  cluster: demo
resources:
- resource: pods
`
	_, err = ParseConfig("exporter.yaml", []byte(exporter))
	want = "exporter.yaml:2: this is an ExporterConfig, the config of the exporter; a query config has kind: QueryConfig"
	if err == nil || err.Error() != want {
		t.Errorf("an ExporterConfig: error\n%v\nwant\n%s", err, want)
	}

	shapes := `apiVersion: kubectl-informer.io/v1alpha1
kind: QueryConfig
indexes:
  pods: [object.spec.nodeName]
defaults:
  syncTimeout: soon
`
	_, err = ParseConfig("shapes.yaml", []byte(shapes))
	want = "shapes.yaml:4: indexes.pods must be a mapping, not a list"
	if err == nil || err.Error() != want {
		t.Errorf("a list for a mapping: error\n%v\nwant\n%s", err, want)
	}
	_, err = ParseConfig("d.yaml", []byte("apiVersion: kubectl-informer.io/v1alpha1\nkind: QueryConfig\ndefaults:\n  syncTimeout: soon\n"))
	want = `d.yaml:4: defaults.syncTimeout "soon" is not a duration, such as 5m or 90s`
	if err == nil || err.Error() != want {
		t.Errorf("a bad duration: error\n%v\nwant\n%s", err, want)
	}
}

// TestConfigIndexLine checks that an index expression of the config that
// does not compile is reported with the file and line that define it.
func TestConfigIndexLine(t *testing.T) {
	c, err := ParseConfig("c.yaml", []byte(`apiVersion: kubectl-informer.io/v1alpha1
kind: QueryConfig
indexes:
  nodes:
    byZone: object.metadata.labels["zone"]
  pods:
    byNode: |
      object.spec.nodeName +
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.IndexLine("pods", "byNode"); got != 8 {
		t.Errorf("IndexLine(pods, byNode) = %d, want 8", got)
	}
	_, err = Compile(fixture.Env(t), Request{ConfigPath: c.Path(), ConfigLine: c.IndexLine, ResourceIndexes: c.ResourceIndexes()})
	if err == nil || !strings.Contains(err.Error(), `invalid index "byNode" of pods in c.yaml:8 expression`) {
		t.Errorf("error %v; want one naming c.yaml:8", err)
	}
}
