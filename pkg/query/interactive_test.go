package query

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/tools/cache"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// noSchemas is a discovery client whose server publishes no OpenAPI
// schemas: expressions are checked dynamically.
type noSchemas struct{ *fakediscovery.FakeDiscovery }

func (noSchemas) OpenAPIV3() openapi.Client { return noPaths{} }

type noPaths struct{}

func (noPaths) Paths() (map[string]openapi.GroupVersion, error) {
	return map[string]openapi.GroupVersion{}, nil
}

// testSession returns a session on a real indexer holding testPods, as if
// req had synced them.
func testSession(t *testing.T, req Request) (*Session, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	req.Resources, req.WholeObjects, req.Names = []string{"pods"}, true, SessionNames
	p, err := Compile(testEnv(t), req)
	if err != nil {
		t.Fatal(err)
	}
	informer := cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if err := informer.AddIndexers(indexFuncs(p.queriedIndexes(nil), &indexers.Stats{})); err != nil {
		t.Fatal(err)
	}
	for _, pod := range testPods() {
		if err := informer.GetIndexer().Add(pod); err != nil {
			t.Fatal(err)
		}
	}
	res := factory.Resource{Arg: "pods", GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, GVK: corev1.SchemeGroupVersion.WithKind("Pod"), Namespaced: true}
	resolver := factory.NewResolver(nil, noSchemas{&fakediscovery.FakeDiscovery{}})
	p.synced = &synced{conn: Conn{Resolver: resolver}, queried: []*factory.Informer{{Resource: res, Mode: factory.ModeFull, Informer: informer}}, lookedUp: map[string]bool{}}
	var out, errOut bytes.Buffer
	return &Session{out: &out, errOut: &errOut, opts: SessionOptions{Samples: 200}, plan: p}, &out, &errOut
}

func TestSessionTranscript(t *testing.T) {
	s, out, errOut := testSession(t, Request{Output: "name", Indexes: []NamedExpr{{"byNode", "object.spec.nodeName"}}})
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
		{line: ":by byZone a", errOut: `error: unknown index "byZone"`},
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
	s, out, errOut := testSession(t, Request{Count: true})
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
	s, out, _ = testSession(t, Request{})
	if err := s.Run(context.Background(), NewLineReader(strings.NewReader(":count"))); err != nil || out.String() != "6\n" {
		t.Errorf("Run = %v, printed %q; want nil, 6", err, out)
	}
}

func TestSessionComplete(t *testing.T) {
	s, _, _ := testSession(t, Request{Indexes: []NamedExpr{{"byNode", "object.spec.nodeName"}}})
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
