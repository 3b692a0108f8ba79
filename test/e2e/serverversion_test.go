package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestVersionPrintsServerVersion compares the server version that
// version prints with the one the project's kubectl version reports, and
// checks that an API server that does not answer leaves version
// successful, with a warning.
func TestVersionPrintsServerVersion(t *testing.T) {
	out, err := exec.Command(filepath.Join(cluster.BinDir, "kubectl"), "--kubeconfig", cluster.Kubeconfig, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("kubectl version: %v", err)
	}
	var kubectl struct {
		ServerVersion struct {
			GitVersion string `json:"gitVersion"`
		} `json:"serverVersion"`
	}
	if err := json.Unmarshal(out, &kubectl); err != nil || kubectl.ServerVersion.GitVersion == "" {
		t.Fatalf("kubectl version -o json printed %q: %v", out, err)
	}
	want := kubectl.ServerVersion.GitVersion

	code, stdout, stderr := framework.RunPlugin(context.Background(), nil, "version", "--kubeconfig", cluster.Kubeconfig)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if code != 0 || stderr != "" || len(lines) != 2 || !strings.HasPrefix(lines[0], "kubectl-informer ") || lines[1] != "Server Version: "+want {
		t.Errorf("version: exit %d, stdout %q, stderr %q; want the plugin's line then %q", code, stdout, stderr, "Server Version: "+want)
	}

	code, stdout, _ = framework.RunPlugin(context.Background(), nil, "version", "--kubeconfig", cluster.Kubeconfig, "-o", "json")
	var got struct {
		Version       string `json:"version"`
		ServerVersion struct {
			GitVersion string `json:"gitVersion"`
		} `json:"serverVersion"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); code != 0 || err != nil || got.Version == "" || got.ServerVersion.GitVersion != want {
		t.Errorf("version -o json: exit %d, %q (%v); want the plugin's version and serverVersion.gitVersion %q", code, stdout, err, want)
	}

	// -o yaml, as kubectl version -o yaml prints it: the server's version
	// is kubectl's block, byte for byte, and the output ends in a blank line.
	kubectlYAML, err := exec.Command(filepath.Join(cluster.BinDir, "kubectl"), "--kubeconfig", cluster.Kubeconfig, "version", "-o", "yaml").Output()
	if err != nil {
		t.Fatalf("kubectl version -o yaml: %v", err)
	}
	code, stdout, stderr = framework.RunPlugin(context.Background(), nil, "version", "--kubeconfig", cluster.Kubeconfig, "-o", "yaml")
	if want, got := yamlBlock(string(kubectlYAML), "serverVersion:"), yamlBlock(stdout, "serverVersion:"); code != 0 || stderr != "" || want == "" || got != want ||
		!strings.HasSuffix(stdout, "\n\n") || !strings.Contains(stdout, "\nversion: ") {
		t.Errorf("version -o yaml: exit %d, stderr %q, stdout\n%s\nwant kubectl's serverVersion block\n%s", code, stderr, stdout, want)
	}
	// Another format: kubectl version's words.
	cmd := exec.Command(filepath.Join(cluster.BinDir, "kubectl"), "--kubeconfig", cluster.Kubeconfig, "version", "-o", "xml")
	var kubectlErr strings.Builder
	cmd.Stderr = &kubectlErr
	if err := cmd.Run(); err == nil {
		t.Fatal("kubectl version -o xml succeeded")
	}
	if code, _, stderr = framework.RunPlugin(context.Background(), nil, "version", "--kubeconfig", cluster.Kubeconfig, "-o", "xml"); code == 0 || stderr != kubectlErr.String() {
		t.Errorf("version -o xml: exit %d, stderr %q; want a usage error and kubectl's %q", code, stderr, kubectlErr.String())
	}

	// Nothing listens: the plugin's version, a warning, exit code 0.
	dead := cluster.KubeconfigFor(t, "https://"+framework.ClosedPort(t))
	code, stdout, stderr = framework.RunPlugin(context.Background(), nil, "version", "--kubeconfig", dead)
	if code != 0 || strings.Count(stdout, "\n") != 1 || !strings.HasPrefix(stdout, "kubectl-informer ") ||
		!strings.HasPrefix(stderr, "warning: the API server's version is unknown: ") {
		t.Errorf("version, server down: exit %d, stdout %q, stderr %q; want exit 0, the plugin's line and a warning", code, stdout, stderr)
	}
	code, stdout, stderr = framework.RunPlugin(context.Background(), nil, "version", "--kubeconfig", dead, "--client")
	if code != 0 || strings.Count(stdout, "\n") != 1 || stderr != "" {
		t.Errorf("version --client: exit %d, stdout %q, stderr %q; want the plugin's line only", code, stdout, stderr)
	}
}

// yamlBlock returns the lines of the top-level key of a YAML document
// (key: included) up to the next top-level key.
func yamlBlock(doc, key string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, " ") {
			in = line == key
		}
		if in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}
