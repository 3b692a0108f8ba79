package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
	"github.com/kubectl-informer/kubectl-informer/pkg/queryserver"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestAttackFiles plays callers of a query server that try to read the
// server's files, to spend its time on a template, and to grow its answer
// cache with deleted objects, as a service account allowed to list pods in
// one namespace only, and as a user granted nothing.
func TestAttackFiles(t *testing.T) {
	ns := cluster.NewNamespace(t, "attack-files")
	for i := range 2 {
		cluster.CreatePod(t, ns, fmt.Sprintf("p%d", i), map[string]string{"app": "files"})
	}
	s := startServer(t, "--max-request-duration", "2s", "--max-cost-per-request", "1000", "--max-inflight-per-user", "1")
	kubeconfig, _ := serviceAccountKubeconfig(t, ns, "files-reader")
	nobody, _, err := cluster.AddUser("e2e-serve-files-nobody")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("ServerFiles", func(t *testing.T) { testServerFiles(t, s, ns, kubeconfig, nobody) })
	t.Run("ClientFiles", func(t *testing.T) { testClientFiles(t, s, ns, kubeconfig) })
	t.Run("NestedTemplate", func(t *testing.T) { testNestedTemplate(t, s, ns, kubeconfig) })
	t.Run("DeletedAnswers", func(t *testing.T) { testDeletedAnswers(t, s) })
}

// testServerFiles: a request naming a file of the server's host in any
// -file format is refused with 400, before any authorization and whatever
// the file: the answer for the host's token, for an existing file and for
// a missing one is the same, and holds nothing of the files.
func testServerFiles(t *testing.T, s *server, ns, kubeconfig, nobody string) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	const secret = "SECRET-SERVING-TOKEN"
	if err := os.WriteFile(token, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	paths := []string{token, filepath.Join(dir, "missing"), "/etc/passwd", "/var/run/secrets/kubernetes.io/serviceaccount/token"}
	for _, caller := range []struct{ name, kubeconfig string }{{"namespace reader", kubeconfig}, {"user granted nothing", nobody}} {
		hc := s.kubeconfigClient(t, caller.kubeconfig)
		for _, format := range []string{"go-template-file", "templatefile", "jsonpath-file", "custom-columns-file"} {
			type answer struct {
				code int
				body string
			}
			var first answer
			for i, path := range paths {
				for j, q := range []queryserver.Query{
					{Resources: []string{"pods"}, Namespace: ns, Where: "false", Output: format, Print: queryserver.Print{Template: path}},
					{Resources: []string{"pods"}, Namespace: ns, Output: format + "=" + path},
				} {
					body, err := json.Marshal(q)
					if err != nil {
						t.Fatal(err)
					}
					code, text := s.post(t, hc, strings.NewReader(string(body)))
					got := answer{code, text}
					if i == 0 && j == 0 {
						first = got
						var st metav1.Status
						if err := json.Unmarshal([]byte(text), &st); err != nil || code != http.StatusBadRequest ||
							!strings.Contains(st.Message, "-o "+format) || !strings.Contains(st.Message, "=TEMPLATE") {
							t.Errorf("%s, -o %s of the server's token: %d %s; want 400 naming the format to send the text with", caller.name, format, code, text)
						}
					}
					if got != first {
						t.Errorf("%s, -o %s: the answer for %s differs from the one for %s:\n%d %s\n%d %s", caller.name, format, path, paths[0], got.code, got.body, first.code, first.body)
					}
					if strings.Contains(text, secret) || strings.Contains(text, "root:") || strings.Contains(text, dir) {
						t.Errorf("%s, -o %s of %s: the answer shows the file or its path: %s", caller.name, format, path, text)
					}
				}
			}
		}
		hc.CloseIdleConnections()
	}
}

