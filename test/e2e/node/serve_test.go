package node

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestDeployServe applies deploy/serve as users apply it and asks the query
// server as a user of the cluster does, following deploy/README.md: through
// kubectl port-forward to its Service, trusting the certificate the server
// presents, with the plugin's own client (query --query-server). A ServiceAccount
// allowed to list the pods of a namespace gets exactly the pods the API
// server holds there, running on the node; one without the grant is
// refused with the API server's reason.
func TestDeployServe(t *testing.T) {
	ctx := context.Background()
	const serveNS, name = "kubectl-informer", "kubectl-informer-query"
	applyKustomize(t, "deploy/serve")
	waitAvailable(t, serveNS, name)

	ns := cluster.NewNamespace(t, "asked")
	t.Cleanup(func() { _ = cluster.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}) })
	for i := range 3 {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("sleeper-%d", i), Namespace: ns},
			Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: new(int64),
				NodeSelector:                  map[string]string{"kubernetes.io/hostname": framework.NodeName},
				Containers: []corev1.Container{{
					Name: "sleep", Image: framework.TestappImage, ImagePullPolicy: corev1.PullNever, Args: []string{"sleep"},
				}},
			},
		}
		if _, err := cluster.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	framework.Eventually(t, "the pods of "+ns+" run", func() bool {
		pods, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
				return false
			}
		}
		return len(pods.Items) == 3
	})

	svc, err := cluster.Client.CoreV1().Services(serveNS).Get(ctx, name, metav1.GetOptions{})
	if err != nil || len(svc.Spec.Ports) != 1 {
		t.Fatalf("want the Service %s with one port: %v, %v", name, svc, err)
	}
	server := portForward(t, serveNS, "svc/"+name, strconv.Itoa(int(svc.Spec.Ports[0].Port)))
	ca := presentedCertificates(t, server)
	url := "https://" + server

	reader, _ := cluster.ServiceAccountKubeconfig(t, ns, "reader", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch"}})
	stranger, _ := cluster.ServiceAccountKubeconfig(t, ns, "stranger")

	// The answer is what the API server says of the namespace's pods.
	type pod struct{ Name, UID, Node, Phase, IP string }
	var got, want []pod
	framework.Eventually(t, "the query server answers the pods of "+ns+" as the API server does", func() bool {
		code, out, errOut := framework.RunPlugin(ctx, nil, "query", "pods", "-n", ns, "-o", "json", "--query-server", url, "--server-ca", ca, "--kubeconfig", reader)
		if code != 0 {
			t.Logf("query as the reader: exit %d: %s", code, errOut)
			return false
		}
		var list corev1.PodList
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("query -o json printed what is not a list of pods: %v\n%s", err, out)
		}
		api, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, want = nil, nil
		for _, p := range list.Items {
			got = append(got, pod{p.Name, string(p.UID), p.Spec.NodeName, string(p.Status.Phase), p.Status.PodIP})
		}
		for _, p := range api.Items {
			want = append(want, pod{p.Name, string(p.UID), p.Spec.NodeName, string(p.Status.Phase), p.Status.PodIP})
		}
		key := func(a, b pod) int { return strings.Compare(a.Name, b.Name) }
		slices.SortFunc(got, key)
		slices.SortFunc(want, key)
		return slices.Equal(got, want)
	})
	for _, p := range got {
		if p.Node != framework.NodeName || p.Phase != string(corev1.PodRunning) {
			t.Errorf("pod %s answered on %q in phase %s, want running on %s", p.Name, p.Node, p.Phase, framework.NodeName)
		}
	}
	// The server's own index (deploy/serve/config.yaml) answers the same.
	code, out, errOut := framework.RunPlugin(ctx, nil, "query", "pods", "-n", ns, "--by", "byNode="+framework.NodeName, "-o", "name", "--query-server", url, "--server-ca", ca, "--kubeconfig", reader)
	var names []string
	for _, p := range want {
		names = append(names, "pod/"+p.Name)
	}
	if code != 0 || !slices.Equal(framework.Lines(out), names) {
		t.Errorf("query --by byNode=%s: exit %d, printed %q (%s); want %q", framework.NodeName, code, out, errOut, names)
	}

	// Without the grant, the server refuses as the API server would.
	code, out, errOut = framework.RunPlugin(ctx, nil, "query", "pods", "-n", ns, "--query-server", url, "--server-ca", ca, "--kubeconfig", stranger)
	wantErr := fmt.Sprintf(`error: Error from the query server (Forbidden): pods is forbidden: User "system:serviceaccount:%s:stranger" cannot list resource "pods" in API group "" in the namespace %q`, ns, ns)
	if code != app.ExitRuntime || out != "" || !strings.Contains(errOut, wantErr) {
		t.Errorf("query by a ServiceAccount without the grant: exit %d, stdout %q, stderr %q; want exit %d and %s", code, out, errOut, app.ExitRuntime, wantErr)
	}
}

// forwarding is the line kubectl port-forward prints for its local port.
var forwarding = regexp.MustCompile(`^Forwarding from 127\.0\.0\.1:(\d+) ->`)

// portForward runs kubectl port-forward to port of target (such as
// svc/NAME) in namespace, on a local port of the system's choosing, until
// the test ends, and returns the local address.
func portForward(t *testing.T, namespace, target, port string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(cluster.BinDir, "kubectl"), "--kubeconfig", cluster.Kubeconfig, //nolint:gosec // G204: the project's kubectl
		"-n", namespace, "port-forward", target, ":"+port, "--address", "127.0.0.1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr framework.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if m := forwarding.FindStringSubmatch(lines.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return net.JoinHostPort("127.0.0.1", m[1])
		}
	}
	t.Fatalf("kubectl port-forward %s ended without forwarding: %s", target, stderr.String())
	return ""
}

// presentedCertificates writes the certificates the TLS server at addr
// presents, as openssl s_client -showcerts shows them, to a file and
// returns its path: what a client of a server with a self-signed
// certificate trusts.
func presentedCertificates(t *testing.T, addr string) string {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // G402: reading the certificate to trust
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	var certs []byte
	for _, c := range conn.ConnectionState().PeerCertificates {
		certs = append(certs, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	path := filepath.Join(t.TempDir(), "server-ca.crt")
	if err := os.WriteFile(path, certs, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
