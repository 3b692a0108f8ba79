package deploy_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// The query server of deploy/serve, as its manifests declare it.
const (
	serveDir            = "deploy/serve"
	queryServiceAccount = "kubectl-informer-query"
	queryConfigFile     = "/etc/kubectl-informer/config.yaml"
	queryPort           = 8443
	// componentLabel tells the query server's objects from the
	// exporter's: every object of deploy/serve but the shared Namespace
	// carries it with the value "query".
	componentLabel = "app.kubernetes.io/component"
	// authReaderRole is the built-in Role in kube-system that grants get,
	// list and watch on the ConfigMap holding the cluster's client CA.
	authReaderRole = "extension-apiserver-authentication-reader"
)

// queryPod is the query server's pod: queries and probes over HTTPS on 8443.
var queryPod = podWant{serviceAccount: queryServiceAccount, portName: "query", port: queryPort, scheme: corev1.URISchemeHTTPS}

// renderServe renders deploy/serve with the project's kubectl.
func renderServe(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	out, stderr, err := kubectl("kustomize", filepath.Join(cluster.Root, serveDir))
	if err != nil || stderr != "" {
		t.Fatalf("kubectl kustomize %s: %v\n%s", serveDir, err, stderr)
	}
	return decodeAll(t, []byte(out))
}

