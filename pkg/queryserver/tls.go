package queryserver

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

// Names of the self-signed certificate and key in the certificate
// directory.
const (
	SelfSignedCertFile = "serving.crt"
	SelfSignedKeyFile  = "serving.key"
)

// ServingTLS returns the TLS configuration of the server. With certFile
// and keyFile it serves them, read again when they change (a renewed
// certificate needs no restart). Without them it serves a self-signed
// certificate for hosts (names and IP addresses; localhost and the
// loopback addresses are always included), kept in certDir as
// serving.crt and serving.key and reused from there when present there;
// certFile is then the path of serving.crt, which clients trust with
// --server-ca. Client certificates are requested, never required: the
// authenticator verifies them.
func ServingTLS(certFile, keyFile, certDir string, hosts []string) (cfg *tls.Config, servedCert string, err error) {
	if (certFile == "") != (keyFile == "") {
		return nil, "", fmt.Errorf("--tls-cert-file and --tls-private-key-file go together")
	}
	if certFile == "" {
		if certFile, keyFile, err = selfSigned(certDir, hosts); err != nil {
			return nil, "", err
		}
	}
	kp := &keyPair{certFile: certFile, keyFile: keyFile}
	if _, err := kp.get(nil); err != nil {
		return nil, "", err
	}
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		ClientAuth:     tls.RequestClientCert,
		GetCertificate: kp.get,
	}, certFile, nil
}

// selfSigned returns the self-signed certificate and key files in dir,
// generating them when absent.
func selfSigned(dir string, hosts []string) (certFile, keyFile string, err error) {
	if dir == "" {
		return "", "", fmt.Errorf("a directory for the self-signed certificate is needed: give --cert-dir, or --tls-cert-file and --tls-private-key-file")
	}
	certFile, keyFile = filepath.Join(dir, SelfSignedCertFile), filepath.Join(dir, SelfSignedKeyFile)
	if ok, err := certutil.CanReadCertAndKey(certFile, keyFile); err == nil && ok {
		return certFile, keyFile, nil
	}
	var ips []net.IP
	dns := []string{"localhost"}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			ips = append(ips, ip)
		} else if h != "" {
			dns = append(dns, h)
		}
	}
	ips = append(ips, net.IPv4(127, 0, 0, 1), net.IPv6loopback)
	host, _ := os.Hostname()
	if host == "" {
		host = "localhost"
	}
	cert, key, err := certutil.GenerateSelfSignedCertKey(host, ips, dns)
	if err != nil {
		return "", "", fmt.Errorf("generating a self-signed certificate: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("--cert-dir: %w", err)
	}
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		return "", "", fmt.Errorf("--cert-dir: %w", err)
	}
	if err := os.WriteFile(certFile, cert, 0o644); err != nil { //nolint:gosec // G306: a certificate is public; clients read it
		return "", "", fmt.Errorf("--cert-dir: %w", err)
	}
	return certFile, keyFile, nil
}

// keyPair serves a certificate and key from files, loaded again when
// either file's modification time changes (checked at most once a
// second).
type keyPair struct {
	certFile, keyFile string

	// mu guards cert, mtimes and checked.
	mu      sync.Mutex
	cert    *tls.Certificate
	mtimes  [2]time.Time
	checked time.Time
}

func (k *keyPair) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cert != nil && time.Since(k.checked) < time.Second {
		return k.cert, nil
	}
	k.checked = time.Now()
	var mtimes [2]time.Time
	for i, f := range []string{k.certFile, k.keyFile} {
		st, err := os.Stat(f)
		if err != nil {
			if k.cert != nil {
				return k.cert, nil // keep serving during a rotation
			}
			return nil, fmt.Errorf("reading the serving certificate: %w", err)
		}
		mtimes[i] = st.ModTime()
	}
	if k.cert != nil && mtimes == k.mtimes {
		return k.cert, nil
	}
	cert, err := tls.LoadX509KeyPair(k.certFile, k.keyFile)
	if err != nil {
		if k.cert != nil {
			return k.cert, nil
		}
		return nil, fmt.Errorf("loading the serving certificate: %w", err)
	}
	k.cert, k.mtimes = &cert, mtimes
	return k.cert, nil
}
