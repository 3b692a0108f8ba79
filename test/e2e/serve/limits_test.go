package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
	"github.com/kubectl-informer/kubectl-informer/pkg/queryserver"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestLimits checks the per-request CEL cost limit and the per-user
// concurrency limit of a server with tiny ones.
func TestLimits(t *testing.T) {
	s := startServer(t, "--max-cost-per-request", "10", "--max-inflight-per-user", "1")

	t.Run("Cost", func(t *testing.T) {
		r := s.query(t, cluster.Kubeconfig, "pods", "-A", "--where", `object.status.phase == "Running"`)
		if r.code != app.ExitRuntime || r.out != "" ||
			!strings.Contains(r.errOut, "429 Too Many Requests") || !strings.Contains(r.errOut, "CEL cost budget exceeded") ||
			!strings.Contains(r.errOut, "cost limit per request") {
			t.Errorf("a --where over every pod: exit %d, stdout %q, stderr %q; want exit 1 and 429 over the cost budget", r.code, r.out, r.errOut)
		}
		// A query that evaluates no expression costs nothing.
		local, remote := localQuery(t, "pods", "-A", "--count"), s.query(t, cluster.Kubeconfig, "pods", "-A", "--count")
		if local != remote || local.code != 0 {
			t.Errorf("--count without expressions:\n%s", diff("local", local, "--query-server", remote))
		}
	})

	t.Run("Inflight", func(t *testing.T) {
		hc := s.adminClient(t)
		const count = `{"resources":["nodes"],"count":true}`
		want := strconv.Itoa(spec.Default().Nodes) + "\n"

		// A request whose body has not arrived holds the admin's one slot
		// (it is taken before the body is read) until the body comes.
		type answer struct {
			code int
			body string
			err  error
		}
		pending := func() (*io.PipeWriter, <-chan answer) {
			body, send := io.Pipe()
			answers := make(chan answer, 1)
			go func() {
				resp, err := hc.Post(s.url+queryserver.QueryPath, "application/json", body)
				if err != nil {
					answers <- answer{err: err}
					return
				}
				defer func() { _ = resp.Body.Close() }()
				b, err := io.ReadAll(resp.Body)
				answers <- answer{code: resp.StatusCode, body: string(b), err: err}
			}()
			return send, answers
		}
		send, first := pending()
		deadline := time.Now().Add(framework.HangTimeout)
		for {
			code, text := s.post(t, hc, strings.NewReader(count))
			if code == http.StatusTooManyRequests {
				var st metav1.Status
				if err := json.Unmarshal([]byte(text), &st); err != nil || st.Reason != metav1.StatusReasonTooManyRequests ||
					!strings.Contains(st.Message, `user "e2e-admin" already runs 1 queries on this server`) {
					t.Errorf("the second query's 429: %s", text)
				}
				break
			}
			// Until the pending request holds the slot, queries are
			// answered.
			if code != http.StatusOK || text != want {
				t.Fatalf("a query beside the pending one: %d %q, want 200 %q or 429", code, text, want)
			}
			select {
			case a := <-first:
				// This query held the slot when the pending one came:
				// that one was refused; send another.
				if a.code != http.StatusTooManyRequests {
					t.Fatalf("the pending query was answered before its body was sent: %d %q %v", a.code, a.body, a.err)
				}
				_ = send.Close()
				send, first = pending()
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("no query got 429 within %s while another of the same user was pending", framework.HangTimeout)
			}
			time.Sleep(20 * time.Millisecond)
		}
		// Another user is not limited by the admin's queries.
		kubeconfig, _ := serviceAccountKubeconfig(t, readerNamespace, "inflight-reader")
		if r := s.query(t, kubeconfig, "pods", "-n", readerNamespace, "--count"); r.code != 0 {
			t.Errorf("another user's query while the admin's slot is taken: exit %d, stderr %q", r.code, r.errOut)
		}

		if _, err := io.WriteString(send, count); err != nil {
			t.Fatal(err)
		}
		_ = send.Close()
		select {
		case a := <-first:
			if a.err != nil || a.code != http.StatusOK || a.body != want {
				t.Errorf("the pending query: %d %q %v, want 200 %q", a.code, a.body, a.err, want)
			}
		case <-time.After(framework.HangTimeout):
			t.Fatalf("the pending query got no answer within %s of its body", framework.HangTimeout)
		}
		// Its slot is free again.
		if code, text := s.post(t, hc, strings.NewReader(count)); code != http.StatusOK || text != want {
			t.Errorf("a query after the pending one ended: %d %q, want 200 %q", code, text, want)
		}
	})

	if code := s.run.Stop(t); code != 0 {
		t.Errorf("serve exited %d when stopped, want 0\nstderr:\n%s", code, s.run.ErrOut)
	}
}

