package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// writeCerts writes DIR/certs/{ca.crt,ca.key,apiserver.crt,apiserver.key,sa.key}:
// a CA, a serving certificate for loopback (and extraIPs) signed by it, and
// an RSA key for signing service-account tokens.
func writeCerts(dir string, extraIPs ...net.IP) error {
	certs := filepath.Join(dir, "certs")
	if err := os.MkdirAll(certs, 0o700); err != nil {
		return err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "localcluster-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"ca.crt": pemBlock("CERTIFICATE", caDER),
		"ca.key": mustEC(caKey),
		"sa.key": pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey)),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(certs, name), b, 0o600); err != nil {
			return err
		}
	}
	ips := append([]net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback, net.ParseIP("10.0.0.1")}, extraIPs...)
	return writeServingCert(dir, "apiserver", []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}, ips)
}

// writeServingCert writes DIR/certs/NAME.{crt,key}, a serving certificate
// for dnsNames and ips signed by the CA writeCerts wrote.
func writeServingCert(dir, name string, dnsNames []string, ips []net.IP) error {
	return writeLeaf(dir, name, &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    dnsNames,
		IPAddresses: ips,
	})
}

// writeClientCert writes DIR/certs/NAME.{crt,key}, a client certificate
// for user in groups signed by the CA writeCerts wrote.
func writeClientCert(dir, name, user string, groups ...string) error {
	return writeLeaf(dir, name, &x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

func writeLeaf(dir, name string, tmpl *x509.Certificate) error {
	certs := filepath.Join(dir, "certs")
	caCert, caKey, err := readCA(certs)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(10*365*24*time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(certs, name+".crt"), pemBlock("CERTIFICATE", der), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(certs, name+".key"), mustEC(key), 0o600)
}

func readCA(certs string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	crtPEM, err := os.ReadFile(filepath.Join(certs, "ca.crt")) //nolint:gosec // G304: the cluster's own CA
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(certs, "ca.key")) //nolint:gosec // G304: the cluster's own CA
	if err != nil {
		return nil, nil, err
	}
	crtBlock, _ := pem.Decode(crtPEM)
	keyBlock, _ := pem.Decode(keyPEM)
	if crtBlock == nil || keyBlock == nil {
		return nil, nil, fmt.Errorf("no PEM block in %s", certs)
	}
	crt, err := x509.ParseCertificate(crtBlock.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(keyBlock.Bytes)
	if err != nil {
		return nil, nil, err
	}
	return crt, key, nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func mustEC(k *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		panic(err) // only fails for unsupported curves; P-256 is supported
	}
	return pemBlock("EC PRIVATE KEY", der)
}

// writeKubeconfig writes DIR/kubeconfig with the contexts "local" (admin,
// current) and "local-unprivileged".
func (c *cluster) writeKubeconfig(server string) error {
	caPEM, err := os.ReadFile(c.path("certs", "ca.crt"))
	if err != nil {
		return err
	}
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: admin
  user:
    token: %s
- name: unprivileged
  user:
    token: %s
contexts:
- name: local
  context:
    cluster: local
    user: admin
    namespace: default
- name: local-unprivileged
  context:
    cluster: local
    user: unprivileged
    namespace: default
current-context: local
`, server, base64.StdEncoding.EncodeToString(caPEM), adminToken, unprivilegedToken)
	return os.WriteFile(c.kubeconfig(), []byte(cfg), 0o600) //nolint:gosec // G703: the kubeconfig in the state directory the user named
}
