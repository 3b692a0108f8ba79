package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestOIDCAuthProvider runs a query as a user of the kubeconfig whose
// credentials come from the oidc auth-provider, as kubeconfigs written by
// OIDC login tools have them. The plugin must find the provider and send its
// ID token; the test cluster trusts no OIDC issuer, so the API server answers
// 401, and the plugin says so in its own words.
func TestOIDCAuthProvider(t *testing.T) {
	cfg, err := clientcmd.LoadFromFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	// An unexpired ID token: the provider sends it as it is, without asking
	// the issuer (an address where nothing listens) to refresh it.
	issuer := "https://" + framework.ClosedPort(t)
	claims, err := json.Marshal(map[string]any{
		"iss": issuer,
		"sub": "e2e-oidc",
		"aud": "kubectl-informer-e2e",
		"exp": time.Now().Add(24 * time.Hour).Unix(),
	})
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	idToken := enc([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + enc(claims) + "." + enc([]byte("not-a-signature"))
	for name := range cfg.AuthInfos {
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{AuthProvider: &clientcmdapi.AuthProviderConfig{
			Name: "oidc",
			Config: map[string]string{
				"idp-issuer-url": issuer,
				"client-id":      "kubectl-informer-e2e",
				"id-token":       idToken,
			},
		}}
	}
	kubeconfig := filepath.Join(t.TempDir(), "oidc.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code, out, errOut := framework.RunPlugin(ctx, nil, "query", "pods", "-A", "--kubeconfig", kubeconfig)
	if strings.Contains(errOut, "no Auth Provider found") {
		t.Fatalf("the oidc auth-provider is not compiled in:\n%s", errOut)
	}
	if code != 1 || !strings.Contains(errOut, "Unauthorized") || !strings.Contains(errOut, "credentials") {
		t.Fatalf("exit code %d, stdout %q, stderr:\n%s\nwant exit code 1 and the API server's Unauthorized explained", code, out, errOut)
	}
}
