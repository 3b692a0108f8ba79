package queryserver

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/rest"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
)

// tokens authenticates the bearer tokens it maps to user names.
type tokens map[string]string

func (tk tokens) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tk[token] == "" {
		return nil, false, nil
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: tk[token]}}, true, nil
}

// rules allows "user verb resource namespace" entries and records what it
// was asked.
type rules struct {
	mu    sync.Mutex
	allow map[string]bool
	asked []string
}

func (r *rules) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	key := fmt.Sprintf("%s %s %s %s", a.GetUser().GetName(), a.GetVerb(), a.GetResource(), a.GetNamespace())
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, key)
	if r.allow[key] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func (r *rules) authorizer() authorizer.Authorizer { return authorizer.AuthorizerFunc(r.Authorize) }

// answerer answers with answer, and reports itself synced when synced is.
type answerer struct {
	synced bool
	answer func(req plan.Request, may Access, budget *indexers.Budget, out, errOut io.Writer) error
}

func (a *answerer) Answer(q Asked, out, errOut io.Writer) error {
	return a.answer(q.Request, q.May, q.Budget, out, errOut)
}
func (a *answerer) Synced() bool { return a.synced }

var pods = factory.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true}

// podsIn answers with the names of the request's resources, after asking
// whether the caller may list pods in namespace ns.
func podsIn(ns string) func(plan.Request, Access, *indexers.Budget, io.Writer, io.Writer) error {
	return func(req plan.Request, may Access, budget *indexers.Budget, out, errOut io.Writer) error {
		ok, err := may(budget.Context(), pods, ns)
		if err != nil {
			return err
		}
		if !ok {
			return &ForbiddenError{Resource: pods, Namespace: ns}
		}
		_, _ = fmt.Fprintf(out, "NAME\n%s\n", strings.Join(req.Resources, ","))
		_, _ = fmt.Fprintf(errOut, "warning: %s\n", req.Where)
		return nil
	}
}

