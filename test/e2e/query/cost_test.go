package query_test

import (
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// celInts is a CEL list literal of the integers 0 to n-1.
func celInts(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = strconv.Itoa(i)
	}
	return "[" + strings.Join(items, ",") + "]"
}

// TestCostLimit checks that expressions whose evaluation runs away
// (comprehensions nested over long lists, built from the object or
// iterated per element of it) are stopped by the cost limit on each object
// they are evaluated on, with the limit's message. As any failure on single
// objects, it does not end the query: the object is left out (--where) or
// shows <error> (--columns), a summary goes to stderr, and the exit code
// is 0.
func TestCostLimit(t *testing.T) {
	p := pods(t, metav1.ListOptions{Limit: 1})[0]
	scope := []string{"pods", "-n", p.Namespace, "--field-selector", "metadata.name=" + p.Name}
	list := celInts(1000)
	const limit = "cost limit exceeded: evaluation stopped after 1000000 cost units; simplify the expression or raise the limit"
	tests := []struct {
		name string
		args []string
		out  func(string) bool
		warn string
	}{
		{"--where", []string{"--where", "object.spec.containers.all(c, " + list + ".all(x, " + list + ".all(y, x + y >= 0)))", "--count"},
			func(out string) bool { return out == "0\n" },
			"warning: --where: 1 of 1 object failed: " + p.Namespace + "/" + p.Name + ": " + limit + "\n"},
		{"--columns", []string{"--columns", "n=" + list + ".map(x, " + list + ".map(y, x * y + size(object.metadata.name)).size()).sum()", "--no-headers"},
			func(out string) bool { return strings.Fields(out)[0] == p.Name && strings.HasSuffix(out, "<error>\n") },
			"warning: --columns n: 1 of 1 object failed: " + p.Namespace + "/" + p.Name + ": " + limit + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := query(t, append(scope, tt.args...)...)
			if r.code != 0 || !tt.out(r.out) || r.errOut != tt.warn {
				t.Errorf("exit code %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stderr:\n%s", r.code, r.out, r.errOut, tt.warn)
			}
		})
	}
}
