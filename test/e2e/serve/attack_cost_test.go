package serve_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-informer/kubectl-informer/pkg/queryserver"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestAttackCost plays callers who try to make the server spend without
// bound: one with no RBAC at all, one allowed to list pods in many
// namespaces who asks across all of them, one that opens a connection and
// leaves it idle, one that never reads its answer. The server runs with
// small timeouts and one query per user at a time, so that a slot held is
// seen.
func TestAttackCost(t *testing.T) {
	s := startServer(t, "--idle-timeout", "1s", "--write-timeout", "1s", "--max-inflight-per-user", "1",
		"--authorization-cache-ttl", "10m", "--authorization-deny-cache-ttl", "10m")

	t.Run("NoRBACNames", func(t *testing.T) { testNoRBACNames(t, s) })
	t.Run("AllNamespaces", func(t *testing.T) { testAllNamespacesReviews(t, s) })
	t.Run("IdleConnection", func(t *testing.T) { testIdleConnection(t, s) })
	t.Run("NeverReads", func(t *testing.T) { testNeverReads(t, s) })

	if code := s.run.Stop(t); code != 0 {
		t.Errorf("serve exited %d when stopped, want 0\nstderr:\n%s", code, s.run.ErrOut)
	}
}

// fastClient is the admin's client without client-go's rate limit, to
// create many objects.
func fastClient(t *testing.T) kubernetes.Interface {
	t.Helper()
	c := rest.CopyConfig(cluster.Config)
	c.QPS = -1
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// noRBACToken creates the service account name in ns, bound to nothing,
// and returns a token of it and its user name.
func noRBACToken(t *testing.T, ns, name string) (token, user string) {
	t.Helper()
	ctx := context.Background()
	_, err := cluster.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	expiry := int64(3600)
	tr, err := cluster.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry},
	}, metav1.CreateOptions{})
	if err != nil || tr.Status.Token == "" {
		t.Fatalf("a token for %s/%s: %v", ns, name, err)
	}
	return tr.Status.Token, "system:serviceaccount:" + ns + ":" + name
}

// tokenClient returns an HTTPS client that trusts the serving certificate
// and presents token.
func (s *server) tokenClient(t *testing.T, token string) *http.Client {
	t.Helper()
	hc := s.anonymousClient(t)
	base := hc.Transport
	hc.Transport = roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		return base.RoundTrip(r)
	})
	t.Cleanup(base.(*http.Transport).CloseIdleConnections)
	return hc
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// metrics returns the server's own metrics, read by the admin.
func (s *server) metrics(t *testing.T) map[string]float64 {
	t.Helper()
	resp, err := s.adminClient(t).Get(s.url + queryserver.MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /metrics as the admin: %s %s", resp.Status, b)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	out := map[string]float64{}
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := name
			for _, l := range m.GetLabel() {
				key += "{" + l.GetName() + "=" + l.GetValue() + "}"
			}
			out[key] = framework.SampleValue(m)
		}
	}
	return out
}

const (
	namesCached = "kubectl_informer_serve_resource_names_cached"
	decisions   = "kubectl_informer_serve_authorization_decisions_total"
	sarsSent    = "kubectl_informer_serve_reviews_total{kind=SubjectAccessReview}"
)

