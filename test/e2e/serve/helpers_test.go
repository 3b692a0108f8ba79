package serve_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubectl-informer/kubectl-informer/pkg/queryserver"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// server is a "kubectl informer serve" running in process.
type server struct {
	run *framework.Run
	// url is https://HOST:PORT.
	url string
	// ca is the self-signed serving certificate, which clients trust.
	ca string
}

// startServer runs "kubectl informer serve pods,nodes,deployments -A" as
// the admin, with the config file, a self-signed certificate in a
// directory of the test's and flags, and returns once its /readyz answers
// 200. It stops when the test ends.
func startServer(t *testing.T, flags ...string) *server {
	t.Helper()
	addr := framework.ClosedPort(t)
	certDir := t.TempDir()
	args := append([]string{"serve", "pods,nodes,deployments", "-A",
		"--listen-address", addr, "--cert-dir", certDir, "--config", configFile}, flags...)
	s := &server{
		run: cluster.StartPlugin(t, args...),
		url: "https://" + addr,
		ca:  filepath.Join(certDir, queryserver.SelfSignedCertFile),
	}
	s.waitReady(t)
	return s
}

// waitReady waits up to a minute for GET /readyz to answer 200 "ok" over
// TLS verified with the serving certificate.
func (s *server) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(framework.HangTimeout)
	var last string
	for {
		if _, err := os.Stat(s.ca); err == nil {
			hc := s.anonymousClient(t)
			hc.Timeout = 2 * time.Second
			resp, err := hc.Get(s.url + "/readyz")
			if err == nil {
				body, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusOK && string(body) == "ok\n" {
					hc.CloseIdleConnections()
					return
				}
				last = resp.Status + ": " + string(body)
			} else {
				last = err.Error()
			}
			hc.CloseIdleConnections()
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/readyz did not answer 200 within %s (last: %s)\nstderr:\n%s", s.url, framework.HangTimeout, last, s.run.ErrOut)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// anonymousClient returns an HTTPS client that trusts the serving
// certificate and presents no credentials.
func (s *server) anonymousClient(t *testing.T) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(s.ca)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s holds no certificate", s.ca)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

// adminClient returns an HTTPS client that trusts the serving certificate
// and presents the admin's client certificate, as "query --query-server" does.
func (s *server) adminClient(t *testing.T) *http.Client {
	t.Helper()
	c := rest.CopyConfig(cluster.Config)
	c.Host, c.APIPath = s.url, ""
	c.CAData, c.CAFile, c.ServerName = nil, s.ca, ""
	hc, err := rest.HTTPClientFor(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hc.CloseIdleConnections)
	return hc
}

// query runs "kubectl informer query ARGS --query-server URL --server-ca CA"
// with kubeconfig and the config file.
func (s *server) query(t *testing.T, kubeconfig string, args ...string) result {
	t.Helper()
	args = append([]string{"query", "--kubeconfig", kubeconfig, "--config", configFile}, args...)
	return run(t, append(args, "--query-server", s.url, "--server-ca", s.ca)...)
}

// post sends body to POST /v1/query with hc and returns the status code
// and the body of the answer.
func (s *server) post(t *testing.T, hc *http.Client, body io.Reader) (int, string) {
	t.Helper()
	resp, err := hc.Post(s.url+queryserver.QueryPath, "application/json", body)
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

// serviceAccountKubeconfig creates the service account name in namespace
// ns, allowed list, watch and get on pods in ns only, and writes a
// kubeconfig for it with a token from the TokenRequest API. It returns
// once the API server's authorizer allows the service account to list
// pods in ns, and the account's user name.
func serviceAccountKubeconfig(t *testing.T, ns, name string) (kubeconfig, user string) {
	t.Helper()
	return cluster.ServiceAccountKubeconfig(t, ns, name, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch", "get"}})
}

// waitAllowed waits up to 30 seconds until a SubjectAccessReview of spec
// is allowed: RBAC objects take effect shortly after they are created,
// and a query server caches a denial.
func waitAllowed(t *testing.T, spec authorizationv1.SubjectAccessReviewSpec) {
	t.Helper()
	deadline := time.Now().Add(framework.HangTimeout)
	for {
		sar, err := cluster.Client.AuthorizationV1().SubjectAccessReviews().Create(context.Background(),
			&authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sar.Status.Allowed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s may still not %s %s in %q after %s", spec.User, spec.ResourceAttributes.Verb, spec.ResourceAttributes.Resource, spec.ResourceAttributes.Namespace, framework.HangTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// diff describes how two results differ, for messages.
func diff(aName string, a result, bName string, b result) string {
	return fmt.Sprintf("--- %s: exit code %d\nstdout:\n%sstderr:\n%s--- %s: exit code %d\nstdout:\n%sstderr:\n%s",
		aName, a.code, a.out, a.errOut, bName, b.code, b.out, b.errOut)
}
