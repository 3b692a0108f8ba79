package indexers_test

import "testing"

func TestDescending(t *testing.T) {
	env := newEnv(t)
	for expr, want := range map[string]struct {
		inner string
		ok    bool
	}{
		"-object.metadata.name":               {" object.metadata.name", true},
		" -object.metadata.creationTimestamp": {"  object.metadata.creationTimestamp", true},
		"-(object.a + object.b)":              {" (object.a + object.b)", true},
		"-object.a + object.b":                {"-object.a + object.b", false},
		"object.a":                            {"object.a", false},
		"-1":                                  {"-1", false},
		"-(":                                  {"-(", false},
	} {
		inner, ok := env.Descending(expr)
		if inner != want.inner || ok != want.ok {
			t.Errorf("Descending(%q) = %q, %v; want %q, %v", expr, inner, ok, want.inner, want.ok)
		}
	}
}
