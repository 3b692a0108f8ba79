package interactive

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/internal/fixture"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
)

// testSession returns a session on a real indexer holding testPods, as if
// req had synced them.
func testSession(t *testing.T, req plan.Request) (*Session, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	return testSessionScoped(t, req, factory.Scope{})
}

// testSessionScoped is testSession with the pods cached in scope. Its
// resolver knows pods, nodes and configmaps.
func testSessionScoped(t *testing.T, req plan.Request, scope factory.Scope) (*Session, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	req.Resources, req.WholeObjects, req.Names = []string{"pods"}, true, query.SessionNames
	env := fixture.Env(t)
	p, err := plan.Compile(env, req)
	if err != nil {
		t.Fatal(err)
	}
	// The indexes of req, registered as Fill registers them.
	ixs := map[string]*indexers.Program{}
	for _, ix := range req.Indexes {
		if ixs[ix.Name], err = env.Compile(ix.Expr, indexers.KindIndex, "index "+ix.Name); err != nil {
			t.Fatal(err)
		}
	}
	informer := cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if err := informer.AddIndexers(indexers.IndexFuncs(ixs, &indexers.Stats{})); err != nil {
		t.Fatal(err)
	}
	for _, pod := range fixture.Pods() {
		if err := informer.GetIndexer().Add(pod); err != nil {
			t.Fatal(err)
		}
	}
	res := factory.Resource{Arg: "pods", GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, GVK: corev1.SchemeGroupVersion.WithKind("Pod"), Namespaced: true}
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{corev1.SchemeGroupVersion})
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Pod"), meta.RESTScopeNamespace)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Node"), meta.RESTScopeRoot)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	resolver := factory.NewResolver(mapper, fixture.NoSchemas{FakeDiscovery: &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}})
	caches := plan.NewCaches(plan.Conn{Resolver: resolver}, []*factory.Informer{{Resource: res, Scope: scope, Mode: factory.ModeFull, Informer: informer}}, nil)
	if p, err = p.From(caches); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	return &Session{out: &out, errOut: &errOut, opts: Options{Samples: 200}, plan: p}, &out, &errOut
}

func TestSessionTranscript(t *testing.T) {
	s, out, errOut := testSession(t, plan.Request{Output: "name", Indexes: []plan.NamedExpr{{Name: "byNode", Expr: "object.spec.nodeName"}}})
	steps := []struct {
		line, out, errOut string
	}{
		{line: ":count", out: "6\n"},
		{line: `object.status.phase == "Pending"`, out: "2\n"},
		{line: `obect.status.phase == "x"`, errOut: "error: invalid filter expression: undeclared reference to 'obect' (did you mean \"object\"?)\n" +
			" | obect.status.phase == \"x\"\n | ^\n"},
		{line: ":by byNode n1", out: "1\n"},
		{line: ":count", out: "pod/db-0\n"},
		{line: ":by", out: "pod/db-0\npod/web-2\n"},
		{line: ":where", out: "pod/db-0\npod/web-0\npod/web-1\npod/dns-0\npod/px-a\npod/web-2\n"},
		{line: ":group object.status.phase", out: "Running   3\nPending   2\nFailed    1\n"},
		{line: ":sort object.metadata.name", errOut: "error: :sort cannot be combined with :count: groups are ordered by count\n"},
		{line: ":count", out: "pod/db-0\npod/web-0\npod/web-1\npod/dns-0\npod/px-a\npod/web-2\n"},
		{line: ":sort object.metadata.name", out: "pod/db-0\npod/dns-0\npod/px-a\npod/web-0\npod/web-1\npod/web-2\n"},
		{line: ":limit 2", out: "pod/db-0\npod/dns-0\n"},
		{line: ":index byImage=object.spec.containers.map(c, c.image)", out: "pods: index \"byImage\" has 4 values\n",
			errOut: "warning: index \"byImage\": 1 of 6 objects failed: kube-system/dns-0: got 'types.Null', expected iterable type\n"},
		{line: ":by byImage nginx", out: "pod/web-0\npod/web-1\n"},
		{line: ":by byZone a", errOut: "error: unknown index \"byZone\": known indexes are byImage, byNode, namespace (define one with :index byZone=CEL)\n"},
		{line: ":o yaml", out: "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n"},
		{line: ":o table", out: "NAMESPACE"},
		{line: ":bogus", errOut: `error: unknown command ":bogus": the commands are :by, :where`},
		{line: ":resources", out: "RESOURCE   OBJECTS   INDEXES\npods       6         byImage,byNode,namespace\n"},
		{line: ":help", out: "CEL   "},
	}
	for _, step := range steps {
		out.Reset()
		errOut.Reset()
		if s.Do(step.line) {
			t.Fatalf("%q ended the session", step.line)
		}
		if !strings.HasPrefix(out.String(), step.out) || (step.out == "" && out.Len() > 0) {
			t.Errorf("%q printed\n%s\nwant\n%s", step.line, out, step.out)
		}
		if !strings.HasPrefix(errOut.String(), step.errOut) || (step.errOut == "" && errOut.Len() > 0) {
			t.Errorf("%q printed on stderr\n%s\nwant\n%s", step.line, errOut, step.errOut)
		}
	}
}

