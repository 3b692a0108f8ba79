// Package olderserver_test runs the kube-state-metrics profile against a
// kube-apiserver without the admission policy APIs, as servers before
// Kubernetes 1.36 are: the exporter serves the rest and says what it
// leaves out.
package olderserver_test

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

var cluster *framework.Cluster

// missing are the profile's resources the server lacks.
var missing = []string{"mutatingadmissionpolicies", "mutatingadmissionpolicybindings"}

func TestMain(m *testing.M) {
	framework.APIServerFlags = map[string]string{
		"runtime-config": "admissionregistration.k8s.io/v1/mutatingadmissionpolicies=false,admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings=false",
		// The admission plugin would wait for the APIs forever.
		"disable-admission-plugins": "MutatingAdmissionPolicy",
	}
	os.Exit(framework.Main(m, &cluster))
}

func TestProfileServesWhatTheServerHas(t *testing.T) {
	out, err := cluster.Kubectl("api-resources", "--api-group=admissionregistration.k8s.io", "-o", "name")
	if err != nil {
		t.Fatalf("kubectl api-resources: %v\n%s", err, out)
	}
	for _, res := range missing {
		if strings.Contains(out, res+".") {
			t.Fatalf("the server has %s; the test needs a server without it:\n%s", res, out)
		}
	}
	addr := framework.ClosedPort(t)
	run := cluster.StartPlugin(t, "export", "--profile", "kube-state-metrics", "--web.listen-address", addr)
	url := "http://" + addr
	var readyz string
	framework.Eventually(t, "the exporter to be ready", func() bool {
		resp, err := http.Get(url + "/readyz")
		if err != nil {
			return false
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		readyz = string(b)
		return resp.StatusCode == http.StatusOK
	})
	for _, res := range missing {
		if !strings.Contains(readyz, "\n"+res+"\n") {
			t.Errorf("/readyz does not name %s:\n%s", res, readyz)
		}
	}
	mfs := framework.Scrape(t, url)
	if len(mfs["kube_namespace_created"].GetMetric()) == 0 {
		t.Error("kube_namespace_created has no series: the resources the server has are not served")
	}
	for name := range mfs {
		if strings.HasPrefix(name, "kube_mutatingadmissionpolicy") {
			t.Errorf("%s is served, from a resource the server lacks", name)
		}
	}
	if code := run.Stop(t); code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, run.ErrOut)
	}
	for _, res := range missing {
		if n := strings.Count(run.ErrOut.String(), `resource=`+res+"\n"); n != 1 {
			t.Errorf("%s is logged %d times, want once:\n%s", res, n, run.ErrOut)
		}
	}
}

func TestPrintRBACLeavesOutWhatTheServerLacks(t *testing.T) {
	code, out, errOut := framework.RunPlugin(t.Context(), nil, "export", "--profile", "kube-state-metrics", "--print-rbac", "--kubeconfig", cluster.Kubeconfig)
	if code != 0 {
		t.Fatalf("--print-rbac: exit %d\n%s", code, errOut)
	}
	for _, res := range missing {
		if strings.Contains(out, res) {
			t.Errorf("--print-rbac grants %s, which the server lacks:\n%s", res, out)
		}
		if !strings.Contains(errOut, "does not have "+res+",") {
			t.Errorf("--print-rbac does not warn of %s:\n%s", res, errOut)
		}
	}
	if !strings.Contains(out, "validatingadmissionpolicies") {
		t.Errorf("--print-rbac leaves out validatingadmissionpolicies, which the server has:\n%s", out)
	}
}
