package indexers

import "testing"

func TestReadsOnlyMetadata(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		expr string
		want bool
	}{
		{`object.metadata.name.startsWith("web")`, true},
		{`object.metadata.labels["app"] == "web"`, true},
		{`has(object.metadata.labels) && object.kind == "Pod"`, true},
		{`object.metadata.ownerReferences.exists(o, o.kind == "ReplicaSet")`, true},
		{`get("nodes", object.metadata.name) != null`, true},
		{`object.status.phase == "Running"`, false},
		{`has(object.spec.nodeName)`, false},
		{`object["metadata"].name == "x"`, false},
		{`size(object) > 2`, false},
		{`[object][0].metadata.name == "x"`, false},
		{`object.metadata.name == "a" || object.spec.x == 1`, false},
		{`1 == 1`, true},
	}
	for _, tt := range tests {
		prog, err := env.Compile(tt.expr, KindValue, "test")
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		if got := prog.ReadsOnlyMetadata(); got != tt.want {
			t.Errorf("ReadsOnlyMetadata(%s) = %v, want %v", tt.expr, got, tt.want)
		}
	}
}

func TestObjectPaths(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		expr string
		want string // "<everything>" for nil
	}{
		{`object.status.phase == "Running"`, "status.phase"},
		{`has(object.spec.nodeName) ? object.spec.nodeName : ""`, "spec.nodeName"},
		{`object.spec.?nodeName.orValue("")`, "spec.nodeName"},
		{`object.spec.containers.map(c, c.image)`, "spec.containers"},
		{`object.metadata.labels["app"] + object.status.containerStatuses[0].name`, "metadata.labels, status.containerStatuses"},
		{`get("nodes", object.spec.nodeName).metadata.labels["zone"]`, "spec.nodeName"},
		{`object.status.phase == "x" && object.status == {}`, "status"},
		{`size(object) > 1`, "<everything>"},
		{`object["spec"]`, "<everything>"},
		{`[object].size()`, "<everything>"},
		{`1 == 1`, ""},
	}
	for _, tt := range tests {
		prog, err := env.Compile(tt.expr, KindValue, "test")
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		if got := prog.ObjectPaths().String(); got != tt.want {
			t.Errorf("ObjectPaths(%s) = %q, want %q", tt.expr, got, tt.want)
		}
	}
}

func TestUsesEach(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	for expr, want := range map[string]bool{
		`object.metadata.name`:        false,
		`each`:                        true,
		`object.status.phase == each`: true,
		`[1, 2].exists(x, x == each.restartCount)`:     true,
		`object.spec.containers.map(c, c.name).size()`: false,
	} {
		p, err := env.CompileEach(expr, KindValue, "test")
		if err != nil {
			t.Fatal(err)
		}
		if p.UsesEach() != want {
			t.Errorf("UsesEach(%s) = %v, want %v", expr, p.UsesEach(), want)
		}
	}
}

// TestReadsIdent checks which expressions read object (or the macros'
// accumulator, @result) where it is free: not where a comprehension binds
// the name again.
func TestReadsIdent(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		expr string
		want bool
		name string // object when empty
	}{
		{`object.metadata.name`, true, ""},
		{`[1, 2].map(object, object)`, false, ""},
		{`[1, 2].map(x, object)`, true, ""},
		{`[object].map(x, x)`, true, ""},
		{`[1].map(object, object) + [object]`, true, ""},
		{`[1, 2].exists(object, object > 1)`, false, ""},
		{`[[1], [2]].map(x, x.map(object, object))`, false, ""},
		{`[[1], [2]].map(object, object.map(y, object))`, false, ""},
		{`{"a": 1}.transformList(k, object, object)`, false, ""},
		{`{"a": 1}.transformList(object, v, v)`, false, ""},
		{`{"a": 1}.transformList(k, v, object)`, true, ""},
		{`1 + 2`, false, ""},
		{`[1, 2].map(x, x)`, false, "@result"},
		{`[[1], [2]].map(x, x.map(y, y))`, false, "@result"},
		{`[[1], [2]].filter(x, x.exists(y, y > 1))`, false, "@result"},
	} {
		checked, iss := env.dyn.Compile(tc.expr)
		if iss.Err() != nil {
			t.Fatalf("%s: %v", tc.expr, iss.Err())
		}
		name := ObjectVar
		if tc.name != "" {
			name = tc.name
		}
		if got := readsIdent(checked.NativeRep().Expr(), name); got != tc.want {
			t.Errorf("readsIdent(%s, %s) = %t, want %t", tc.expr, name, got, tc.want)
		}
	}
}