func TestSessionRun(t *testing.T) {
	s, out, errOut := testSession(t, plan.Request{Count: true})
	in := strings.NewReader("\n:count\n:count\n:quit\nobject.status.phase == \"Running\"\n")
	if err := s.Run(context.Background(), NewLineReader(in)); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "NAMESPACE") || !strings.HasSuffix(out.String(), "6\n") || strings.Count(out.String(), "\n") != 8 {
		t.Errorf("stdout:\n%s\nwant the table of 6 pods then 6, nothing after :quit", out)
	}
	if errOut.Len() > 0 {
		t.Errorf("stderr: %s", errOut)
	}
	// EOF ends the session as :quit does.
	s, out, _ = testSession(t, plan.Request{})
	if err := s.Run(context.Background(), NewLineReader(strings.NewReader(":count"))); err != nil || out.String() != "6\n" {
		t.Errorf("query.Run = %v, printed %q; want nil, 6", err, out)
	}
}

func TestSessionComplete(t *testing.T) {
	s, _, _ := testSession(t, plan.Request{Indexes: []plan.NamedExpr{{Name: "byNode", Expr: "object.spec.nodeName"}}})
	tests := []struct {
		line       string
		head       string
		candidates []string
	}{
		{":co", "", []string{":count", ":columns "}},
		{":by ", ":by ", []string{"byNode ", "namespace "}},
		{":by byNode ", ":by byNode ", []string{"n1", "n2"}},
		{":o ya", ":o ", []string{"yaml"}},
		{":resources p", ":resources ", []string{"pods"}},
		{"ob", "", []string{"object"}},
		{"object.status.", "", []string{"object.status.containerStatuses", "object.status.phase"}},
		{`object.status.phase == "Running" && object.spec.n`, `object.status.phase == "Running" && `, []string{"object.spec.nodeName"}},
		{"object.metadata.labels.", "", []string{"object.metadata.labels.app"}},
		{"object.spec.containers[0].i", "", []string{"object.spec.containers[0].image"}},
		// A list has no fields: its functions are offered, and its
		// elements' fields after an index.
		{"object.spec.containers.", "", []string{"object.spec.containers.all(", "object.spec.containers.exists(",
			"object.spec.containers.exists_one(", "object.spec.containers.filter(", "object.spec.containers.map(", "object.spec.containers.size()"}},
		{"object.spec.containers.e", "", []string{"object.spec.containers.exists(", "object.spec.containers.exists_one("}},
		{"object.spec.containers.im", "", nil},
		{"object.spec.containers.image.", "", nil},
		{"object.spec.?nodeN", "", []string{"object.spec.?nodeName"}},
		{":sort object.metadata.na", ":sort ", []string{"object.metadata.name", "object.metadata.namespace"}},
		{"other.x", "other.x", nil},
	}
	for _, tt := range tests {
		head, got, tail := s.Complete(tt.line+"!", len([]rune(tt.line)))
		if head != tt.head || strings.Join(got, " | ") != strings.Join(tt.candidates, " | ") || tail != "!" {
			t.Errorf("Complete(%q) = %q, %q, %q; want %q, %q, \"!\"", tt.line, head, got, tail, tt.head, tt.candidates)
		}
	}
}