// testNoRBACNames: a service account bound to nothing sends hundreds of
// distinct spellings of pods (pods followed by commas, which resolve),
// type names too long, and a name of a million characters. Each is
// refused, the resource names the server keeps do not grow, the names too
// long get 400 naming the bound, and no log line holds what was sent.
func testNoRBACNames(t *testing.T, s *server) {
	token, user := noRBACToken(t, readerNamespace, "no-rbac-names")
	hc := s.tokenClient(t, token)
	post := func(resources ...string) (int, metav1.Status) {
		t.Helper()
		body, err := json.Marshal(queryserver.Query{Resources: resources})
		if err != nil {
			t.Fatal(err)
		}
		code, text := s.post(t, hc, strings.NewReader(string(body)))
		var st metav1.Status
		if err := json.Unmarshal([]byte(text), &st); err != nil {
			t.Fatalf("the answer is not a Status: %v\n%.500s", err, text)
		}
		return code, st
	}
	// The first: the names of pods are resolved once.
	if code, st := post("pods"); code != http.StatusForbidden {
		t.Fatalf("pods as %s: %d %s, want 403", user, code, st.Message)
	}
	before := s.metrics(t)[namesCached]
	const spellings = 400
	for i := range spellings {
		// Up to 16,000 bytes each, every one distinct: 3.2 MB in all.
		if code, st := post("pods" + strings.Repeat(",", 1000+i*37)); code != http.StatusForbidden || !strings.Contains(st.Message, "pods is forbidden") {
			t.Fatalf("pods and %d commas as %s: %d %s, want 403", 1000+i*37, user, code, st.Message)
		}
	}
	after := s.metrics(t)[namesCached]
	if after != before || after < 1 {
		t.Errorf("%s: %v before %d distinct spellings of pods, %v after; want the same, at least 1", namesCached, before, spellings, after)
	}

	for _, tt := range []struct {
		name, arg, msg string
	}{
		{"254 characters", strings.Repeat("p", 254), "a resource type name is at most 253 characters"},
		{"1,000,000 characters", strings.Repeat("p", 1_000_000), "is 1000000 bytes long: at most 16256 are served (64 types of at most 253 characters)"},
	} {
		code, st := post(tt.arg)
		if code != http.StatusBadRequest || st.Reason != metav1.StatusReasonBadRequest || !strings.Contains(st.Message, tt.msg) || len(st.Message) > 1024 {
			t.Errorf("a type name of %s: %d %.500s; want 400 with a short message containing %q", tt.name, code, st.Message, tt.msg)
		}
	}
	if got := s.metrics(t)[namesCached]; got != after {
		t.Errorf("%s: %v after names too long, want %v", namesCached, got, after)
	}

	// What the server logged of these requests is shortened.
	var mine []string
	for _, l := range framework.Lines(s.run.ErrOut.String()) {
		if strings.Contains(l, "user="+user) {
			mine = append(mine, l)
		}
	}
	if len(mine) < spellings {
		t.Fatalf("the server logged %d lines for %s, want at least %d", len(mine), user, spellings)
	}
	shortened := 0
	for _, l := range mine {
		if len(l) > 2048 {
			t.Fatalf("a log line of %d bytes for %s: %.300s…", len(l), user, l)
		}
		if strings.Contains(l, "more bytes)") {
			shortened++
		}
	}
	if shortened < spellings {
		t.Errorf("%d log lines of %s say what was shortened, want at least %d", shortened, user, spellings)
	}
}

// attackNamespaces is how many namespaces the service account of
// testAllNamespacesReviews may list pods in: each holds a pod, so that a
// query across namespaces asks one decision per namespace.
// E2E_ATTACK_NAMESPACES changes it (the figures of the docs were measured
// with 1000).
func attackNamespaces(t *testing.T) int {
	n := 200
	if v := os.Getenv("E2E_ATTACK_NAMESPACES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("E2E_ATTACK_NAMESPACES=%q: want a positive number", v)
		}
	}
	return n
}

