package plan

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-informer/kubectl-informer/pkg/query/internal/fixture"
)

func TestSplitArgs(t *testing.T) {
	tests := []struct {
		args  []string
		types []string
		names [][]string
		err   string
	}{
		{args: []string{"pods"}, types: []string{"pods"}},
		{args: []string{"pods,nodes", "deploy"}, types: []string{"pods,nodes"}, names: [][]string{{"deploy"}}},
		{args: []string{"pods", "web-0", "db-0", "web-0"}, types: []string{"pods"}, names: [][]string{{"web-0", "db-0"}}},
		{args: []string{"pod/web-0"}, types: []string{"pod"}, names: [][]string{{"web-0"}}},
		{args: []string{"pod/a", "deploy/b", "pod/c"}, types: []string{"pod", "deploy"}, names: [][]string{{"a", "c"}, {"b"}}},
		{args: []string{"pods", "pod/a"}, err: "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form"},
		{args: []string{"pod/a/b"}, err: "arguments in resource/name form may not have more than one slash"},
		{args: []string{"pod,svc/a"}, err: "arguments in resource/name form must have a single resource and name"},
		{args: []string{"pod/"}, err: "arguments in resource/name form must have a single resource and name"},
		{args: []string{"pods", " "}, err: "an object name must not be empty"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			types, names, err := splitArgs(tt.args)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(types, tt.types) || !reflect.DeepEqual(names, tt.names) {
				t.Errorf("got %q %q, want %q %q", types, names, tt.types, tt.names)
			}
		})
	}
}

func TestNotFoundError(t *testing.T) {
	nf := &NotFoundError{Missing: []Missing{{Resource: schema.GroupResource{Resource: "pods"}, Name: "web-9"}, {Resource: schema.GroupResource{Group: "apps", Resource: "deployments"}, Name: "x"}}}
	want := "Error from server (NotFound): pods \"web-9\" not found\nError from server (NotFound): deployments.apps \"x\" not found"
	if nf.Error() != want {
		t.Errorf("NotFoundError:\n%s\nwant\n%s", nf, want)
	}
}

func TestCompileKubectlHabits(t *testing.T) {
	env := fixture.Env(t)
	tests := []struct {
		name       string
		req        Request
		descending bool
		count      bool
		sortExpr   string
	}{
		{name: "group-by implies count", req: Request{GroupBy: "object.status.phase"}, count: true},
		{name: "minus sorts descending", req: Request{SortBy: "-object.metadata.name"}, descending: true, sortExpr: " object.metadata.name"},
		{name: "minus of a whole expression", req: Request{SortBy: "  -(object.spec.replicas + 1)"}, descending: true, sortExpr: "   (object.spec.replicas + 1)"},
		{name: "minus of a part is arithmetic", req: Request{SortBy: "-object.spec.replicas + 1"}, sortExpr: "-object.spec.replicas + 1"},
		{name: "reverse", req: Request{SortBy: "object.metadata.name", Reverse: true}, descending: true, sortExpr: "object.metadata.name"},
		{name: "reverse of minus is ascending", req: Request{SortBy: "-object.metadata.name", Reverse: true}, sortExpr: " object.metadata.name"},
		{name: "reverse without a key", req: Request{Reverse: true}, descending: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile(env, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if p.descending != tt.descending || p.req.Count != tt.count {
				t.Errorf("descending %v, count %v; want %v, %v", p.descending, p.req.Count, tt.descending, tt.count)
			}
			if tt.sortExpr != "" && p.sortBy.Expr() != tt.sortExpr {
				t.Errorf("sort expression %q, want %q", p.sortBy.Expr(), tt.sortExpr)
			}
			if sp := p.Spec(); sp.Descending != tt.descending {
				t.Errorf("spec descending %v, want %v", sp.Descending, tt.descending)
			}
		})
	}
	// The columns of an error in a descending sort key are those typed.
	_, err := Compile(env, Request{SortBy: "-object.metadata.name.size("})
	if err == nil || !strings.Contains(err.Error(), "-object.metadata.name.size(") {
		t.Errorf("error %v, want it to show the expression as typed", err)
	}
	_, err = Compile(env, Request{SortBy: "-object.metadata.name.sizee()"})
	want := "invalid --sort-by expression: undeclared reference to 'sizee'"
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "\n | -object.metadata.name.sizee()\n") {
		t.Errorf("error %v, want %q showing the expression as typed", err, want)
	}
}