// TestSessionCompletionsEvaluate completes every field path from "object."
// down, as Tab would, and evaluates each offer on the cached pods: every
// path offered must be one an expression can read, on some pod without an
// error.
func TestSessionCompletionsEvaluate(t *testing.T) {
	s, _, _ := testSession(t, plan.Request{})
	env := fixture.Env(t)
	// A function offered is completed with the arguments it takes.
	calls := map[string]string{"all(": "all(x, true)", "exists(": "exists(x, true)", "exists_one(": "exists_one(x, true)",
		"filter(": "filter(x, true)", "map(": "map(x, x)", "size()": "size()"}
	checked := 0
	queue := []string{"object."}
	for len(queue) > 0 {
		line := queue[0]
		queue = queue[1:]
		_, offers, _ := s.Complete(line, len([]rune(line)))
		for _, offer := range offers {
			expr, open := offer, false
			for f, call := range calls {
				if strings.HasSuffix(offer, "."+f) {
					expr, open = strings.TrimSuffix(offer, f)+call, true
				}
			}
			prog, err := env.Compile(expr, indexers.KindValue, "offer")
			if err != nil {
				t.Errorf("Complete(%q) offers %q, which does not compile: %v", line, offer, err)
				continue
			}
			ok := false
			var firstErr error
			for _, pod := range fixture.Pods() {
				if _, err := prog.Value(pod); err == nil {
					ok = true
				} else if firstErr == nil {
					firstErr = err
				}
			}
			if !ok {
				t.Errorf("Complete(%q) offers %q, which fails on every pod: %v", line, offer, firstErr)
			}
			checked++
			switch {
			case open && strings.HasSuffix(offer, ".all("):
				// A list: its elements' fields after an index.
				queue = append(queue, strings.TrimSuffix(offer, ".all(")+"[0].")
			case !open && strings.Count(offer, ".") < 5:
				queue = append(queue, offer+".")
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d offers checked: the walk did not go down the pods' fields", checked)
	}
}

// TestSessionAnswerEndsLine: a format that writes no line end of its own
// (jsonpath, go-template, as kubectl prints them) still ends each answer
// on a line of its own in a session.
func TestSessionAnswerEndsLine(t *testing.T) {
	s, out, errOut := testSession(t, plan.Request{SortBy: "object.metadata.name"})
	for _, step := range []struct{ line, out string }{
		{":o jsonpath={.items[*].metadata.name}", "db-0 dns-0 px-a web-0 web-1 web-2\n"},
		{":limit 1", "db-0\n"},
		{`:o jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}`, "db-0\n"},
		{":o go-template={{len .items}}", "1\n"},
		{":o name", "pod/db-0\n"},
	} {
		out.Reset()
		s.Do(step.line)
		if out.String() != step.out || errOut.Len() > 0 {
			t.Errorf("%q printed %q (stderr %q), want %q", step.line, out, errOut, step.out)
		}
	}
}

// TestSessionRunFailedLines: input that is not typed ends with an error
// naming the lines that failed, a *query.UsageError when one was a mistake; at a
// prompt, mistakes are only printed.
func TestSessionRunFailedLines(t *testing.T) {
	input := ":count\nobject.status.phase ==\n:bogus\nobject.status.phase == \"Running\"\n:quit\n:bogus\n"
	s, out, errOut := testSession(t, plan.Request{})
	err := s.Run(context.Background(), NewLineReader(strings.NewReader(input)))
	var lf *LinesFailedError
	var usage *query.UsageError
	if !errors.As(err, &lf) || !errors.As(err, &usage) || !slices.Equal(lf.Lines, []int{2, 3}) || lf.Read != 5 {
		t.Fatalf("query.Run = %v, want a *query.UsageError of lines 2 and 3 of 5", err)
	}
	if want := "2 of 5 input lines failed (lines 2, 3); each printed its error above"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if out.String() != "6\n3\n" || strings.Count("\n"+errOut.String(), "\nerror: ") != 2 {
		t.Errorf("stdout %q, stderr %q", out, errOut)
	}

	s, _, _ = testSession(t, plan.Request{})
	s.opts.Prompt = "pods> "
	if err := s.Run(context.Background(), NewLineReader(strings.NewReader(input))); err != nil {
		t.Errorf("at a prompt, query.Run = %v, want nil", err)
	}
	s, _, _ = testSession(t, plan.Request{})
	if err := s.Run(context.Background(), NewLineReader(strings.NewReader(":count\n# a comment\n\n:quit\n"))); err != nil {
		t.Errorf("no line failed: query.Run = %v, want nil", err)
	}
}

// TestSessionFlagNames: messages in a session name its commands, not the
// command line's flags.
func TestSessionFlagNames(t *testing.T) {
	s, _, errOut := testSession(t, plan.Request{Indexes: []plan.NamedExpr{{Name: "byNode", Expr: "object.spec.nodeName"}}})
	for _, step := range []struct{ line, errOut string }{
		{":by byZone a", "error: unknown index \"byZone\": known indexes are byNode, namespace (define one with :index byZone=CEL)\n"},
		{":count", ""},
		{":o yaml", "error: :count prints numbers: :o yaml cannot be used with it\n"},
	} {
		errOut.Reset()
		s.Do(step.line)
		if errOut.String() != step.errOut {
			t.Errorf("%q printed on stderr %q, want %q", step.line, errOut, step.errOut)
		}
		if strings.Contains(errOut.String(), "--") {
			t.Errorf("%q names a flag: %q", step.line, errOut)
		}
	}
}

// TestSessionLookups: get() and byIndex() reach a resource the session
// queries though the first query did not read it with get(), under any of
// its names; a resource not cached, or cached only in part, is refused
// with what to do.
func TestSessionLookups(t *testing.T) {
	s, out, errOut := testSession(t, plan.Request{Count: true})
	for _, step := range []struct{ line, out, errOut string }{
		{`get("pods", object.metadata.namespace, object.metadata.name).metadata.name == object.metadata.name`, "6\n", ""},
		{`get("pods", "default", "web-0").spec.nodeName == object.spec.?nodeName.orValue("")`, "3\n", ""},
		{`get("pod", "kube-system", "dns-0") != null && get("pod", "other", "nope") == null`, "6\n", ""},
		{`size(byIndex("pods", "namespace", object.metadata.namespace)) == 3`, "3\n", ""},
		{`size(byIndex("pods", "byNode", "n1")) > 0`, "", "error: filter: byIndex(\"pods\", \"byNode\", …): for pods: unknown index \"byNode\": known indexes are namespace (define one with :index byNode=CEL)\n"},
		{":index byNode=object.spec.?nodeName.orValue(\"\")", "pods: index \"byNode\" has 3 values\n", ""},
		{`size(byIndex("pods", "byNode", object.spec.?nodeName.orValue(""))) == 3`, "3\n", ""},
		{`get("nodes", object.spec.nodeName) != null`, "", "error: filter: \"nodes\" is not cached here (the caches hold pods): start a new query that names it, or whose flags read it with get()\n"},
		{`get("widgets", "a") != null`, "", `error: filter: get("widgets", …): `},
	} {
		out.Reset()
		errOut.Reset()
		s.Do(step.line)
		if out.String() != step.out || !strings.HasPrefix(errOut.String(), step.errOut) || (step.errOut == "") != (errOut.Len() == 0) {
			t.Errorf("%s\nprinted %q, stderr %q\nwant %q, stderr %q", step.line, out, errOut, step.out, step.errOut)
		}
	}

	s, out, errOut = testSessionScoped(t, plan.Request{Count: true}, factory.Scope{LabelSelector: "app=web"})
	s.Do(`get("pods", "default", "db-0") == null`)
	if want := "error: filter: \"pods\" is cached only in part here (label selector app=web): get() and byIndex() would miss the rest; start a new query without the selector, or one whose flags read \"pods\" with get()\n"; errOut.String() != want || out.Len() > 0 {
		t.Errorf("with a label selector: printed %q, stderr %q; want stderr %q", out, errOut, want)
	}
}

// TestSessionCompleteExtends: every completion starts with the text typed,
// so that liner, which replaces that text with the longest prefix the
// completions share, never deletes any of it; the keys of a map that are
// not identifiers complete after [ or [" (and [').
func TestSessionCompleteExtends(t *testing.T) {
	s, _, _ := testSession(t, plan.Request{})
	pod := fixture.Pod("default", "api-0", "n1", corev1.PodRunning, 0, time.Hour, "nginx")
	pod.Labels = map[string]string{"app": "api", "tier": "front", "team.example.com/owner": "ops"}
	if err := s.plan.Caches().Queried()[0].Informer.GetIndexer().Add(pod); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		line       string
		candidates []string
	}{
		{"object.metadata.labels.t", []string{"object.metadata.labels.tier"}},
		{"object.metadata.labels.", []string{"object.metadata.labels.app", "object.metadata.labels.tier"}},
		{`object.metadata.labels["t`, []string{`object.metadata.labels["team.example.com/owner"]`, `object.metadata.labels["tier"]`}},
		{`object.metadata.labels["team.ex`, []string{`object.metadata.labels["team.example.com/owner"]`}},
		{`object.metadata.labels['te`, []string{`object.metadata.labels['team.example.com/owner']`}},
		{`object.metadata.labels[`, []string{`object.metadata.labels["app"]`, `object.metadata.labels["team.example.com/owner"]`, `object.metadata.labels["tier"]`}},
		{`object.metadata.labels["x`, nil},
		{`object.spec.containers[`, nil},
		{`object.spec.containers[0].n`, []string{"object.spec.containers[0].name"}},
	}
	env := fixture.Env(t)
	for _, tt := range tests {
		line := `size(object.spec.containers) > 0 && ` + tt.line
		head, got, tail := s.Complete(line+")", len([]rune(line)))
		if tail != ")" || strings.Join(got, " | ") != strings.Join(tt.candidates, " | ") {
			t.Errorf("Complete(%q) = %q, %q, %q; want %q", line, head, got, tail, tt.candidates)
			continue
		}
		for _, c := range got {
			if !strings.HasPrefix(head+c, line) {
				t.Errorf("Complete(%q) offers %q after %q: it does not extend the text typed", line, c, head)
			}
			if !strings.HasSuffix(c, "]") {
				continue
			}
			prog, err := env.Compile(c, indexers.KindValue, "offer")
			if err != nil {
				t.Errorf("Complete(%q) offers %q, which does not compile: %v", line, c, err)
				continue
			}
			if _, err := prog.Value(pod); err != nil {
				t.Errorf("Complete(%q) offers %q, which fails on the pod that has the key: %v", line, c, err)
			}
		}
	}
}