// testAllNamespacesReviews: a service account allowed to list pods in
// each of many namespaces (a RoleBinding in each) queries pods -A: it gets
// exactly the pods of its namespaces, and the same query again sends no
// SubjectAccessReview: its decisions come from the cache.
func testAllNamespacesReviews(t *testing.T, s *server) {
	n := attackNamespaces(t)
	cs := fastClient(t)
	ctx := context.Background()
	const role = "attack-pod-lister"
	_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: role},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}}},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	home := cluster.NewNamespace(t, "attack-home")
	token, user := noRBACToken(t, home, "many-namespaces")
	subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: home, Name: "many-namespaces"}
	prefix := fmt.Sprintf("attack-%d-", time.Now().UnixNano()%1_000_000)
	// The pods go when the test ends (their namespaces stay: no
	// controller finishes deleting them); their name appears in no log
	// of the other tests' servers.
	const victim = "victim-of-many-namespaces"
	t.Cleanup(func() { deletePods(t, cs, prefix, n, victim) })
	var (
		mu   sync.Mutex
		want []string
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, 16)
	)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			ns := fmt.Sprintf("%s%04d", prefix, i)
			err := func() error {
				if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
					return err
				}
				if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
					ObjectMeta: metav1.ObjectMeta{Name: role},
					RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
					Subjects:   []rbacv1.Subject{subject},
				}, metav1.CreateOptions{}); err != nil {
					return err
				}
				_, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: victim},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
				}, metav1.CreateOptions{})
				return err
			}()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("namespace %s: %w", ns, err))
			}
			want = append(want, ns+"/"+victim)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	// The server's cache holds them.
	admin := s.adminClient(t)
	framework.Eventually(t, fmt.Sprintf("the server holds the %d pods of the attack namespaces", n), func() bool {
		body, _ := json.Marshal(queryserver.Query{Resources: []string{"pods"}, Count: true,
			Where: fmt.Sprintf("object.metadata.namespace.startsWith(%q)", prefix)})
		code, text := s.post(t, admin, strings.NewReader(string(body)))
		return code == http.StatusOK && text == strconv.Itoa(n)+"\n"
	})
	// RBAC takes effect shortly after the bindings are made: the server
	// would cache a denial.
	waitAllowedAll(t, cs, user, home, want)

	hc := s.tokenClient(t, token)
	ask := func() ([]string, time.Duration) {
		t.Helper()
		body, _ := json.Marshal(queryserver.Query{Resources: []string{"pods"}, Output: "json"})
		start := time.Now()
		code, text := s.post(t, hc, strings.NewReader(string(body)))
		took := time.Since(start)
		if code != http.StatusOK {
			t.Fatalf("pods -A as %s: %d %.500s", user, code, text)
		}
		var list struct {
			Items []metav1.PartialObjectMetadata `json:"items"`
		}
		if err := json.Unmarshal([]byte(text), &list); err != nil {
			t.Fatalf("pods -A -o json as %s: %v", user, err)
		}
		var got []string
		for _, p := range list.Items {
			got = append(got, p.Namespace+"/"+p.Name)
		}
		slices.Sort(got)
		return got, took
	}
	m0 := s.metrics(t)
	got, first := ask()
	if !slices.Equal(got, want) {
		t.Fatalf("pods -A as %s: %d pods, want the %d of its namespaces (first %v, want %v)", user, len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
	}
	m1 := s.metrics(t)
	got, second := ask()
	if !slices.Equal(got, want) {
		t.Fatalf("pods -A as %s again: %d pods, want the %d of its namespaces", user, len(got), len(want))
	}
	m2 := s.metrics(t)
	if sent := m1[sarsSent] - m0[sarsSent]; sent < float64(n) {
		t.Errorf("the first query sent %v SubjectAccessReviews, want at least one per namespace, %d", sent, n)
	}
	if sent := m2[sarsSent] - m1[sarsSent]; sent != 0 {
		t.Errorf("the same query again sent %v SubjectAccessReviews, want none: its decisions are cached", sent)
	}
	if asked := m2[decisions] - m1[decisions]; asked < float64(n) {
		t.Errorf("the same query again asked %v decisions, want at least %d, from the cache", asked, n)
	}
	t.Logf("pods -A over %d namespaces: %s with %v reviews sent, %s again with none sent", n, first.Round(time.Millisecond), m1[sarsSent]-m0[sarsSent], second.Round(time.Millisecond))
}

// waitAllowedAll waits until user, a service account of home, may list
// pods in the namespace of each of pods (NAMESPACE/NAME).
func waitAllowedAll(t *testing.T, cs kubernetes.Interface, user, home string, pods []string) {
	t.Helper()
	pending := map[string]bool{}
	for _, p := range pods {
		ns, _, _ := strings.Cut(p, "/")
		pending[ns] = true
	}
	framework.Eventually(t, fmt.Sprintf("%s may list pods in its %d namespaces", user, len(pending)), func() bool {
		var mu sync.Mutex
		var wg sync.WaitGroup
		sem := make(chan struct{}, 16)
		for _, ns := range slices.Collect(maps.Keys(pending)) {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				sar, err := cs.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
					User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + home, "system:authenticated"},
					ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "list", Resource: "pods"},
				}}, metav1.CreateOptions{})
				if err == nil && sar.Status.Allowed {
					mu.Lock()
					delete(pending, ns)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return len(pending) == 0
	})
}