// queryDeployment returns the one Deployment among objs.
func queryDeployment(t *testing.T, objs []*unstructured.Unstructured) *appsv1.Deployment {
	t.Helper()
	var found []*appsv1.Deployment
	for _, u := range objs {
		if u.GetKind() == "Deployment" {
			var d appsv1.Deployment
			fromUnstructured(t, u, &d)
			found = append(found, &d)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s renders %d Deployments, want 1", serveDir, len(found))
	}
	if n := len(found[0].Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("Deployment %s: %d containers, want 1", found[0].Name, n)
	}
	return found[0]
}

// serveArgs are the arguments of "kubectl informer serve": the resources,
// then each --flag=value by flag, in order, and the flags without a value.
type serveArgs struct {
	resources string
	values    map[string][]string
	switches  []string
}

// parseServeArgs parses the container arguments of the query server; they
// must be "serve RESOURCES" then flags only, written --flag=value.
func parseServeArgs(t *testing.T, args []string) serveArgs {
	t.Helper()
	if len(args) < 2 || args[0] != "serve" || strings.HasPrefix(args[1], "-") {
		t.Fatalf("args %q: want serve RESOURCES FLAGS...", args)
	}
	a := serveArgs{resources: args[1], values: map[string][]string{}}
	for _, arg := range args[2:] {
		if !strings.HasPrefix(arg, "--") {
			t.Fatalf("args %q: %q is not a --flag or --flag=value", args, arg)
		}
		if name, value, ok := strings.Cut(arg, "="); ok {
			a.values[name] = append(a.values[name], value)
		} else {
			a.switches = append(a.switches, arg)
		}
	}
	return a
}

// value returns the one value of flag, or "" when it is not given; more
// than one fails the test.
func (a serveArgs) value(t *testing.T, flag string) string {
	t.Helper()
	switch v := a.values[flag]; len(v) {
	case 0:
		return ""
	case 1:
		return v[0]
	default:
		t.Fatalf("%s given %d times: %q", flag, len(v), v)
		return ""
	}
}

// resolve resolves resource arguments as kubectl and the plugin do and
// returns them as resource.group (the resource alone in the core group),
// sorted.
func resolve(t *testing.T, args ...string) []string {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(true)
	kubeconfig, cacheDir := cluster.Kubeconfig, t.TempDir()
	flags.KubeConfig, flags.CacheDir = &kubeconfig, &cacheDir
	r, err := factory.NewResolverFor(flags)
	if err != nil {
		t.Fatal(err)
	}
	resources, err := r.Resolve(args)
	if err != nil {
		t.Fatalf("resolving %q: %v", args, err)
	}
	var out []string
	for _, res := range resources {
		out = append(out, res.String())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkServeRendering checks what deploy/serve renders, as the server
// admitted it: the Deployment, the Service in front of it, the QueryConfig,
// the ClusterRole and both bindings, and the labels that tell its objects
// from the exporter's.
func checkServeRendering(t *testing.T, r rendering) {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, k := range keys(r.admitted) {
		objs = append(objs, r.admitted[k])
	}
	d := queryDeployment(t, objs)
	what := "Deployment " + d.Name
	checkPodTemplate(t, what, &d.Spec.Template, queryPod)
	if got := ptrValue(d.Spec.Replicas); got != 1 {
		t.Errorf("%s has %d replicas, want 1: each replica would have a self-signed certificate of its own", what, got)
	}
	c := d.Spec.Template.Spec.Containers[0]
	checkCommand(t, what, c)
	args := parseServeArgs(t, c.Args)
	served := resolve(t, args.resources)
	if !slices.Equal(args.switches, []string{"--all-namespaces"}) && !slices.Equal(args.switches, []string{"-A"}) {
		t.Errorf("%s: flags without a value %q, want only --all-namespaces", what, args.switches)
	}
	if got := args.value(t, "--config"); got != queryConfigFile {
		t.Errorf("%s: --config=%q, want %s", what, got, queryConfigFile)
	}
	if got := args.value(t, "--listen-address"); got != ":8443" {
		t.Errorf("%s: --listen-address=%q, want :8443", what, got)
	}
	for _, flag := range []string{"--tls-cert-file", "--tls-private-key-file", "--anonymous-auth", "--client-ca-file"} {
		if _, ok := args.values[flag]; ok {
			t.Errorf("%s: %s is given", what, flag)
		}
	}
	// The self-signed certificate is written into a writable emptyDir.
	certDir := args.value(t, "--cert-dir")
	volumes := map[string]corev1.Volume{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		volumes[v.Name] = v
	}
	writable := false
	for _, m := range c.VolumeMounts {
		if m.MountPath == certDir && !m.ReadOnly && m.SubPath == "" && volumes[m.Name].EmptyDir != nil {
			writable = true
		}
	}
	if certDir == "" || !writable {
		t.Errorf("%s: --cert-dir=%q is not a writable emptyDir mount: %+v", what, certDir, c.VolumeMounts)
	}
	// The config volume is the rendered ConfigMap.
	var config *corev1.ConfigMap
	for _, m := range c.VolumeMounts {
		if m.MountPath != filepath.Dir(queryConfigFile) || volumes[m.Name].ConfigMap == nil {
			continue
		}
		u, ok := r.admitted["ConfigMap/"+d.Namespace+"/"+volumes[m.Name].ConfigMap.Name]
		if !ok {
			t.Fatalf("%s mounts ConfigMap %s, which is not rendered", what, volumes[m.Name].ConfigMap.Name)
		}
		config = &corev1.ConfigMap{}
		fromUnstructured(t, u, config)
	}
	if config == nil {
		t.Fatalf("%s mounts no ConfigMap at %s", what, filepath.Dir(queryConfigFile))
	}
	checkQueryConfig(t, config, served)

	var services []corev1.Service
	for _, u := range objs {
		labels := u.GetLabels()
		if u.GetKind() == "Namespace" {
			if _, ok := labels[componentLabel]; ok {
				t.Errorf("the Namespace, which deploy/base declares too, has the label %s", componentLabel)
			}
			if got := labels["pod-security.kubernetes.io/enforce"]; got != "restricted" {
				t.Errorf("Namespace %s enforces the Pod Security Standard %q, want restricted", u.GetName(), got)
			}
			continue
		}
		if labels[componentLabel] != "query" {
			t.Errorf("%s: label %s=%q, want query", key(u), componentLabel, labels[componentLabel])
		}
		switch u.GetKind() {
		case "Service":
			var s corev1.Service
			fromUnstructured(t, u, &s)
			services = append(services, s)
		case "ClusterRole":
			var cr rbacv1.ClusterRole
			fromUnstructured(t, u, &cr)
			checkQueryClusterRole(t, &cr, served)
		case "ClusterRoleBinding", "RoleBinding":
			checkQueryBinding(t, u, objs)
		case "ServiceAccount":
			if u.GetName() != queryServiceAccount || u.GetNamespace() != namespace {
				t.Errorf("ServiceAccount %s/%s, want %s/%s", u.GetNamespace(), u.GetName(), namespace, queryServiceAccount)
			}
		}
	}
	if len(services) != 1 {
		t.Fatalf("%s renders %d Services, want 1", serveDir, len(services))
	}
	checkQueryService(t, &services[0], d, args.values["--tls-san"])
}

// checkQueryConfig checks that the ConfigMap holds a QueryConfig with
// indexes, on served resources only.
func checkQueryConfig(t *testing.T, cm *corev1.ConfigMap, served []string) {
	t.Helper()
	text, ok := cm.Data[filepath.Base(queryConfigFile)]
	if !ok {
		t.Fatalf("ConfigMap %s has no %s", cm.Name, filepath.Base(queryConfigFile))
	}
	cfg, err := plan.ParseConfig(cm.Name, []byte(text))
	if err != nil {
		t.Fatalf("ConfigMap %s: %v", cm.Name, err)
	}
	if len(cfg.Indexes) == 0 {
		t.Errorf("ConfigMap %s: the QueryConfig has no indexes", cm.Name)
	}
	for res := range cfg.Indexes {
		for _, r := range resolve(t, res) {
			if !slices.Contains(served, r) {
				t.Errorf("ConfigMap %s: indexes of %s, which is not served (%v)", cm.Name, res, served)
			}
		}
	}
}

// queryServerGrants returns what the query server's ClusterRole must grant,
// and grant alone, as resource.group/verb, sorted: list and watch on each
// served resource, create on tokenreviews and subjectaccessreviews.
func queryServerGrants(served []string) []string {
	out := []string{"tokenreviews.authentication.k8s.io/create", "subjectaccessreviews.authorization.k8s.io/create"}
	for _, r := range served {
		out = append(out, r+"/list", r+"/watch")
	}
	slices.Sort(out)
	return out
}

// checkQueryClusterRole checks that the ClusterRole grants exactly
// queryServerGrants(served): plain resources, no wildcard, subresource,
// resource name, non-resource URL or aggregation.
func checkQueryClusterRole(t *testing.T, cr *rbacv1.ClusterRole, served []string) {
	t.Helper()
	if cr.AggregationRule != nil {
		t.Errorf("ClusterRole %s aggregates other roles", cr.Name)
	}
	var got []string
	for _, rule := range cr.Rules {
		if len(rule.NonResourceURLs) > 0 || len(rule.ResourceNames) > 0 {
			t.Errorf("ClusterRole %s has a rule with non-resource URLs or resource names: %+v", cr.Name, rule)
		}
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				for _, v := range rule.Verbs {
					if g == "*" || res == "*" || v == "*" || strings.Contains(res, "/") {
						t.Errorf("ClusterRole %s grants %q on %q in group %q: want plain verbs and resources, no wildcard or subresource", cr.Name, v, res, g)
					}
					got = append(got, qualified(res, g)+"/"+v)
				}
			}
		}
	}
	slices.Sort(got)
	got = slices.Compact(got)
	if want := queryServerGrants(served); !slices.Equal(got, want) {
		t.Errorf("ClusterRole %s grants %q, want exactly %q", cr.Name, got, want)
	}
}

// checkQueryBinding checks the ClusterRoleBinding to the rendered
// ClusterRole and the RoleBinding in kube-system to the built-in Role that
// reads the client CA: each binds the query server's ServiceAccount alone.
func checkQueryBinding(t *testing.T, u *unstructured.Unstructured, objs []*unstructured.Unstructured) {
	t.Helper()
	var b struct {
		RoleRef  rbacv1.RoleRef   `json:"roleRef"`
		Subjects []rbacv1.Subject `json:"subjects"`
	}
	fromUnstructured(t, u, &b)
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: queryServiceAccount, Namespace: namespace}}
	if !slices.Equal(b.Subjects, subjects) {
		t.Errorf("%s binds %+v, want %+v", key(u), b.Subjects, subjects)
	}
	var want rbacv1.RoleRef
	switch u.GetKind() {
	case "ClusterRoleBinding":
		for _, o := range objs {
			if o.GetKind() == "ClusterRole" {
				want = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: o.GetName()}
			}
		}
	case "RoleBinding":
		if u.GetNamespace() != "kube-system" {
			t.Errorf("%s: want a RoleBinding in kube-system", key(u))
		}
		want = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: authReaderRole}
	}
	if b.RoleRef != want {
		t.Errorf("%s binds %+v, want %+v", key(u), b.RoleRef, want)
	}
}