// TestCostLimitFlag checks that serve's --cost-limit bounds one evaluation
// of a query's expressions, and that the warning the client gets says the
// limit is the server's.
func TestCostLimitFlag(t *testing.T) {
	s := startServer(t, "--cost-limit", "10")
	ps, err := cluster.Client.CoreV1().Pods(metav1.NamespaceAll).List(t.Context(), metav1.ListOptions{Limit: 1})
	if err != nil || len(ps.Items) == 0 {
		t.Fatalf("listing a pod: %v", err)
	}
	p := ps.Items[0]
	r := s.query(t, cluster.Kubeconfig, "pods", "-n", p.Namespace, "--field-selector", "metadata.name="+p.Name,
		"--count", "--where", `object.spec.containers.all(c, [1,2,3,4,5,6,7,8,9,10].all(x, x > 0))`)
	want := "cost limit exceeded: evaluation stopped after 10 cost units; simplify the expression or ask for a higher --cost-limit of the query server"
	if r.code != 0 || r.out != "0\n" || !strings.Contains(r.errOut, want) {
		t.Errorf("exit code %d, stdout %q, stderr %q; want 0, \"0\" and a warning with %q", r.code, r.out, r.errOut, want)
	}
	if code := s.run.Stop(t); code != 0 {
		t.Errorf("serve exited %d when stopped, want 0\nstderr:\n%s", code, s.run.ErrOut)
	}
}

// TestCostLimitOfTheServer checks that the client leaves the cost of a
// query's expressions to the query server: an expression whose cost
// estimate on any object is above the client's default limit is not
// refused by the client, and a server without a limit answers it.
func TestCostLimitOfTheServer(t *testing.T) {
	// Evaluating the expression takes a while under the race detector on a
	// busy machine: the server's time bound is not what is tested.
	s := startServer(t, "--cost-limit", "0", "--max-request-duration", "1h")
	ps, err := cluster.Client.CoreV1().Pods(metav1.NamespaceAll).List(t.Context(), metav1.ListOptions{Limit: 1})
	if err != nil || len(ps.Items) == 0 {
		t.Fatalf("listing a pod: %v", err)
	}
	p := ps.Items[0]
	// 520² iterations of about 4 units: just above the client's default
	// limit of 1,000,000, in its estimate and in fact.
	ints := make([]string, 520)
	for i := range ints {
		ints[i] = strconv.Itoa(i)
	}
	list := "[" + strings.Join(ints, ",") + "]"
	costly := list + ".map(x, " + list + ".filter(y, y == x).size()).sum() == " + strconv.Itoa(len(ints)) + " && object.metadata.name != \"\""
	r := s.query(t, cluster.Kubeconfig, "pods", "-n", p.Namespace, "--field-selector", "metadata.name="+p.Name, "--count", "--where", costly)
	if r.code != 0 || r.out != "1\n" {
		t.Errorf("exit code %d, stdout %q, stderr %q; want 0 and \"1\": the server's answer", r.code, r.out, r.errOut)
	}
}

// selected() reads the pods its selector names a label value of through
// the label index, and only a selector that names none reads every pod of
// the namespace. A query server charges each pod read to the request: over
// a namespace of more pods than the limit, the first is answered and the
// second refused, though the expression itself costs less.
func TestServedSelectedCost(t *testing.T) {
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "served-selected")
	for i := range 40 {
		cluster.CreatePod(t, ns, fmt.Sprintf("bulk-%02d", i), map[string]string{"app": "bulk"})
	}
	for i := range 2 {
		cluster.CreatePod(t, ns, fmt.Sprintf("few-%d", i), map[string]string{"app": "few"})
	}
	deployment := func(name string, sel *metav1.LabelSelector) {
		t.Helper()
		template := corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "few"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
		}
		zero := int32(0)
		if _, err := cluster.Client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
			// Labelled app as the workload's objects are, which other tests index.
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "few"}},
			Spec:       appsv1.DeploymentSpec{Replicas: &zero, Selector: sel, Template: template},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deployment("indexed", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "few"}})
	deployment("scan", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"bulk"}}}})
	pods, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The limit: below what reading the namespace's pods costs, above what
	// reading the pods labelled app=few and the --where cost.
	limit := len(pods.Items) - 2
	s := startServer(t, "--max-cost-per-request", strconv.Itoa(limit))
	for _, d := range []string{"indexed", "scan"} {
		dep, err := cluster.Client.AppsV1().Deployments(ns).Get(ctx, d, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sel, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
		if err != nil {
			t.Fatal(err)
		}
		selected, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil || len(selected.Items) == 0 {
			t.Fatalf("pods of %s: %d, %v", sel, len(selected.Items), err)
		}
		where := fmt.Sprintf(`object.metadata.name == %q && selected(object, "pods").size() == %d`, d, len(selected.Items))
		args := []string{"deployments", "-n", ns, "--where", where, "-o", "name"}
		if local := localQuery(t, args...); local.code != 0 || local.out != "deployment.apps/"+d+"\n" {
			t.Fatalf("local query %v: exit %d, stdout %q, stderr %q", args, local.code, local.out, local.errOut)
		}
		r := s.query(t, cluster.Kubeconfig, args...)
		switch d {
		case "indexed":
			if r.code != 0 || r.out != "deployment.apps/"+d+"\n" {
				t.Errorf("selected() of %s over %d pods, %d of them selected, limit %d: exit %d, stdout %q, stderr %q; want the answer",
					sel, len(pods.Items), len(selected.Items), limit, r.code, r.out, r.errOut)
			}
		case "scan":
			if r.code != app.ExitRuntime || r.out != "" ||
				!strings.Contains(r.errOut, "429 Too Many Requests") || !strings.Contains(r.errOut, "CEL cost budget exceeded") {
				t.Errorf("selected() of %s over %d pods, limit %d: exit %d, stdout %q, stderr %q; want exit 1 and 429 over the cost budget",
					sel, len(pods.Items), limit, r.code, r.out, r.errOut)
			}
		}
	}
}