// testIdleConnection: a connection that sent one request without
// credentials and then nothing is closed by the server once it has been
// idle for --idle-timeout: the client's read ends with EOF.
func testIdleConnection(t *testing.T, s *server) {
	conn := s.dialTLS(t)
	defer func() { _ = conn.Close() }()
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: informer\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("GET /healthz: %s, close %v; want 200 on a kept-alive connection", resp.Status, resp.Close)
	}
	// Only a hang reaches this deadline.
	if err := conn.SetReadDeadline(time.Now().Add(framework.HangTimeout)); err != nil {
		t.Fatal(err)
	}
	if b, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("reading an idle kept-alive connection: %q, %v; want EOF: the server closes it", b, err)
	}
}

// dialTLS opens a TLS connection to the server that trusts its
// certificate and speaks HTTP/1.1.
func (s *server) dialTLS(t *testing.T) *tls.Conn {
	t.Helper()
	cfg := s.anonymousClient(t).Transport.(*http.Transport).TLSClientConfig.Clone()
	cfg.NextProtos = []string{"http/1.1"}
	conn, err := tls.Dial("tcp", strings.TrimPrefix(s.url, "https://"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// testNeverReads: a caller whose client sends a query with a large answer
// and never reads it holds its one slot only until a write to it has
// waited --write-timeout: the query ends (its log line is written) and
// the caller's next query is admitted.
func testNeverReads(t *testing.T, s *server) {
	ns := cluster.NewNamespace(t, "attack-fat")
	_, user := serviceAccountKubeconfig(t, ns, "never-reads") // may list pods in ns
	token, _ := noRBACToken(t, ns, "never-reads")
	cs := fastClient(t)
	// 100 pods with 200 KB of annotations each: an answer of 20 MB, more
	// than the sockets between the two hold.
	const pods, fat = 100, 200 << 10
	var wg sync.WaitGroup
	errs := make(chan error, pods)
	for i := range pods {
		wg.Go(func() {
			_, err := cs.CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fatpod-%03d", i), Annotations: map[string]string{"fat": strings.Repeat("f", fat)}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
			}, metav1.CreateOptions{})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		zero := int64(0)
		if err := cs.CoreV1().Pods(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
			t.Error(err)
		}
	})
	hc := s.tokenClient(t, token)
	count, _ := json.Marshal(queryserver.Query{Resources: []string{"pods"}, Namespace: ns, Count: true})
	framework.Eventually(t, fmt.Sprintf("the server holds the %d pods of %s", pods, ns), func() bool {
		code, text := s.post(t, hc, strings.NewReader(string(count)))
		return code == http.StatusOK && text == strconv.Itoa(pods)+"\n"
	})

	logged := func() int {
		n := 0
		for _, l := range framework.Lines(s.run.ErrOut.String()) {
			if strings.Contains(l, "msg=query") && strings.Contains(l, "user="+user) && strings.Contains(l, "namespace="+ns) {
				n++
			}
		}
		return n
	}
	before := logged()
	conn := s.dialTLS(t)
	defer func() { _ = conn.Close() }()
	q, _ := json.Marshal(queryserver.Query{Resources: []string{"pods"}, Namespace: ns, Output: "json"})
	if _, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: informer\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		queryserver.QueryPath, token, len(q), q); err != nil {
		t.Fatal(err)
	}
	// The query's line is logged once it has ended, cut off while it was
	// written: its client has read nothing, and nothing else of this user
	// runs meanwhile.
	framework.Eventually(t, "the query of the client that reads nothing ends", func() bool { return logged() > before })
	// Its slot is free: the next query is admitted.
	if code, text := s.post(t, hc, strings.NewReader(string(count))); code != http.StatusOK || text != strconv.Itoa(pods)+"\n" {
		t.Errorf("the next query of %s: %d %.300s, want 200 and %d", user, code, text, pods)
	}
}

// deletePods deletes the pod name of each namespace PREFIX0000 to
// PREFIX(n-1).
func deletePods(t *testing.T, cs kubernetes.Interface, prefix string, n int, name string) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	zero := int64(0)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			err := cs.CoreV1().Pods(fmt.Sprintf("%s%04d", prefix, i)).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
