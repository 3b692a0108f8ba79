package indexers

import (
	"strings"
	"testing"
)

// TestReads checks what expressions read of object and each, into the
// elements of the lists they iterate over, as the paths jsonval sums.
func TestReads(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	whole := "<everything>"
	tests := []struct {
		expr         string
		object, each string
		list         string // ListPath, "" for none
	}{
		{`object.status.?containerStatuses.orValue([])`, "status.containerStatuses", "", "status.containerStatuses"},
		{`object.spec.containers`, "spec.containers", "", "spec.containers"},
		{`object.status.?containerStatuses.orValue([]).map(s, s.restartCount)`,
			"status.containerStatuses.[]., status.containerStatuses.[].restartCount", "", ""},
		{`object.status.conditions.filter(c, c.type == "Ready").map(c, c.status == "True")`,
			"status.conditions.[]., status.conditions.[].status, status.conditions.[].type", "", ""},
		{`object.spec.containers.exists(c, has(c.resources.limits) && c.name == object.metadata.name)`,
			"metadata.name, spec.containers.[]., spec.containers.[].name, spec.containers.[].resources.limits", "", ""},
		// An element used whole: the elements whole.
		{`object.spec.containers.map(c, string(c))`, "spec.containers", "", ""},
		// The filter's result used other than as a range: its elements whole.
		{`size(object.spec.containers.filter(c, c.name == "a")) > 0`, "spec.containers", "", ""},
		// A size or a type: a list's length, whether it is present and
		// null; anything else whole.
		{`size(object.spec.containers)`, "spec.containers.[].", "", ""},
		{`object.spec.containers.size() + size(object.metadata.?labels.orValue({}))`, "metadata.labels.[]., spec.containers.[].", "", ""},
		{`type(object.spec.?containers.orValue([])) == list`, "spec.containers.[].", "", ""},
		{`type(object.spec.containers[0]) == map`, "spec.containers", "", ""},
		// A range that is a list or nothing: the elements as read.
		{`(type(object.spec.?containers.orValue([])) == list ? object.spec.containers : []).map(c, c.name)`,
			"spec.containers.[]., spec.containers.[].name", "", ""},
		{`(has(object.spec.nodeName) ? [] : object.status.?conditions.orValue([])).filter(c, c.type == "Ready").map(c, c.status)`,
			"spec.nodeName, status.conditions.[]., status.conditions.[].status, status.conditions.[].type", "", ""},
		{`(object.metadata.name == "a" ? object.spec.containers : object.spec.initContainers).map(c, c.name)`,
			"metadata.name, spec.containers, spec.initContainers", "", ""},
		// The keys of a map: the map, which jsonval sums whole there.
		{`object.metadata.?labels.orValue({}).exists(k, k == "app")`, "metadata.labels", "", ""},
		// A variable named object hides object.
		{`object.spec.containers.map(object, object.name)`, "spec.containers.[]., spec.containers.[].name", "", ""},
		{`object.spec.containers.all(i, c, i < 2 || c.image != "")`, "spec.containers.[]., spec.containers.[].image", "", ""},
		{`object`, whole, "", ""},
		{`each.?state.?waiting.?reason.orValue("") == object.metadata.name`, "metadata.name", "state.waiting.reason", ""},
		{`has(each.state) && has(each.state.waiting)`, "", "state", ""},
		{`each`, "", whole, ""},
	}
	for _, tt := range tests {
		prog, err := env.CompileEach(tt.expr, KindValue, "test")
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		r, ok := prog.Reads()
		if !ok {
			t.Fatalf("%s: not analysed", tt.expr)
		}
		if got := r.Object.String(); got != tt.object {
			t.Errorf("%s: reads of object %q, want %q", tt.expr, got, tt.object)
		}
		if got := r.Each.String(); got != tt.each {
			t.Errorf("%s: reads of each %q, want %q", tt.expr, got, tt.each)
		}
		list, _ := prog.ListPath()
		if got := strings.Join(list, "."); got != tt.list {
			t.Errorf("%s: list %q, want %q", tt.expr, got, tt.list)
		}
	}
}