// testClientFiles: query --query-server reads a template file where it runs and
// sends its text, and prints what a local query prints.
func testClientFiles(t *testing.T, s *server, ns, kubeconfig string) {
	dir := t.TempDir()
	files := map[string]string{
		"names.tmpl":     `{{range .items}}{{.metadata.name}} {{.metadata.labels.app}}{{"\n"}}{{end}}`,
		"names.jsonpath": `{range .items[*]}{.metadata.name}{"\t"}{.metadata.namespace}{"\n"}{end}`,
		"columns.txt":    "POD   APP\n.metadata.name   .metadata.labels.app\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"-o", "go-template-file=" + filepath.Join(dir, "names.tmpl")},
		{"-o", "templatefile", "--template", filepath.Join(dir, "names.tmpl")},
		{"-o", "jsonpath-file=" + filepath.Join(dir, "names.jsonpath")},
		{"-o", "custom-columns-file=" + filepath.Join(dir, "columns.txt")},
		{"-o", "custom-columns-file=" + filepath.Join(dir, "columns.txt"), "--no-headers"},
	} {
		args = append([]string{"pods", "-n", ns}, args...)
		remote, local := s.query(t, kubeconfig, args...), localQuery(t, args...)
		if remote != local || local.code != 0 || !strings.Contains(local.out, "p1") {
			t.Errorf("query %s:\n%s", strings.Join(args, " "), diff("local", local, "--query-server", remote))
		}
	}
	r := s.query(t, kubeconfig, "pods", "-n", ns, "-o", "go-template-file="+filepath.Join(dir, "missing"))
	if r.code != app.ExitUsage || r.out != "" || !strings.Contains(r.errOut, "missing") {
		t.Errorf("a missing local template file: exit %d, stdout %q, stderr %q; want a usage error naming it", r.code, r.out, r.errOut)
	}
}

