package query_test

import (
	"encoding/json"
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
// iterated per element of it) are stopped by the cost limit, with the
// limit's message. Unlike other failures on single objects, the first one
// ends a query: it exits 1 and prints nothing, naming the flag, the
// expression and the object it was stopped on; one whose cost on any
// object exceeds the limit is refused as invalid.
func TestCostLimit(t *testing.T) {
	p := pods(t, metav1.ListOptions{Limit: 1})[0]
	scope := []string{"pods", "-n", p.Namespace, "--field-selector", "metadata.name=" + p.Name}
	list := celInts(1000)
	const limit = "cost limit exceeded: evaluation stopped after 1000000 cost units; simplify the expression or raise --cost-limit (0: no limit)"
	where := "object.spec.containers.all(c, " + list + ".all(x, " + list + ".all(y, x + y >= 0)))"
	column := list + ".map(x, " + list + ".map(y, x * y + size(object.metadata.name)).size()).sum()"
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"--where", []string{"--where", where, "--count"}, 1, "error: --where: " + limit + "\n | " + where + "\n"},
		// Its cost does not depend on the object: refused at once.
		{"--columns", []string{"--columns", "n=" + column, "--no-headers"}, 2, "error: invalid --columns n expression: its cost on any object is at least "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := query(t, append(scope, tt.args...)...)
			if r.code != tt.code || r.out != "" || !strings.HasPrefix(r.errOut, tt.want) || tt.code == 1 && !strings.Contains(r.errOut, p.Namespace+"/"+p.Name) {
				t.Errorf("exit code %d\nstdout:\n%s\nstderr:\n%s\nwant %d, nothing printed and stderr beginning with:\n%s", r.code, r.out, r.errOut, tt.code, tt.want)
			}
		})
	}
}

// TestCostLimitFlag checks --cost-limit: a lower limit stops what the
// default lets run, with a message that names the flag, in query (which
// it ends) and in watch (which counts it in a warning); 0 lets an evaluation run past the default limit; and a query sent
// to a query server cannot set it.
func TestCostLimitFlag(t *testing.T) {
	p := pods(t, metav1.ListOptions{Limit: 1})[0]
	scope := []string{"pods", "-n", p.Namespace, "--field-selector", "metadata.name=" + p.Name}
	// About 30 cost units per container.
	cheap := `object.spec.containers.all(c, [1,2,3,4,5,6,7,8,9,10].all(x, x > 0))`
	nested := "object.spec.containers.all(c, " + celInts(1000) + ".all(x, " + celInts(1000) + ".all(y, x + y >= 0)))"
	failed := "1 of 1 object failed: " + p.Namespace + "/" + p.Name + ": cost limit exceeded: evaluation stopped after 10 cost units; simplify the expression or raise --cost-limit (0: no limit)"

	if r := query(t, append(scope, "--count", "--where", cheap)...); r.code != 0 || r.out != "1\n" || r.errOut != "" {
		t.Errorf("default limit: exit code %d, stdout %q, stderr %q; want 0, \"1\" and no warning", r.code, r.out, r.errOut)
	}
	stopped := "error: --where: cost limit exceeded: evaluation stopped after 10 cost units; simplify the expression or raise --cost-limit (0: no limit)\n | " + cheap + "\n"
	if r := query(t, append(scope, "--count", "--where", cheap, "--cost-limit", "10")...); r.code != 1 || r.out != "" || !strings.HasPrefix(r.errOut, stopped) {
		t.Errorf("--cost-limit 10: exit code %d, stdout %q, stderr %q; want 1, nothing and the error %q", r.code, r.out, r.errOut, stopped)
	}
	if r := query(t, append(scope, "--count", "--where", nested, "--cost-limit", "0")...); r.code != 0 || r.out != "1\n" || r.errOut != "" {
		t.Errorf("--cost-limit 0: exit code %d, stdout %q, stderr %q; want 0, \"1\" and no warning", r.code, r.out, r.errOut)
	}

	w := cluster.StartPlugin(t, append([]string{"watch"}, append(scope, "--columns", "ok="+cheap, "--cost-limit", "10")...)...)
	if lines := w.WaitLines(t, 1); !strings.HasSuffix(lines[0], " ok=<error>") {
		t.Errorf("watch --cost-limit 10 printed %q, want the column as <error>", lines[0])
	}
	if code := w.Stop(t); code != 0 || w.ErrOut.String() != "warning: --columns ok: "+failed+"\n" {
		t.Errorf("watch --cost-limit 10: exit code %d, stderr %q; want 0 and the warning %q", code, w.ErrOut, failed)
	}

	indexes := func(flags ...string) result {
		return run(t, append([]string{"indexes", "--kubeconfig", cluster.Kubeconfig, "pods", "-n", p.Namespace, "--field-selector", "metadata.name=" + p.Name,
			"--index", "ok=" + cheap + ` ? "yes" : "no"`, "-o", "json"}, flags...)...)
	}
	// values is the number of distinct values of the index ok, -1 when
	// the output does not list it.
	values := func(out string) int {
		var rows []struct {
			Index  string `json:"index"`
			Values int    `json:"values"`
		}
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			return -1
		}
		for _, row := range rows {
			if row.Index == "ok" {
				return row.Values
			}
		}
		return -1
	}
	if r := indexes(); r.code != 0 || values(r.out) != 1 || r.errOut != "" {
		t.Errorf("indexes, default limit: exit code %d, stdout %q, stderr %q; want 0, one value of ok and no warning", r.code, r.out, r.errOut)
	}
	warn := `warning: index "ok": ` + strings.Replace(failed, "1 of 1 object failed", "1 of 1 objects failed", 1) + "\n"
	if r := indexes("--cost-limit", "10"); r.code != 0 || values(r.out) != 0 || r.errOut != warn {
		t.Errorf("indexes --cost-limit 10: exit code %d, stdout %q, stderr %q; want 0, no value of ok and the warning %q", r.code, r.out, r.errOut, warn)
	}

	r := query(t, append(scope, "--query-server", "https://127.0.0.1:1", "--cost-limit", "10")...)
	if want := "error: --query-server: the query server evaluates with its own --cost-limit; query without --query-server to set yours\n"; r.code != 2 || r.errOut != want {
		t.Errorf("--query-server with --cost-limit: exit code %d, stderr %q; want 2 and %q", r.code, r.errOut, want)
	}
}

