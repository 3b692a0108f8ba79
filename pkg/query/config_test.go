package query

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	env := testEnv(t)
	_, err := Compile(env, Request{ConfigPath: "c.yaml", ResourceIndexes: map[string][]NamedExpr{"pods": {{"byNode", "object.spec.nodeName +"}}}})
	if err == nil || !strings.Contains(err.Error(), `index "byNode" of pods in c.yaml`) {
		t.Errorf("error %v; want one naming the config's index", err)
	}
	p, err := Compile(env, Request{ResourceIndexes: map[string][]NamedExpr{"pods": {{"byNode", "object.spec.nodeName"}}}, By: []Selector{{"byNode", "n1"}}})
	if err != nil {
		t.Fatalf("--by on a config index: %v", err)
	}
	if !p.MetadataOnly() {
		t.Error("config indexes of other resources must not force full objects")
	}
}
