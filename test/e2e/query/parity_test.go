package query_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubectl runs the kubectl the project builds, as the admin, and returns
// its exit code and what it printed on each stream.
func kubectl(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command(filepath.Join(cluster.BinDir, "kubectl"), append([]string{"--kubeconfig", cluster.Kubeconfig}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return result{code: exit.ExitCode(), out: out.String(), errOut: errOut.String()}
	case err != nil:
		t.Fatalf("running kubectl: %v", err)
	}
	return result{out: out.String(), errOut: errOut.String()}
}

// ageless returns the cells of the tables in out, split at blanks, with
// the cells of AGE columns replaced by "<age>", and those cells: an age
// is computed from the clock when each command prints, and two commands
// run at different times. Tables are separated by blank lines, each
// starting with its header, or, with --no-headers, without one: noHeaders
// is then the AGE column's position (0-based), else -1.
func ageless(out string, noHeaders int) (rows [][]string, ages []string) {
	age := noHeaders
	header := noHeaders < 0
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		cells := strings.Fields(l)
		switch {
		case len(cells) == 0:
			header = noHeaders < 0
		case header:
			age = slices.Index(cells, "AGE")
			header = false
		case age >= 0 && age < len(cells):
			ages = append(ages, cells[age])
			cells[age] = "<age>"
		}
		rows = append(rows, cells)
	}
	return rows, ages
}

// leading returns, for each line of the tables in out, its first cells:
// NAMESPACE and NAME under a header that starts with NAMESPACE, else
// NAME; under no header, the noHeaders first.
func leading(out string, noHeaders int) [][]string {
	var rows [][]string
	n, header := noHeaders, noHeaders < 0
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		cells := strings.Fields(l)
		switch {
		case len(cells) == 0:
			header = noHeaders < 0
		case header:
			n, header = 1, false
			if cells[0] == "NAMESPACE" {
				n = 2
			}
		}
		rows = append(rows, cells[:max(0, min(n, len(cells)))])
	}
	return rows
}

