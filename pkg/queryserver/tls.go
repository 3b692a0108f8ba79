package queryserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
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
// certificate needs no restart) until ctx ends. Without them it serves a
// self-signed certificate for hosts (names and IP addresses; localhost and
// the loopback addresses are always included), kept in certDir as
// serving.crt and serving.key and reused from there when present there;
// certFile is then the path of serving.crt, which clients trust. Client
// certificates are requested, never required: the authenticator verifies
// them.
func ServingTLS(ctx context.Context, certFile, keyFile, certDir string, hosts []string) (cfg *tls.Config, servedCert string, err error) {
	if (certFile == "") != (keyFile == "") {
		return nil, "", errors.New("a serving certificate needs its private key, and the reverse")
	}
	if certFile == "" {
		if certFile, keyFile, err = selfSigned(certDir, hosts); err != nil {
			return nil, "", err
		}
	}
	content, err := dynamiccertificates.NewDynamicServingContentFromFiles("serving-cert", certFile, keyFile)
	if err != nil {
		return nil, "", fmt.Errorf("loading the serving certificate: %w", err)
	}
	sc := &servingCert{content: content}
	if err := sc.load(); err != nil {
		return nil, "", err
	}
	content.AddListener(sc)
	go content.Run(ctx, 1)
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		ClientAuth:     tls.RequestClientCert,
		GetCertificate: sc.get,
	}, certFile, nil
}

// selfSigned returns the self-signed certificate and key files in dir,
// generating them when absent.
func selfSigned(dir string, hosts []string) (certFile, keyFile string, err error) {
	if dir == "" {
		return "", "", errors.New("a directory for the self-signed certificate is needed, or a certificate and its key")
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
		return "", "", fmt.Errorf("certificate directory: %w", err)
	}
	// The key first: once the certificate is there, both are.
	if err := writeWhole(keyFile, key, 0o600); err != nil {
		return "", "", fmt.Errorf("certificate directory: %w", err)
	}
	if err := writeWhole(certFile, cert, 0o644); err != nil {
		return "", "", fmt.Errorf("certificate directory: %w", err)
	}
	return certFile, keyFile, nil
}

// writeWhole writes data to name with permissions perm as a whole: into a
// new file in the same directory, renamed to name once written and closed,
// so that a reader (a client taking the certificate to trust, the server's
// own watch of the files) never finds name partly written.
func writeWhole(name string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// servingCert is the certificate of content, parsed once each time the
// files change: content watches them (and checks them every minute) and
// calls Enqueue; a pair that does not load keeps the previous one served.
type servingCert struct {
	content *dynamiccertificates.DynamicCertKeyPairContent
	cert    atomic.Pointer[tls.Certificate]
}

// Enqueue parses the content's new certificate and key.
func (c *servingCert) Enqueue() { _ = c.load() }

func (c *servingCert) load() error {
	certPEM, keyPEM := c.content.CurrentCertKeyContent()
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("loading the serving certificate: %w", err)
	}
	c.cert.Store(&cert)
	return nil
}

func (c *servingCert) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return c.cert.Load(), nil
}
