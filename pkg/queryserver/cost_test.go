package queryserver

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
)

// hang bounds the waits of these tests for a state they poll: a hang, not
// a measure.
const hang = time.Minute

// syncBuffer is a bytes.Buffer for a logger written from handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// post sends body as bob (who may list nothing) with extra headers, and
// returns the answer's code and body.
func post(t *testing.T, hc *http.Client, url, body string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+QueryPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer t-bob")
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestRequestBounds: what a caller who may read nothing sends is bounded
// before anything is resolved or authorized: a type name longer than a
// Kubernetes name, too many types, a namespace or an impersonation
// header too long get 400 with the bound named, and neither the answerer
// nor the authorizer is asked; what is logged of a request is shortened.
func TestRequestBounds(t *testing.T) {
	var answered atomic.Int32
	az := &rules{allow: map[string]bool{}}
	var logged syncBuffer
	srv, _ := start(t, Options{
		Answerer: &answerer{synced: true, answer: func(req plan.Request, may Access, budget *indexers.Budget, out, errOut io.Writer) error {
			answered.Add(1)
			return podsIn("shop")(req, may, budget, out, errOut)
		}},
		Authorizer: az.authorizer(),
		Logger:     slog.New(slog.NewTextHandler(&logged, nil)),
	})
	hc := srv.Client()
	body := func(q Query) string {
		b, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	many := make([]string, MaxResourceNames+1)
	for i := range many {
		many[i] = fmt.Sprintf("type%d", i)
	}
	aggregates := make([]plan.NamedExpr, MaxAggregates+1)
	for i := range aggregates {
		aggregates[i] = plan.NamedExpr{Name: fmt.Sprintf("a%d", i), Expr: "count()"}
	}
	refused := []struct {
		name   string
		body   string
		header http.Header
		msg    string
	}{
		{"a type name of 254 characters", body(Query{Resources: []string{strings.Repeat("p", MaxNameLength+1)}}), nil,
			"is 254 bytes long: a resource type name is at most 253 characters"},
		{"a type name of 1,000,000 characters", body(Query{Resources: []string{"pods," + strings.Repeat("x", 1_000_000)}}), nil,
			"is 1000005 bytes long: at most 16256 are served (64 types of at most 253 characters)"},
		{"65 types in one argument", body(Query{Resources: []string{strings.Join(many, ",")}}), nil,
			"the query names more than 64 resource types"},
		{"65 resource arguments", body(Query{Resources: many}), nil, "at most 64 are served"},
		{"33 index columns", body(Query{Resources: []string{"pods"}, Print: Print{IndexColumns: many[:MaxColumns+1]}}), nil,
			"the query asks for 33 index columns: at most 32 are served in one query"},
		{"33 label columns", body(Query{Resources: []string{"pods"}, Print: Print{LabelColumns: many[:MaxColumns+1]}}), nil,
			"the query asks for 33 label columns: at most 32 are served in one query"},
		{"9 group-by keys", body(Query{Resources: []string{"pods"}, GroupBy: "object.metadata.name", GroupByKeys: many[:MaxGroupByKeys], Aggregates: aggregates[:1]}), nil,
			"the query groups by 9 keys: at most 8 are served in one query"},
		{"33 aggregates", body(Query{Resources: []string{"pods"}, GroupBy: "object.metadata.name", Aggregates: aggregates}), nil,
			"the query asks for 33 aggregates: at most 32 are served in one query"},
		{"a long namespace", body(Query{Resources: []string{"pods"}, Namespace: strings.Repeat("n", 300)}), nil,
			"a namespace name is at most 253 characters"},
		{"a long impersonated user", body(Query{Resources: []string{"pods"}}), http.Header{"Impersonate-User": {strings.Repeat("u", 2000)}},
			"at most 1024 are served"},
	}
	for _, tt := range refused {
		code, text := post(t, hc, srv.URL, tt.body, tt.header)
		var st metav1.Status
		if err := json.Unmarshal([]byte(text), &st); err != nil || code != http.StatusBadRequest || st.Reason != metav1.StatusReasonBadRequest ||
			!strings.Contains(st.Message, tt.msg) || len(st.Message) > 1024 {
			t.Errorf("%s: %d %.300s; want 400 with a short message containing %q", tt.name, code, text, tt.msg)
		}
	}
	if n := answered.Load(); n != 0 {
		t.Errorf("the answerer was asked %d times for requests beyond the bounds, want 0", n)
	}
	az.mu.Lock()
	if len(az.asked) != 0 {
		t.Errorf("the authorizer was asked %d decisions for requests beyond the bounds, want none", len(az.asked))
	}
	az.mu.Unlock()

	// Within the bounds: answered (here, refused by the authorizer), and
	// logged shortened.
	padded := "pods" + strings.Repeat(",", 4000)
	code, text := post(t, hc, srv.URL, body(Query{Resources: []string{padded}}), nil)
	if code != http.StatusForbidden || answered.Load() != 1 {
		t.Errorf("pods followed by 4,000 commas: %d %.300s, answered %d times; want 403 after one answer", code, text, answered.Load())
	}
	log := logged.String()
	if !strings.Contains(log, "…(3748 more bytes)") || strings.Contains(log, strings.Repeat(",", logFieldLength+1)) {
		t.Errorf("the log does not shorten the resources to %d bytes:\n%.2000s", logFieldLength, log)
	}
	if len(log) > 16<<10 {
		t.Errorf("the log of %d refused requests is %d bytes long, want a few hundred a line", len(refused)+1, len(log))
	}
}

// TestShorten: what is kept of a long string fits n bytes, cut between
// runes, and says how much was left out.
func TestShorten(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"pods", 4, "pods"},
		{"pods,nodes", 4, "pods…(6 more bytes)"},
		{"ñandú", 2, "ñ…(5 more bytes)"},
		{"ñandú", 1, "…(7 more bytes)"},
	} {
		if got := shorten(tt.s, tt.n); got != tt.want {
			t.Errorf("shorten(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

// testResolver is a factory.Resolver over a RESTMapper of pods and nodes.
func testResolver() *factory.Resolver {
	podsGV := schema.GroupVersion{Version: "v1"}
	m := meta.NewDefaultRESTMapper([]schema.GroupVersion{podsGV})
	m.Add(podsGV.WithKind("Pod"), meta.RESTScopeNamespace)
	m.Add(podsGV.WithKind("Node"), meta.RESTScopeRoot)
	return factory.NewResolver(m, &fake.FakeDiscovery{Fake: &clienttesting.Fake{}})
}

// TestNameCacheBounded: the spellings of one list of types share the
// names of its types; names that do not resolve are not kept; and no more
// than maxCachedNames are, however many resolve.
func TestNameCacheBounded(t *testing.T) {
	c := newNameCache(testResolver())
	fulls := 0
	c.full = func() { fulls++ }
	for i := range 2000 {
		res, err := c.resolve("pods" + strings.Repeat(",", i) + " ")
		if err != nil || len(res) != 1 || res[0].GVR.Resource != "pods" {
			t.Fatalf("pods followed by %d commas: %v, %v", i, res, err)
		}
	}
	if n := c.len(); n != 1 {
		t.Errorf("%d names kept after 2,000 spellings of pods, want 1", n)
	}
	for i := range 1000 {
		if _, err := c.resolve(fmt.Sprintf("pods,nope%d", i)); err == nil || !factory.IsUnknownResource(err) {
			t.Fatalf("pods,nope%d: %v, want an unknown resource type", i, err)
		}
	}
	if n := c.len(); n != 1 {
		t.Errorf("%d names kept after 1,000 unknown names, want 1", n)
	}
	res, err := c.resolve("pods,node,pod")
	if err != nil || len(res) != 2 || res[0].GVR.Resource != "pods" || res[1].GVR.Resource != "nodes" {
		t.Errorf("pods,node,pod: %v, %v; want pods then nodes", res, err)
	}
	// Once maxCachedNames are kept, the names beyond are resolved each
	// time, and not kept.
	c.mu.Lock()
	for i := 0; len(c.byName) < maxCachedNames-1; i++ {
		c.byName[fmt.Sprint("filler", i)] = nil
	}
	c.mu.Unlock()
	for _, name := range []string{"nodes", "Node", "Node", "nodes"} {
		if res, err := c.resolve(name); err != nil || len(res) != 1 {
			t.Fatalf("%s: %v, %v", name, res, err)
		}
	}
	if n := c.len(); n != maxCachedNames {
		t.Errorf("%d names kept once full, want %d", n, maxCachedNames)
	}
	// "nodes" took the last room; "Node" found none, twice: told once.
	if fulls != 1 {
		t.Errorf("the full cache was told %d times, want once", fulls)
	}
}

// TestMayEachConcurrent: the decisions of a query across namespaces are
// asked ReviewWorkers at a time, never more, and answered in the order of
// the namespaces. The first ReviewWorkers wait until all of them are
// asked at once: asked one after another, they never would be.
func TestMayEachConcurrent(t *testing.T) {
	namespaces := make([]string, 1000)
	for i := range namespaces {
		namespaces[i] = fmt.Sprintf("ns-%04d", i)
	}
	var running, most, started atomic.Int32
	all := make(chan struct{})
	may := func(ctx context.Context, _ factory.Resource, ns string) (bool, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		if started.Add(1) == ReviewWorkers {
			close(all)
		}
		select {
		case <-all:
		case <-ctx.Done():
			return false, ctx.Err()
		}
		var i int
		_, _ = fmt.Sscanf(ns, "ns-%d", &i)
		return i%2 == 0, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	allowed, err := mayEach(ctx, may, pods, namespaces)
	if err != nil {
		t.Fatalf("mayEach: %v (the first %d decisions were not asked at once)", err, ReviewWorkers)
	}
	for i, ok := range allowed {
		if ok != (i%2 == 0) {
			t.Fatalf("namespace %s: allowed %v, want %v", namespaces[i], ok, i%2 == 0)
		}
	}
	if m := most.Load(); m != ReviewWorkers {
		t.Errorf("at most %d decisions asked at once, want %d", m, ReviewWorkers)
	}
	// An error ends the others and is returned.
	failing := func(_ context.Context, _ factory.Resource, ns string) (bool, error) {
		if ns == "ns-0500" {
			return false, fmt.Errorf("no answer for %s", ns)
		}
		return true, nil
	}
	if _, err := mayEach(ctx, failing, pods, namespaces); err == nil || err.Error() != "no answer for ns-0500" {
		t.Errorf("mayEach with a failing decision: %v", err)
	}
}

// TestReviewClientConfig: the client of the reviews has no rate limit
// unless one is asked for, and counts the reviews it sends.
func TestReviewClientConfig(t *testing.T) {
	base := &rest.Config{Host: "https://127.0.0.1:1", QPS: 5, Burst: 10}
	cs, err := kubernetes.NewForConfig(ReviewClientConfig(base, 0, nil))
	if err != nil {
		t.Fatal(err)
	}
	if rl := cs.AuthorizationV1().RESTClient().GetRateLimiter(); rl != nil {
		t.Errorf("the review client is throttled at %v a second, want no limit", rl.QPS())
	}
	cs, err = kubernetes.NewForConfig(ReviewClientConfig(base, 50, nil))
	if err != nil {
		t.Fatal(err)
	}
	if rl := cs.AuthorizationV1().RESTClient().GetRateLimiter(); rl == nil || rl.QPS() != 50 {
		t.Errorf("the review client with a limit of 50 a second: %v", rl)
	}

	reg := prometheus.NewRegistry()
	counter, err := NewReviewCounter(reg)
	if err != nil {
		t.Fatal(err)
	}
	rt := counter.Wrap(roundTripperFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusCreated, Body: http.NoBody}, nil
	}))
	for _, path := range []string{"/apis/authorization.k8s.io/v1/subjectaccessreviews", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
		"/apis/authentication.k8s.io/v1/tokenreviews", "/api/v1/namespaces/kube-system/configmaps"} {
		req, _ := http.NewRequest(http.MethodPost, "https://127.0.0.1:1"+path, http.NoBody)
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	want := `# HELP kubectl_informer_serve_reviews_total TokenReviews and SubjectAccessReviews sent to the API server: the authentication and authorization decisions not answered from the cache.
# TYPE kubectl_informer_serve_reviews_total counter
kubectl_informer_serve_reviews_total{kind="SubjectAccessReview"} 2
kubectl_informer_serve_reviews_total{kind="TokenReview"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), reviewsMetric); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

// TestMetricsEndpoint: /metrics answers a caller allowed get on it, with
// the decisions the server asked for, and refuses the others.
func TestMetricsEndpoint(t *testing.T) {
	az := &rules{allow: map[string]bool{"alice get  ": true, "alice list pods shop": true}}
	srv, _ := start(t, Options{Answerer: &answerer{synced: true, answer: podsIn("shop")}, Authorizer: az.authorizer()})
	hc := srv.Client()
	get := func(token string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+MetricsPath, http.NoBody)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("t-bob"); code != http.StatusForbidden {
		t.Errorf("GET /metrics as bob: %d, want 403", code)
	}
	if code, _ := get("nobody"); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics without credentials: %d, want 401", code)
	}
	if code, text := post(t, hc, srv.URL, `{"resources":["pods"]}`, nil); code != http.StatusForbidden {
		t.Errorf("bob's query: %d %s", code, text)
	}
	code, text := get("t-alice")
	// bob's /metrics, bob's query, and this one.
	if code != http.StatusOK || !strings.Contains(text, decisionsMetric+" 3\n") {
		t.Errorf("GET /metrics as alice: %d\n%s\nwant 200 and %s 3", code, text, decisionsMetric)
	}
}

// TestWriteTimeoutFreesSlot: a client that never reads a large answer
// holds its user's only slot until a write to it has waited WriteTimeout;
// then the write fails, the query ends, and the user's next query is
// admitted.
func TestWriteTimeoutFreesSlot(t *testing.T) {
	started := make(chan struct{})
	failed := make(chan error, 1)
	big := func(req plan.Request, _ Access, _ *indexers.Budget, out, _ io.Writer) error {
		line := []byte(strings.Repeat("x", 1023) + "\n")
		if req.Where == "small" {
			_, err := out.Write(line)
			return err
		}
		close(started)
		for range 256 << 10 { // 256 MiB: more than any socket buffers
			if _, err := out.Write(line); err != nil {
				failed <- err
				return err
			}
		}
		failed <- nil
		return nil
	}
	srv, _ := start(t, Options{
		Answerer:           &answerer{synced: true, answer: big},
		Authorizer:         (&rules{allow: map[string]bool{}}).authorizer(),
		MaxInflightPerUser: 1, WriteTimeout: 200 * time.Millisecond,
	})
	// A raw TLS connection: the request is sent, the answer never read.
	conn, err := tls.Dial("tcp", srv.Listener.Addr().String(), srv.Client().Transport.(*http.Transport).TLSClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	q := `{"resources":["pods"]}`
	if _, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t-bob\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", QueryPath, len(q), q); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(hang):
		t.Fatal("the query of the client that reads nothing did not start")
	}
	select {
	case err := <-failed:
		if err == nil {
			t.Fatal("256 MiB were written to a client that reads nothing")
		}
	case <-time.After(hang):
		t.Fatalf("a write to a client that reads nothing still waits after %s", hang)
	}
	hc := srv.Client()
	deadline := time.Now().Add(hang)
	for {
		code, text := post(t, hc, srv.URL, `{"resources":["pods"],"where":"small"}`, nil)
		if code == http.StatusOK {
			break
		}
		if code != http.StatusTooManyRequests {
			t.Fatalf("bob's next query: %d %.300s, want 200 (or 429 until the first has ended)", code, text)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the query of a client that reads nothing still holds its slot after %s", hang)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