// TestOutputMatchesKubectl runs the same requests through query and the
// kubectl the project builds, on the same objects, and compares what
// each prints on each stream and its exit code. Only AGE columns are
// normalised (see ageless); when the ages printed agree, the tables must
// be the same text, alignment included. Everything else is compared as
// text: -o json and -o yaml too, as kubectl's output of the same objects
// is deterministic.
//
// Tables are compared with kubectl get --server-print=false, kubectl's
// own table of any object (NAME, AGE, with NAMESPACE for -A), which is the
// table query prints. kubectl's default table comes from the API server
// and adds per-type columns (READY, STATUS, RESTARTS for pods); query
// does not print those: for them only the rows, their order and the
// names are compared.
func TestOutputMatchesKubectl(t *testing.T) {
	ns1 := cluster.NewNamespace(t, "parity")
	ns2 := cluster.NewNamespace(t, "parity")
	empty := cluster.NewNamespace(t, "parity-empty")
	sel := "parity=" + ns1
	for i, ns := range []string{ns1, ns1, ns1, ns2, ns2} {
		name := fmt.Sprintf("web-%d", i)
		if i == 1 {
			name = "db-0"
		}
		cluster.CreatePod(t, ns, name, map[string]string{"parity": ns1, "app": strings.TrimSuffix(name, name[len(name)-2:]), "tier": []string{"front", "back"}[i%2]})
	}
	for i, ns := range []string{ns1, ns1, ns2} {
		createDeployment(t, ns, fmt.Sprintf("app-%d", i), map[string]string{"parity": ns1, "tier": "front"})
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns2, Name: "settings", Labels: map[string]string{"parity": ns1}},
		Data:       map[string]string{"mode": "fast", "level": "3"},
	}
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns2).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	const clientTable = "--server-print=false"
	cases := []struct {
		name string
		args []string
		// table: the outputs are tables, compared without their ages;
		// kubectl gets --server-print=false. noHeaders is the AGE
		// column's position for --no-headers, else -1.
		table     bool
		noHeaders int
	}{
		{name: "table -n", args: []string{"pods", "-n", ns1}, table: true},
		{name: "table -A", args: []string{"pods", "-A", "-l", sel}, table: true},
		{name: "table of deployments -A", args: []string{"deployments", "-A", "-l", sel}, table: true},
		{name: "table of several types", args: []string{"pods,deployments,configmaps", "-n", ns2}, table: true},
		{name: "table of several types -A", args: []string{"deployments,pods", "-A", "-l", sel}, table: true},
		{name: "table --show-labels -L --show-kind", args: []string{"pods", "-n", ns1, "--show-labels", "-L", "tier", "--show-kind"}, table: true},
		{name: "table --no-headers -A", args: []string{"pods", "-A", "-l", sel, "--no-headers"}, table: true, noHeaders: 2},
		{name: "wide -n", args: []string{"pods", "-n", ns1, "-o", "wide"}, table: true},
		{name: "wide -A", args: []string{"deployments", "-A", "-l", sel, "-o", "wide"}, table: true},
		{name: "name -n", args: []string{"pods", "-n", ns1, "-o", "name"}},
		{name: "name of several types -A", args: []string{"pods,deployments,configmaps", "-A", "-l", sel, "-o", "name"}},
		{name: "json -n", args: []string{"pods", "-n", ns1, "-o", "json"}},
		{name: "json -A", args: []string{"deployments", "-A", "-l", sel, "-o", "json"}},
		{name: "json of several types", args: []string{"configmaps,pods", "-n", ns2, "-o", "json"}},
		{name: "yaml -n", args: []string{"deployments", "-n", ns1, "-o", "yaml"}},
		{name: "yaml -A", args: []string{"pods", "-A", "-l", sel, "-o", "yaml"}},
		{name: "jsonpath", args: []string{"pods", "-A", "-l", sel, "-o", `jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {.spec.containers[0].image}{"\n"}{end}`}},
		{name: "jsonpath of a list", args: []string{"deployments", "-n", ns1, "-o", "jsonpath={.items[*].metadata.name}"}},
		{name: "custom-columns", args: []string{"pods", "-A", "-l", sel, "-o", "custom-columns=NS:.metadata.namespace,NAME:.metadata.name,TIER:.metadata.labels.tier,IMAGE:.spec.containers[*].image"}},
		{name: "custom-columns --no-headers", args: []string{"configmaps", "-n", ns2, "--no-headers", "-o", "custom-columns=NAME:.metadata.name,MODE:.data.mode"}},
		{name: "empty table -n", args: []string{"pods", "-n", empty}, table: true},
		{name: "empty table -A", args: []string{"pods", "-A", "-l", "parity=none"}, table: true},
		{name: "empty table of several types -n", args: []string{"pods,deployments", "-n", empty}, table: true},
		{name: "empty wide", args: []string{"pods", "-n", empty, "-o", "wide"}, table: true},
		{name: "empty name", args: []string{"pods", "-n", empty, "-o", "name"}},
		{name: "empty json", args: []string{"pods", "-n", empty, "-o", "json"}},
		{name: "empty yaml -A", args: []string{"deployments", "-A", "-l", "parity=none", "-o", "yaml"}},
		{name: "empty jsonpath", args: []string{"pods", "-n", empty, "-o", "jsonpath={.items[*].metadata.name}"}},
		{name: "empty custom-columns", args: []string{"pods", "-n", empty, "-o", "custom-columns=NAME:.metadata.name"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			noHeaders := -1
			if slices.Contains(c.args, "--no-headers") {
				noHeaders = c.noHeaders
			}
			got := query(t, c.args...)
			kargs := append([]string{"get"}, c.args...)
			if c.table {
				kargs = append(kargs, clientTable)
			}
			want := kubectl(t, kargs...)
			if got.code != want.code || got.errOut != want.errOut {
				t.Fatalf("query %s\nexit code %d, stderr %q\nkubectl: exit code %d, stderr %q", strings.Join(c.args, " "), got.code, got.errOut, want.code, want.errOut)
			}
			if want.out == "" && want.errOut == "" && !strings.Contains(c.name, "empty") {
				t.Fatalf("kubectl printed nothing for %s", strings.Join(c.args, " "))
			}
			if !c.table {
				if got.out != want.out {
					t.Errorf("query %s printed\n%s\nkubectl get printed\n%s", strings.Join(c.args, " "), got.out, want.out)
				}
				return
			}
			g, gotAges := ageless(got.out, noHeaders)
			w, wantAges := ageless(want.out, noHeaders)
			switch {
			case !slices.EqualFunc(g, w, slices.Equal):
				t.Errorf("query %s printed (ages aside)\n%s\nkubectl get %s printed\n%s", strings.Join(c.args, " "), got.out, clientTable, want.out)
			case slices.Equal(gotAges, wantAges) && got.out != want.out:
				t.Errorf("query %s is aligned differently:\n%s\nkubectl get %s printed\n%s", strings.Join(c.args, " "), got.out, clientTable, want.out)
			}
			// kubectl's default table, with the API server's columns, has
			// the same rows in the same order.
			server := kubectl(t, append([]string{"get"}, c.args...)...)
			if server.errOut != want.errOut || !slices.EqualFunc(leading(server.out, noHeaders), leading(got.out, noHeaders), slices.Equal) {
				t.Errorf("query %s printed the rows\n%s\nkubectl get's default table has\n%s", strings.Join(c.args, " "), got.out, server.out)
			}
		})
	}
}