// nestedTemplate is a Go template of depth levels, each calling the next
// twice, whose deepest prints leaf: 2^depth times.
func nestedTemplate(depth int, leaf string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{{define "t%d"}}%s{{end}}`, depth, leaf)
	for i := depth - 1; i >= 0; i-- {
		fmt.Fprintf(&b, `{{define "t%d"}}{{template "t%d" .}}{{template "t%d" .}}{{end}}`, i, i+1, i+1)
	}
	b.WriteString(`{{template "t0" .}}`)
	return b.String()
}

// testNestedTemplate: a template of 24 nested pairs of calls, printing
// nothing or a byte each time, is stopped once --max-request-duration is
// spent: an error, not the whole output; then the caller's one query slot
// is free again, so the server stopped working on it.
func testNestedTemplate(t *testing.T, s *server, ns, kubeconfig string) {
	for _, c := range []struct {
		name, leaf string
		// started: the answer began before it was stopped.
		started bool
	}{
		{"printing nothing", "", false},
		{"printing", "x", true},
	} {
		tmpl := nestedTemplate(24, c.leaf)
		start := time.Now()
		r := s.query(t, kubeconfig, "pods", "-n", ns, "-o", "go-template="+tmpl)
		t.Logf("%s: a template of %d bytes, 2^24 calls: exit %d after %s, %d bytes printed", c.name, len(tmpl), r.code, time.Since(start).Round(time.Millisecond), len(r.out))
		switch {
		case r.code != app.ExitRuntime || len(r.out) >= 1<<24:
			t.Errorf("%s: exit %d, %d bytes printed, stderr %q; want exit 1 and less than the whole output", c.name, r.code, len(r.out), r.errOut)
		case !c.started && (r.out != "" || !strings.Contains(r.errOut, "did not finish within the server's longest request duration (2s)")):
			t.Errorf("%s: stdout %q, stderr %q; want nothing printed and the request duration named", c.name, r.out, r.errOut)
		case c.started && !strings.Contains(r.errOut, "evaluation interrupted: printing"):
			t.Errorf("%s: stderr %q; want printing interrupted", c.name, r.errOut)
		}
		framework.Eventually(t, "the caller's query slot is free again", func() bool {
			return s.query(t, kubeconfig, "pods", "-n", ns, "--count").out == "2\n"
		})
	}
	r := s.query(t, kubeconfig, "pods", "-n", ns, "-o", "jsonpath={..metadata..labels..app}")
	if r.code != app.ExitUsage || !strings.Contains(r.errOut, "recursive descents") {
		t.Errorf("a JSONPath template of three recursive descents: exit %d, stderr %q; want a usage error", r.code, r.errOut)
	}
}

// testDeletedAnswers: the answer cache counts the objects whose text it
// keeps on /metrics, and once they are deleted through the API its count
// goes down by as many; /metrics is the admin's only.
func testDeletedAnswers(t *testing.T, s *server) {
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "attack-churn")
	const pods = 20
	for i := range pods {
		cluster.CreatePod(t, ns, fmt.Sprintf("c%02d", i), nil)
	}
	zero := int64(0)
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	})
	framework.Eventually(t, "the server holds the pods", func() bool {
		return s.query(t, cluster.Kubeconfig, "pods", "-n", ns, "--count").out == fmt.Sprintf("%d\n", pods)
	})
	admin := s.adminClient(t)
	if r := s.query(t, cluster.Kubeconfig, "pods", "-n", ns, "-o", "json"); r.code != 0 {
		t.Fatalf("query -o json: exit %d, stderr %q", r.code, r.errOut)
	}
	held := s.answerCache(t, admin)
	if held.objects < pods || held.bytes <= 0 {
		t.Fatalf("after answering %d pods as -o json the answer cache holds %v; want at least %d objects", pods, held, pods)
	}
	if err := cluster.Client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	var now cacheState
	framework.Eventually(t, "the answer cache forgets the deleted pods", func() bool {
		now = s.answerCache(t, admin)
		return now.objects <= held.objects-pods && now.bytes < held.bytes
	})
	t.Logf("answer cache: %v before the deletion, %v after", held, now)

	hc := s.kubeconfigClient(t, s.readerKubeconfig(t))
	defer hc.CloseIdleConnections()
	resp, err := hc.Get(s.url + queryserver.MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /metrics as a namespace reader: %s, want 403", resp.Status)
	}
}

// cacheState is what /metrics says of the answer cache.
type cacheState struct{ objects, bytes float64 }

func (c cacheState) String() string { return fmt.Sprintf("%g objects, %g bytes", c.objects, c.bytes) }

// answerCache reads the answer cache's gauges from /metrics with hc.
func (s *server) answerCache(t *testing.T, hc *http.Client) cacheState {
	t.Helper()
	resp, err := hc.Get(s.url + queryserver.MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	value := func(name string) float64 {
		f := families[name]
		if f == nil || len(f.GetMetric()) != 1 {
			t.Fatalf("/metrics has no %s", name)
		}
		return f.GetMetric()[0].GetGauge().GetValue()
	}
	return cacheState{objects: value("kubectl_informer_answer_cache_objects"), bytes: value("kubectl_informer_answer_cache_bytes")}
}

// readerKubeconfig returns the kubeconfig of a service account that may
// list pods in a namespace of its own.
func (s *server) readerKubeconfig(t *testing.T) string {
	t.Helper()
	kubeconfig, _ := serviceAccountKubeconfig(t, cluster.NewNamespace(t, "attack-metrics"), "metrics-reader")
	return kubeconfig
}

// kubeconfigClient returns an HTTPS client that trusts the serving
// certificate and presents the credentials of kubeconfig.
func (s *server) kubeconfigClient(t *testing.T, kubeconfig string) *http.Client {
	t.Helper()
	c, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c.Host, c.APIPath = s.url, ""
	c.CAData, c.CAFile, c.ServerName = nil, s.ca, ""
	hc, err := rest.HTTPClientFor(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hc.CloseIdleConnections)
	return hc
}
