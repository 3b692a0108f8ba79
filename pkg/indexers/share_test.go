package indexers

import "testing"

// TestSharedPrograms: with WithSharedPrograms, an expression compiled again
// reuses the first program, each caller with its own context and its own
// copy, until ForgetSchemas; without it, each compilation is its own.
func TestSharedPrograms(t *testing.T) {
	shared, err := NewEnv(WithSharedPrograms())
	if err != nil {
		t.Fatal(err)
	}
	a, err := shared.Compile("object.metadata.name", KindValue, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := shared.Compile("object.metadata.name", KindValue, "b")
	if err != nil {
		t.Fatal(err)
	}
	if a == b || a.plans != b.plans {
		t.Errorf("the second compilation: a copy sharing the program, want %p != %p and the same program", a, b)
	}
	if a.Context() != "a" || b.Context() != "b" {
		t.Errorf("contexts %q and %q, want a and b", a.Context(), b.Context())
	}
	each, err := shared.CompileEach("object.metadata.name", KindValue, "each")
	if err != nil {
		t.Fatal(err)
	}
	if each.plans == a.plans {
		t.Error("CompileEach reused Compile's program; each is declared only in its environment")
	}
	n, err := shared.Compile("object.metadata.name", KindNumber, "n")
	if err == nil && n.plans == a.plans {
		t.Error("a program of another kind was reused")
	}
	shared.ForgetSchemas()
	c, err := shared.Compile("object.metadata.name", KindValue, "c")
	if err != nil {
		t.Fatal(err)
	}
	if c.plans == a.plans {
		t.Error("after ForgetSchemas, the program was reused")
	}
	plain, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	d, _ := plain.Compile("object.metadata.name", KindValue, "d")
	e, _ := plain.Compile("object.metadata.name", KindValue, "e")
	if d.plans == e.plans {
		t.Error("without WithSharedPrograms, the program was reused")
	}
	if v, err := b.Value(map[string]any{"metadata": map[string]any{"name": "x"}}); err != nil || v != "x" {
		t.Errorf("the shared program evaluates to %v, %v; want x", v, err)
	}
}