// checkQueryService checks the Service: port 8443 named query onto the
// container's port, selecting the query server's pods, not the exporter's,
// under names the self-signed certificate is valid for.
func checkQueryService(t *testing.T, s *corev1.Service, d *appsv1.Deployment, sans []string) {
	t.Helper()
	what := "Service " + s.Name
	if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Name != "query" || s.Spec.Ports[0].Port != queryPort ||
		s.Spec.Ports[0].TargetPort.String() != "query" {
		t.Errorf("%s: ports %+v, want query on %d to the container port query", what, s.Spec.Ports, queryPort)
	}
	if !selects(s.Spec.Selector, d.Spec.Template.Labels) {
		t.Errorf("%s: selector %v does not select the pods %v", what, s.Spec.Selector, d.Spec.Template.Labels)
	}
	if s.Spec.Selector[componentLabel] != "query" {
		t.Errorf("%s: selector %v: want %s=query, which the exporter's pods lack", what, s.Spec.Selector, componentLabel)
	}
	for _, name := range []string{
		s.Name,
		s.Name + "." + s.Namespace,
		s.Name + "." + s.Namespace + ".svc",
		s.Name + "." + s.Namespace + ".svc.cluster.local",
	} {
		if !slices.Contains(sans, name) {
			t.Errorf("Deployment %s: --tls-san %q lack %s", d.Name, sans, name)
		}
	}
}

// TestServeNamespaceIsTheBases checks that deploy/serve declares the
// namespace exactly as deploy/base does, so that applying both, in any
// order, leaves it as either declares it.
func TestServeNamespaceIsTheBases(t *testing.T) {
	checkCopy(t, serveDir+"/namespace.yaml", "deploy/base/namespace.yaml")
}