// start serves o over TLS and returns the server and the path of its CA.
func start(t *testing.T, o Options) (*httptest.Server, string) {
	t.Helper()
	if o.Authenticator == nil {
		o.Authenticator = tokens{"t-alice": "alice", "t-bob": "bob"}
	}
	if o.Authorizer == nil {
		o.Authorizer = (&rules{allow: map[string]bool{"alice list pods shop": true}}).authorizer()
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(s.Handler())
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return srv, ca
}

func client(t *testing.T, srv *httptest.Server, ca, token string) *Client {
	t.Helper()
	c, err := NewClient(&rest.Config{BearerToken: token}, srv.URL, ca)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestQueryAnswered(t *testing.T) {
	srv, ca := start(t, Options{Answerer: &answerer{synced: true, answer: podsIn("shop")}})
	var out, errOut bytes.Buffer
	err := client(t, srv, ca, "t-alice").Query(context.Background(), Query{Resources: []string{"pods"}, Where: "true"}, &out, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != "NAME\npods\n" || errOut.String() != "warning: true\n" {
		t.Errorf("out %q, errOut %q; want the answer and its warning", out.String(), errOut.String())
	}
}

func TestQueryRefused(t *testing.T) {
	running := make(chan struct{}, 1)
	az := &rules{allow: map[string]bool{"alice list pods shop": true, "bob list pods shop": true}}
	tests := []struct {
		name    string
		answer  func(plan.Request, Access, *indexers.Budget, io.Writer, io.Writer) error
		token   string
		code    int
		message string
	}{
		{"no credentials", podsIn("shop"), "", http.StatusUnauthorized, "Unauthorized: the request has no valid credentials"},
		{"an unknown token", podsIn("shop"), "t-nobody", http.StatusUnauthorized, "Unauthorized"},
		{"forbidden", podsIn("bank"), "t-alice", http.StatusForbidden, `pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "bank"`},
		{"a mistake in the query", func(plan.Request, Access, *indexers.Budget, io.Writer, io.Writer) error {
			return &query.UsageError{Err: errors.New(`unknown index "x"`)}
		}, "t-alice", http.StatusBadRequest, `unknown index "x"`},
		{"over the cost budget", func(plan.Request, Access, *indexers.Budget, io.Writer, io.Writer) error {
			return fmt.Errorf("--where: %w: the expressions cost 12 units", indexers.ErrBudgetExceeded)
		}, "t-alice", http.StatusTooManyRequests, "CEL cost budget exceeded: the expressions cost 12 units: narrow the query"},
		{"a server error", func(plan.Request, Access, *indexers.Budget, io.Writer, io.Writer) error {
			return errors.New("broken")
		}, "t-alice", http.StatusInternalServerError, "broken"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, ca := start(t, Options{Answerer: &answerer{synced: true, answer: tt.answer}, Authorizer: az.authorizer()})
			var out, errOut bytes.Buffer
			err := client(t, srv, ca, tt.token).Query(context.Background(), Query{Resources: []string{"pods"}}, &out, &errOut)
			var se *StatusError
			if !errors.As(err, &se) || se.Code != tt.code || !strings.Contains(se.Status.Message, tt.message) || se.Status.Code != int32(tt.code) { //nolint:gosec // G115: an HTTP status code
				t.Fatalf("%v; want %d with a message containing %q", err, tt.code, tt.message)
			}
			if out.Len() != 0 || errOut.Len() != 0 {
				t.Errorf("a refused query printed %q and %q", out.String(), errOut.String())
			}
		})
	}

	t.Run("over the concurrency limit", func(t *testing.T) {
		block := make(chan struct{})
		blocking := func(plan.Request, Access, *indexers.Budget, io.Writer, io.Writer) error {
			running <- struct{}{}
			<-block
			return nil
		}
		srv, ca := start(t, Options{Answerer: &answerer{synced: true, answer: blocking}, Authorizer: az.authorizer(), MaxInflightPerUser: 1})
		// Cleanups run last first: the queries end before the server
		// closes, which waits for them.
		t.Cleanup(func() { close(block) })
		go func() {
			_ = client(t, srv, ca, "t-alice").Query(context.Background(), Query{Resources: []string{"pods"}}, io.Discard, io.Discard)
		}()
		select {
		case <-running:
		case <-time.After(time.Minute):
			t.Fatal("the first query did not start")
		}
		err := client(t, srv, ca, "t-alice").Query(context.Background(), Query{Resources: []string{"pods"}}, io.Discard, io.Discard)
		var se *StatusError
		if !errors.As(err, &se) || se.Code != http.StatusTooManyRequests || !strings.Contains(err.Error(), `user "alice" already runs 1 queries`) {
			t.Fatalf("a second query of the same user: %v; want 429", err)
		}
		// Another user is not held back by alice's queries.
		done := make(chan error, 1)
		go func() {
			done <- client(t, srv, ca, "t-bob").Query(context.Background(), Query{Resources: []string{"pods"}}, io.Discard, io.Discard)
		}()
		select {
		case <-running:
		case err := <-done:
			t.Fatalf("bob's query: %v; want it running", err)
		case <-time.After(time.Minute):
			t.Fatal("bob's query did not start")
		}
	})
}

// TestAuthorizationAttributes checks what the server asks the authorizer:
// list on the resource, in the namespace, for the authenticated user.
func TestAuthorizationAttributes(t *testing.T) {
	az := &rules{allow: map[string]bool{}}
	answer := func(_ plan.Request, may Access, b *indexers.Budget, _, _ io.Writer) error {
		for _, ns := range []string{"", "shop"} {
			if _, err := may(b.Context(), pods, ns); err != nil {
				return err
			}
		}
		return nil
	}
	srv, ca := start(t, Options{Answerer: &answerer{synced: true, answer: answer}, Authorizer: az.authorizer()})
	if err := client(t, srv, ca, "t-bob").Query(context.Background(), Query{Resources: []string{"pods"}}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	az.mu.Lock()
	defer az.mu.Unlock()
	if got, want := strings.Join(az.asked, "; "), "bob list pods ; bob list pods shop"; got != want {
		t.Errorf("asked %q, want %q", got, want)
	}
}

func TestErrorAfterTheAnswerStarted(t *testing.T) {
	answer := func(_ plan.Request, _ Access, _ *indexers.Budget, out, errOut io.Writer) error {
		_, _ = fmt.Fprintln(out, "first line")
		_, _ = fmt.Fprintln(errOut, "a note")
		return errors.New("template: missing key")
	}
	srv, ca := start(t, Options{Answerer: &answerer{synced: true, answer: answer}})
	var out, errOut bytes.Buffer
	err := client(t, srv, ca, "t-alice").Query(context.Background(), Query{Resources: []string{"pods"}}, &out, &errOut)
	if err == nil || err.Error() != "template: missing key" {
		t.Errorf("error %v, want the server's", err)
	}
	if out.String() != "first line\n" || errOut.String() != "a note\n" {
		t.Errorf("out %q, errOut %q", out.String(), errOut.String())
	}
}

func TestEndpoints(t *testing.T) {
	a := &answerer{answer: podsIn("shop")}
	srv, ca := start(t, Options{Answerer: a})
	get := func(path string) (int, string) {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := get("/readyz"); code != 503 || body != "the caches have not synced\n" {
		t.Errorf("/readyz before sync: %d %q", code, body)
	}
	err := client(t, srv, ca, "t-alice").Query(context.Background(), Query{Resources: []string{"pods"}}, io.Discard, io.Discard)
	var se *StatusError
	if !errors.As(err, &se) || se.Code != http.StatusServiceUnavailable {
		t.Errorf("a query before sync: %v; want 503", err)
	}
	a.synced = true
	if code, body := get("/readyz"); code != 200 || body != "ok\n" {
		t.Errorf("/readyz after sync: %d %q", code, body)
	}
	if code, body := get(QueryPath); code != http.StatusMethodNotAllowed || !strings.Contains(body, "use POST") {
		t.Errorf("GET %s: %d %q", QueryPath, code, body)
	}
	for name, body := range map[string]string{
		"not JSON":          "resources: [pods]",
		"an unknown field":  `{"resources": ["pods"], "wher": "true"}`,
		"a body over 1 MiB": `{"resources": ["` + strings.Repeat("p", maxBodyBytes) + `"]}`,
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+QueryPath, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer t-alice")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var st metav1.Status
		_ = json.NewDecoder(resp.Body).Decode(&st)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || st.Reason != metav1.StatusReasonBadRequest || !strings.HasPrefix(st.Message, "the body is not a query: ") {
			t.Errorf("%s: %d %+v; want 400", name, resp.StatusCode, st)
		}
	}
}

func TestNewClientRefusesPlainHTTP(t *testing.T) {
	for server, want := range map[string]string{
		"http://localhost:8443": `"http://localhost:8443": the query server speaks HTTPS only: want https://localhost:8443`,
		"localhost:8443":        `"localhost:8443" is not a URL: want https://HOST:PORT`,
		"://":                   `"://" is not a URL: want https://HOST:PORT`,
	} {
		_, err := NewClient(&rest.Config{}, server, "")
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("NewClient(%q): %v, want %q", server, err, want)
		}
	}
}

// fleetAnswerer answers as a server over clusters a and b would when b
// did not answer: what a printed, and a *plan.PartialError naming b, once
// the caller may read every cluster.
type fleetAnswerer struct{ out string }

func (f fleetAnswerer) Synced() bool { return true }

func (f fleetAnswerer) Answer(q Asked, out, errOut io.Writer) error {
	ok, err := q.MayReadAll(q.Budget.Context())
	if err != nil {
		return err
	}
	if !ok {
		return &ClusterForbiddenError{Cluster: "b", Home: "a"}
	}
	_, _ = io.WriteString(out, f.out)
	_, _ = fmt.Fprintf(errOut, "warning: cluster %q: down\n", "b")
	return &plan.PartialError{Failed: []plan.MemberError{{Cluster: "b", Err: errors.New("down")}}, Clusters: len(q.Clusters)}
}

// TestPartialAnswer: an answer over several clusters some of which did
// not answer reaches the client whole, with its warnings, as a
// *plan.PartialError naming them, also when it printed nothing on out; a
// caller who may not do everything in the home cluster is refused the
// others.
func TestPartialAnswer(t *testing.T) {
	az := &rules{allow: map[string]bool{"alice * * ": true}}
	for _, printed := range []string{"CLUSTER NAME\na     x\n", ""} {
		srv, ca := start(t, Options{Answerer: fleetAnswerer{out: printed}, Authorizer: az.authorizer()})
		var out, errOut bytes.Buffer
		err := client(t, srv, ca, "t-alice").Query(context.Background(), Query{Resources: []string{"pods"}, Clusters: []string{"a", "b"}}, &out, &errOut)
		var partial *plan.PartialError
		if !errors.As(err, &partial) {
			t.Fatalf("printed %q: error %v, want a *plan.PartialError", printed, err)
		}
		if partial.Clusters != 2 || len(partial.Failed) != 1 || partial.Failed[0].Cluster != "b" || partial.Failed[0].Err.Error() != "down" {
			t.Errorf("printed %q: %+v, want cluster b of 2, down", printed, partial)
		}
		if out.String() != printed || errOut.String() != "warning: cluster \"b\": down\n" {
			t.Errorf("out %q, errOut %q; want %q and the warning", out.String(), errOut.String(), printed)
		}
		var bobOut bytes.Buffer
		err = client(t, srv, ca, "t-bob").Query(context.Background(), Query{Resources: []string{"pods"}, Clusters: []string{"a", "b"}}, &bobOut, io.Discard)
		var se *StatusError
		if !errors.As(err, &se) || se.Code != http.StatusForbidden || !strings.Contains(se.Status.Message, `cluster "b" is forbidden: User "bob" may read the clusters other than this server's home cluster "a"`) {
			t.Errorf("bob: %v, want 403 naming him and the home cluster", err)
		}
	}
	// Whether the caller may do everything is asked as every verb on
	// every resource at the cluster scope.
	if !slices.Contains(az.asked, "alice * * ") || !slices.Contains(az.asked, "bob * * ") {
		t.Errorf("asked %q, want \"* *\" at the cluster scope for alice and bob", az.asked)
	}
}

// TestAnswerRaisesTheMemoryBound: while the server answers a query, its
// memory bound has the whole headroom; before and after, a quarter of it.
func TestAnswerRaisesTheMemoryBound(t *testing.T) {
	if currentLimit() != math.MaxInt64 {
		t.Skip("a memory limit is set already (GOMEMLIMIT)")
	}
	const headroom = 1 << 40 // far above anything the runtime holds
	bound, stop := runBound(t, headroom)
	defer stop()
	deadline := time.Now().Add(time.Minute) // a hang, not a measure
	if l := currentLimit(); l >= headroom {
		t.Fatalf("idle: limit %d, want under the whole headroom %d", l, int64(headroom))
	}
	var during atomic.Int64 // the handler's goroutine sets it
	srv, ca := start(t, Options{Memory: bound, Answerer: &answerer{synced: true, answer: func(req plan.Request, may Access, budget *indexers.Budget, out, errOut io.Writer) error {
		during.Store(currentLimit())
		return podsIn("shop")(req, may, budget, out, errOut)
	}}})
	var out, errOut bytes.Buffer
	if err := client(t, srv, ca, "t-alice").Query(context.Background(), Query{Resources: []string{"pods"}}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if d := during.Load(); d < headroom {
		t.Errorf("while answering: limit %d, want the whole headroom %d and more", d, int64(headroom))
	}
	// The handler ends once the client has read the answer's trailers:
	// the limit is lowered then.
	for currentLimit() >= headroom {
		if time.Now().After(deadline) {
			t.Fatalf("after the answer: limit %d, want under the whole headroom again", currentLimit())
		}
		time.Sleep(time.Millisecond)
	}
}
