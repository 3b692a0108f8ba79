package indexers

import (
	"slices"
	"testing"

	"github.com/google/cel-go/cel"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// TestKubernetesBaseEnvironmentParity checks that kubernetesEnvOptions
// declares what Kubernetes' base environment declares, at several
// compatibility versions: the same libraries and the same function
// overloads. It fails when a new release of k8s.io/apiserver changes the
// base environment; update kubernetesEnvOptions to match.
func TestKubernetesBaseEnvironmentParity(t *testing.T) {
	for _, v := range []string{"1.28", "1.30", "1.33", "1.36", "1.37"} {
		t.Run(v, func(t *testing.T) {
			ver := version.MustParse(v + ".0")
			want := environment.MustBaseEnvSet(ver).NewExpressionsEnv()
			got, err := cel.NewEnv(kubernetesEnvOptions(ver)...)
			if err != nil {
				t.Fatal(err)
			}
			gotLibs, wantLibs := got.Libraries(), want.Libraries()
			slices.Sort(gotLibs)
			slices.Sort(wantLibs)
			if !slices.Equal(gotLibs, wantLibs) {
				t.Errorf("libraries:\n%q\nwant:\n%q", gotLibs, wantLibs)
			}
			gotFns, wantFns := overloads(got), overloads(want)
			if !slices.Equal(gotFns, wantFns) {
				for _, o := range wantFns {
					if !slices.Contains(gotFns, o) {
						t.Errorf("missing overload %s", o)
					}
				}
				for _, o := range gotFns {
					if !slices.Contains(wantFns, o) {
						t.Errorf("extra overload %s", o)
					}
				}
			}
		})
	}
}

func overloads(env *cel.Env) []string {
	var ids []string
	for name, fn := range env.Functions() {
		for _, o := range fn.OverloadDecls() {
			ids = append(ids, name+"/"+o.ID())
		}
	}
	slices.Sort(ids)
	return ids
}

func TestDefaultCompatibilityVersion(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	if want := environment.DefaultCompatibilityVersion(); !env.version.EqualTo(want) {
		t.Errorf("compatibility version %v, want %v", env.version, want)
	}
	if _, err := NewEnv(WithCompatibilityVersion(version.MajorMinor(1, 37))); err != nil {
		t.Errorf("NewEnv at 1.37: %v", err)
	}
}

func TestSuggest(t *testing.T) {
	candidates := []string{"status", "spec", "metadata", "kind", "apiVersion"}
	for word, want := range map[string]string{
		"staus":    "status",
		"stauts":   "status",
		"sepc":     "spec", // a transposition is one edit
		"kidn":     "kind",
		"sp":       "", // short words allow one edit only
		"metdata":  "metadata",
		"kinds":    "kind",
		"zzzzzzzz": "",
	} {
		got, ok := suggest(word, candidates)
		if !ok {
			got = ""
		}
		if got != want {
			t.Errorf("suggest(%q) = %q, want %q", word, got, want)
		}
	}
}

func TestSchemaEnvIsCached(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	s := objectMetaSchema()
	a, err := env.schemaEnv(s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := env.schemaEnv(s)
	if err != nil || a != b {
		t.Errorf("schemaEnv built twice for the same schema")
	}
}

// TestCostTracking checks which programs track their cost: those whose
// estimate, with every object bounded by the API server's request size,
// can exceed the limit, and only those.
func TestCostTracking(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	for expr, want := range map[string]bool{
		`object.metadata.namespace`:                                               false,
		`object.status.?hostIP.orValue("")`:                                       false,
		`string(object.spec.?hostNetwork.orValue(false))`:                         false,
		`object.status.phase == each`:                                             false,
		`each.?restartCount.orValue(0) > 3`:                                       false,
		`object.metadata.name.matches("^web-[a-z]+$")`:                            false,
		`object.metadata.?ownerReferences.orValue([]).filter(r, r.controller)`:    true,
		`object.spec.containers.all(c, c.name != "")`:                             true,
		`object.spec.containers.exists(c, object.spec.containers.all(d, d == c))`: true,
	} {
		p, err := env.CompileEach(expr, KindValue, "test")
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if p.tracked != want {
			t.Errorf("%s: tracked = %v, want %v", expr, p.tracked, want)
		}
	}
}

// TestForgetSchemas checks that the environments built for schemas are
// kept until ForgetSchemas, and that compiling against a schema works
// again after it.
func TestForgetSchemas(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	schema := func() *spec.Schema {
		s := spec.StringProperty()
		return &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{"status": {SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{"phase": *s}}}}}}
	}
	cached := func() int {
		env.mu.Lock()
		defer env.mu.Unlock()
		return len(env.schemaEnvs)
	}
	for load := range 3 {
		// Each load resolves its schemas afresh, as the exporter does.
		s := schema()
		for range 2 {
			if _, err := env.CompileWithSchema(`object.status.phase == "Running"`, KindPredicate, "test", s); err != nil {
				t.Fatal(err)
			}
		}
		if n := cached(); n != 1 {
			t.Fatalf("load %d: %d schema environments cached, want the one of its schema", load, n)
		}
		if _, err := env.CompileWithSchema(`object.status.phaze == "Running"`, KindPredicate, "test", s); err == nil {
			t.Fatalf("load %d: a field the schema lacks compiled", load)
		}
		env.ForgetSchemas()
		if n := cached(); n != 0 {
			t.Fatalf("load %d: %d schema environments left after ForgetSchemas", load, n)
		}
	}
}
