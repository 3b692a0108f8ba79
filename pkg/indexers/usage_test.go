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
