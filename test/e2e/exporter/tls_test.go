package exporter_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"golang.org/x/crypto/bcrypt"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// writeServerCert writes a certificate for 127.0.0.1 and localhost, signed
// by ca, and its key, as PEM files certFile and keyFile.
func (ca *testCA) writeServerCert(t *testing.T, certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kubectl-informer exporter"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for file, block := range map[string]*pem.Block{
		certFile: {Type: "CERTIFICATE", Bytes: der},
		keyFile:  {Type: "PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// client returns an HTTP client that trusts only ca.
func (ca *testCA) client() *http.Client {
	return &http.Client{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool, MinVersion: tls.VersionTLS12}},
		Timeout:   framework.HangTimeout,
	}
}

// response is what a request got: a status and a body, or an error.
type response struct {
	code   int
	body   string
	header http.Header
	err    error
}

func request(c *http.Client, url, user, password string) response {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return response{err: err}
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := c.Do(req)
	if err != nil {
		return response{err: err}
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return response{code: resp.StatusCode, body: string(b), header: resp.Header, err: err}
}

// TestTLSAndBasicAuth runs "kubectl informer export" with a
// --web.config.file that serves TLS with a certificate of a CA made for the
// test and requires basic auth, and checks what clients get: plain HTTP is
// refused, a client that does not trust the CA fails to verify the
// certificate, and over HTTPS every path (/metrics, /healthz, /readyz and
// the landing page) answers 401 without the right user and password, and
// as documented with them; a password changed in the web config applies
// at once.
func TestTLSAndBasicAuth(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, "kubectl-informer test CA")
	// Relative paths in the web config are relative to its directory.
	ca.writeServerCert(t, filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key"))
	const user, password = "prometheus", "s3cret"
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	web := filepath.Join(dir, "web.yaml")
	if err := os.WriteFile(web, []byte(`tls_server_config:
  cert_file: server.crt
  key_file: server.key
basic_auth_users:
  `+user+`: `+string(hash)+`
`), 0o600); err != nil {
		t.Fatal(err)
	}
	configFile := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}

	addr := framework.ClosedPort(t)
	run := cluster.StartPlugin(t, "export", "--config", configFile, "--web.listen-address", addr,
		"--web.config.file", web, "--cache-dir", t.TempDir())
	base := "https://" + addr
	trusted := ca.client()
	deadline := time.Now().Add(framework.HangTimeout)
	for {
		r := request(trusted, base+"/readyz", user, password)
		if r.err == nil && r.code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz over HTTPS with credentials: %d %q %v after %s\nstderr:\n%s", r.code, r.body, r.err, framework.HangTimeout, run.ErrOut)
		}
		time.Sleep(100 * time.Millisecond)
	}

	t.Run("plain HTTP is refused", func(t *testing.T) {
		for _, path := range []string{"/metrics", "/healthz"} {
			r := request(&http.Client{Timeout: framework.HangTimeout}, "http://"+addr+path, user, password)
			// Go's TLS server answers an HTTP request with 400 and
			// closes the connection.
			if r.err != nil || r.code != http.StatusBadRequest || !strings.Contains(r.body, "HTTP request to an HTTPS server") {
				t.Errorf("GET http://%s%s: %d %q %v; want 400 Client sent an HTTP request to an HTTPS server", addr, path, r.code, r.body, r.err)
			}
		}
	})

	t.Run("untrusted certificate", func(t *testing.T) {
		for name, c := range map[string]*http.Client{
			"another CA":   newTestCA(t, "another CA").client(),
			"system roots": {Timeout: framework.HangTimeout},
		} {
			r := request(c, base+"/metrics", user, password)
			var verr *tls.CertificateVerificationError
			var unknown x509.UnknownAuthorityError
			if !errors.As(r.err, &verr) || !errors.As(r.err, &unknown) {
				t.Errorf("a client trusting %s: %d %v; want the certificate refused as signed by an unknown authority", name, r.code, r.err)
			}
		}
	})

	t.Run("basic auth", func(t *testing.T) {
		for _, path := range []string{"/metrics", "/healthz", "/readyz", "/"} {
			for _, cred := range []struct{ name, user, password string }{
				{"no credentials", "", ""},
				{"a wrong password", user, "wrong"},
				{"an unknown user", "nobody", password},
				{"a user with another's password", "Prometheus", password},
			} {
				r := request(trusted, base+path, cred.user, cred.password)
				if r.err != nil || r.code != http.StatusUnauthorized || r.header.Get("WWW-Authenticate") != "Basic" {
					t.Errorf("GET %s with %s: %d %v, WWW-Authenticate %q; want 401 and Basic", path, cred.name, r.code, r.err, r.header.Get("WWW-Authenticate"))
				}
				if strings.Contains(r.body, "test_pod_info") || strings.Contains(r.body, "ok") {
					t.Errorf("GET %s with %s answered %q", path, cred.name, r.body)
				}
			}
		}
	})

	t.Run("right credentials", func(t *testing.T) {
		for _, path := range []string{"/healthz", "/readyz"} {
			if r := request(trusted, base+path, user, password); r.err != nil || r.code != http.StatusOK || r.body != "ok\n" {
				t.Errorf("GET %s: %d %q %v; want 200 ok", path, r.code, r.body, r.err)
			}
		}
		if r := request(trusted, base+"/", user, password); r.err != nil || r.code != http.StatusOK || !strings.Contains(r.body, "kubectl-informer exporter") {
			t.Errorf("GET /: %d %v; want 200 and the landing page", r.code, r.err)
		}
		r := request(trusted, base+"/metrics", user, password)
		if r.err != nil || r.code != http.StatusOK {
			t.Fatalf("GET /metrics: %d %v\n%s", r.code, r.err, r.body)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := parser.TextToMetricFamilies(strings.NewReader(r.body))
		if err != nil {
			t.Fatalf("/metrics does not parse: %v", err)
		}
		for _, name := range []string{"test_pod_info", "test_pods_per_node_phase", "kubectl_informer_build_info", "kubectl_informer_resource_synced", "go_goroutines"} {
			if _, ok := mfs[name]; !ok {
				t.Errorf("/metrics has no family %s", name)
			}
		}
		eventually(t, "test_pod_info over HTTPS follows the pods", func() (bool, string) {
			info, _ := expected(t)
			got := seriesOver(t, trusted, base, user, password, "test_pod_info")
			return equal(got, info), fmt.Sprintf("%d series, want %d", len(got), len(info))
		})
	})

	// The web config is read for each request: a new password applies
	// without a restart.
	t.Run("changed password", func(t *testing.T) {
		hash, err := bcrypt.GenerateFromPassword([]byte("n3w"), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(web, []byte(`tls_server_config:
  cert_file: server.crt
  key_file: server.key
basic_auth_users:
  `+user+`: `+string(hash)+`
`), 0o600); err != nil {
			t.Fatal(err)
		}
		if r := request(trusted, base+"/healthz", user, password); r.err != nil || r.code != http.StatusUnauthorized {
			t.Errorf("GET /healthz with the old password: %d %v, want 401", r.code, r.err)
		}
		if r := request(trusted, base+"/healthz", user, "n3w"); r.err != nil || r.code != http.StatusOK {
			t.Errorf("GET /healthz with the new password: %d %v, want 200", r.code, r.err)
		}
	})

	if code := run.Stop(t); code != 0 {
		t.Errorf("export exited with %d\nstderr:\n%s", code, run.ErrOut)
	}
}

// seriesOver is series with a client and credentials.
func seriesOver(t *testing.T, c *http.Client, base, user, password, metric string) map[string]float64 {
	t.Helper()
	r := request(c, base+"/metrics", user, password)
	if r.err != nil || r.code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", r.code, r.err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(r.body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	out := map[string]float64{}
	for _, m := range mfs[metric].GetMetric() {
		var parts []string
		for _, l := range m.GetLabel() {
			parts = append(parts, l.GetName()+"="+l.GetValue())
		}
		sort.Strings(parts)
		out[strings.Join(parts, ",")] = m.GetGauge().GetValue()
	}
	return out
}