// queryServer is the query server of deploy/serve, running in process.
type queryServer struct {
	run *framework.Run
	// url is https://localhost:PORT, as through kubectl port-forward.
	url string
	// ca holds the certificates the server presented in the TLS
	// handshake, as "openssl s_client -showcerts" prints them.
	ca string
}

// startQueryServer runs "kubectl informer serve" with the arguments of
// deploy/serve's Deployment as user, the config, certificate directory
// and listen address replaced by the test's, and returns once its /readyz
// answers 200. It checks that the certificate it presents is valid for
// localhost and each --tls-san name. The server stops when the test ends.
func startQueryServer(t *testing.T, user string, args serveArgs, config string) *queryServer {
	t.Helper()
	dir := t.TempDir()
	configFile := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := framework.ClosedPort(t)
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	replace := map[string]string{"--config": configFile, "--cert-dir": t.TempDir(), "--listen-address": addr}
	argv := append([]string{"serve", args.resources}, args.switches...)
	for _, flag := range keys(args.values) {
		for _, v := range args.values[flag] {
			if r, ok := replace[flag]; ok {
				v = r
			}
			argv = append(argv, flag+"="+v)
		}
	}
	argv = append(argv, "--as="+user, "--cache-dir="+t.TempDir())
	s := &queryServer{run: cluster.StartPlugin(t, argv...), url: "https://localhost:" + port, ca: filepath.Join(dir, "ca.crt")}
	// exited fails the test when the server has stopped with an error,
	// which it prints as "error: ..." (an invalid index of the config is
	// found only once the cluster's schemas are read).
	exited := func() {
		t.Helper()
		if errOut := s.run.ErrOut.String(); strings.HasPrefix(errOut, "error: ") || strings.Contains(errOut, "\nerror: ") {
			t.Fatalf("the query server stopped:\n%s", errOut)
		}
	}

	// The listener is up before the caches sync.
	var chain []*x509.Certificate
	deadline := time.Now().Add(framework.HangTimeout)
	for {
		// Not verified: this is how a user fetches the certificate to
		// trust, through a port-forward that the API server
		// authenticates.
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) //nolint:gosec
		if err == nil {
			chain = conn.ConnectionState().PeerCertificates
			_ = conn.Close()
			break
		}
		exited()
		if time.Now().After(deadline) {
			t.Fatalf("no TLS handshake with the query server within a minute: %v\nstderr:\n%s", err, s.run.ErrOut)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var buf bytes.Buffer
	pool := x509.NewCertPool()
	for _, c := range chain {
		pool.AddCert(c)
		if err := pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(s.ca, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range append([]string{"localhost"}, args.values["--tls-san"]...) {
		if _, err := chain[0].Verify(x509.VerifyOptions{Roots: pool, DNSName: name}); err != nil {
			t.Errorf("the serving certificate is not valid for %s: %v", name, err)
		}
	}

	hc := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}
	defer hc.CloseIdleConnections()
	var last string
	for {
		resp, err := hc.Get(s.url + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK && string(body) == "ok\n" {
				return s
			}
			last = resp.Status + ": " + string(body)
		} else {
			last = err.Error()
		}
		exited()
		if time.Now().After(deadline) {
			t.Fatalf("%s/readyz did not answer 200 within a minute (last: %s)\nstderr:\n%s", s.url, last, s.run.ErrOut)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// query runs "kubectl informer query ARGS --query-server URL --server-ca CA" in
// process as the user of kubeconfig, until it prints want (or for
// framework.HangTimeout: the server's caches see a new object a moment
// after it is written). It fails the test unless the query succeeded, printing
// nothing on stderr.
func (s *queryServer) query(t *testing.T, kubeconfig, want string, args ...string) {
	t.Helper()
	args = append(append([]string{"query", "--kubeconfig", kubeconfig}, args...), "--query-server", s.url, "--server-ca", s.ca)
	deadline := time.Now().Add(framework.HangTimeout)
	for {
		code, out, errOut := framework.RunPlugin(context.Background(), nil, args...)
		if code == app.ExitOK && errOut == "" && strings.Contains(out, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q: exit %d, want 0 and %q printed\nstdout:\n%s\nstderr:\n%s\nserver's stderr:\n%s", args, code, want, out, errOut, s.run.ErrOut)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// tokenKubeconfig writes a kubeconfig for the test cluster that
// authenticates with a bearer token alone, and returns its path.
func tokenKubeconfig(t *testing.T, token string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: cluster.Config.Host, CertificateAuthorityData: cluster.Config.CAData}
	cfg.AuthInfos["token"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["token"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "token", Namespace: "default"}
	cfg.CurrentContext = "token"
	path := filepath.Join(t.TempDir(), "token.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