// TestCostLimitStopsTheQuery checks that a query whose --where the cost
// limit stops on every object ends at the first: over all the workload's
// pods it reports one object and no count of failures. An expression
// whose static cost estimate is certain to exceed the limit on any object
// is refused before the kubeconfig is even read.
func TestCostLimitStopsTheQuery(t *testing.T) {
	all := pods(t, metav1.ListOptions{})
	if len(all) < 2 {
		t.Fatalf("the workload has %d pods, want several", len(all))
	}
	names := map[string]bool{}
	for _, p := range all {
		names[p.Namespace+"/"+p.Name] = true
	}
	// About 30 cost units per container: above 10 on every pod.
	cheap := `object.spec.containers.all(c, [1,2,3,4,5,6,7,8,9,10].all(x, x > 0))`
	r := query(t, "pods", "-A", "--where", cheap, "--cost-limit", "10")
	if r.code != 1 || r.out != "" || strings.Contains(r.errOut, "objects failed") {
		t.Fatalf("exit code %d, stdout %q, stderr %q; want 1, nothing printed and no count of failures", r.code, r.out, r.errOut)
	}
	named := 0
	for name := range names {
		if strings.Contains(r.errOut, " "+name+",") {
			named++
		}
	}
	if named != 1 {
		t.Errorf("stderr %q names %d of the %d pods, want the one the query stopped at", r.errOut, named, len(all))
	}

	list := celInts(1000)
	costly := list + ".map(x, " + list + ".map(y, x * y)).size() > 0"
	r = run(t, "query", "--kubeconfig", t.TempDir()+"/none", "pods", "-A", "--where", costly)
	if r.code != 2 || r.out != "" || !strings.Contains(r.errOut, "invalid --where expression: its cost on any object is at least ") ||
		!strings.Contains(r.errOut, "above the cost limit of 1000000") {
		t.Errorf("exit code %d, stdout %q, stderr %q; want 2 and the cost estimate's refusal, before reading the kubeconfig", r.code, r.out, r.errOut)
	}
}
