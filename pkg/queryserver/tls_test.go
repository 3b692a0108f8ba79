package queryserver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

// TestServingTLSFollowsRenewedCertificate: a certificate and key replaced
// on disk are served from then on, without a restart, and some certificate
// is served at every moment of the rotation.
func TestServingTLSFollowsRenewedCertificate(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	write := func(name string, data []byte) {
		t.Helper()
		tmp := name + ".tmp"
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, name); err != nil {
			t.Fatal(err)
		}
	}
	first, firstKey, err := certutil.GenerateSelfSignedCertKey("first", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	write(certFile, first)
	write(keyFile, firstKey)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg, served, err := ServingTLS(ctx, certFile, keyFile, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if served != certFile {
		t.Errorf("served certificate %q, want %q", served, certFile)
	}
	leaf := func() []byte {
		cert, err := cfg.GetCertificate(nil)
		if err != nil || cert == nil {
			t.Fatalf("GetCertificate = %v, %v", cert, err)
		}
		return cert.Certificate[0]
	}
	der := func(pemBytes []byte) []byte {
		certs, err := certutil.ParseCertsPEM(pemBytes)
		if err != nil {
			t.Fatal(err)
		}
		return certs[0].Raw
	}
	if !bytes.Equal(leaf(), der(first)) {
		t.Fatal("the first certificate is not served")
	}

	// Half a rotation (a certificate that does not match its key, or does
	// not parse) is not served; the whole of it is.
	write(certFile, []byte("not a certificate"))
	second, secondKey, err := certutil.GenerateSelfSignedCertKey("second", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	write(keyFile, secondKey)
	write(certFile, second)
	for !bytes.Equal(leaf(), der(second)) {
		time.Sleep(10 * time.Millisecond)
	}
}

func TestServingTLSNeedsBothFiles(t *testing.T) {
	if _, _, err := ServingTLS(context.Background(), "a.crt", "", "", nil); err == nil {
		t.Error("a certificate without its key was accepted")
	}
	if _, _, err := ServingTLS(context.Background(), "", "", "", nil); err == nil {
		t.Error("no certificate and no directory for a self-signed one was accepted")
	}
}

// TestSelfSignedFiles: the generated certificate and key are written whole
// under their names, readable as a pair, the key private and the
// certificate readable by all, and nothing else is left in the directory;
// a second start finds and keeps them.
func TestSelfSignedFiles(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, err := selfSigned(dir, []string{"example.test", "10.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if certFile != filepath.Join(dir, SelfSignedCertFile) || keyFile != filepath.Join(dir, SelfSignedKeyFile) {
		t.Fatalf("files %s and %s, want %s and %s in %s", certFile, keyFile, SelfSignedCertFile, SelfSignedKeyFile, dir)
	}
	if ok, err := certutil.CanReadCertAndKey(certFile, keyFile); !ok || err != nil {
		t.Fatalf("the certificate and key do not load as a pair: %t, %v", ok, err)
	}
	for name, perm := range map[string]os.FileMode{certFile: 0o644, keyFile: 0o600} {
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != perm {
			t.Errorf("%s has permissions %v, want %v", name, st.Mode().Perm(), perm)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the directory holds %v, want only the certificate and the key", names)
	}
	cert, err := os.ReadFile(certFile) //nolint:gosec // G304: the test's own temporary directory
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := selfSigned(dir, nil); err != nil {
		t.Fatal(err)
	}
	if again, err := os.ReadFile(certFile); err != nil || !bytes.Equal(again, cert) { //nolint:gosec // G304: the test's own temporary directory
		t.Errorf("a second start replaced the certificate (%v)", err)
	}
}
