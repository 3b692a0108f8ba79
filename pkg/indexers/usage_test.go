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
