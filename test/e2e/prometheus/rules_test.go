package prometheus_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// monitoring is the directory of the shipped rules, relative to the module
// root.
const monitoring = "deploy/monitoring"

// TestRulesPassPromtool checks the rules file with promtool and runs its
// unit tests, which test every alert firing and not firing.
func TestRulesPassPromtool(t *testing.T) {
	promtool := cluster.Promtool(t)
	dir := filepath.Join(cluster.Root, monitoring)
	for _, args := range [][]string{
		{"check", "rules", "rules.yaml"},
		{"test", "rules", "rules_test.yaml"},
	} {
		cmd := exec.Command(promtool, args...) //nolint:gosec // G204: the promtool the project builds
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// kubePrometheusRules is kube-prometheus' kube-state-metrics alerts as a
// rules file, relative to the module root, with their promtool tests
// beside it.
const kubePrometheusRules = "test/e2e/prometheus/testdata/kube-state-metrics-rules.yaml"

// TestKubeStateMetricsRulesPassPromtool checks kube-prometheus'
// kube-state-metrics alerts with promtool and runs their unit tests, which
// feed them the exporter's telemetry series under kube-state-metrics'
// names, and fails when an alert is not tested both firing and not firing.
func TestKubeStateMetricsRulesPassPromtool(t *testing.T) {
	promtool := cluster.Promtool(t)
	dir := filepath.Join(cluster.Root, filepath.Dir(kubePrometheusRules))
	file := filepath.Base(kubePrometheusRules)
	tests := strings.TrimSuffix(file, ".yaml") + "_test.yaml"
	for _, args := range [][]string{
		{"check", "rules", file},
		{"test", "rules", tests},
	} {
		cmd := exec.Command(promtool, args...) //nolint:gosec // G204: the promtool the project builds
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	var rules struct {
		Groups []struct {
			Rules []struct{ Alert string }
		}
	}
	readYAML(t, kubePrometheusRules, &rules)
	firing, quiet, _ := testedAlerts(t, filepath.Join(filepath.Dir(kubePrometheusRules), tests))
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			if !firing[r.Alert] || !quiet[r.Alert] {
				t.Errorf("alert %s: tested firing %v, not firing %v; want both", r.Alert, firing[r.Alert], quiet[r.Alert])
			}
		}
	}
	if n != 4 {
		t.Errorf("%s has %d alerts, want kube-prometheus' 4", kubePrometheusRules, n)
	}
}

// testedAlerts reads a promtool test file, relative to the module root,
// and returns the alerts tested firing, those tested not firing, and the
// expressions of its PromQL tests.
func testedAlerts(t *testing.T, path string) (firing, quiet map[string]bool, exprs []string) {
	t.Helper()
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `json:"alertname"`
				ExpAlerts []any  `json:"exp_alerts"`
			} `json:"alert_rule_test"`
			PromQLExprTest []struct {
				Expr string `json:"expr"`
			} `json:"promql_expr_test"`
		}
	}
	readYAML(t, path, &tests)
	firing, quiet = map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				firing[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
		for _, e := range tc.PromQLExprTest {
			exprs = append(exprs, e.Expr)
		}
	}
	return firing, quiet, exprs
}

// TestEveryAlertIsTested fails when an alert of the rules file is not
// named by a test of rules_test.yaml both where it fires and where it does
// not, or has no section in the runbook.
func TestEveryAlertIsTested(t *testing.T) {
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert, Record string
			}
		}
	}
	readYAML(t, filepath.Join(monitoring, "rules.yaml"), &rules)
	firing, quiet, exprs := testedAlerts(t, filepath.Join(monitoring, "rules_test.yaml"))
	runbook, err := os.ReadFile(filepath.Join(cluster.Root, "docs", "runbook.md"))
	if err != nil {
		t.Fatal(err)
	}
	alerts := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			switch {
			case r.Alert != "":
				alerts++
				if !firing[r.Alert] || !quiet[r.Alert] {
					t.Errorf("alert %s: tested firing %v, not firing %v; want both", r.Alert, firing[r.Alert], quiet[r.Alert])
				}
				if !strings.Contains(string(runbook), "\n## "+r.Alert+"\n") {
					t.Errorf("alert %s has no section \"## %s\" in docs/runbook.md", r.Alert, r.Alert)
				}
			case !containsAny(exprs, r.Record):
				t.Errorf("recording rule %s is not tested", r.Record)
			}
		}
	}
	if alerts == 0 {
		t.Fatal("rules.yaml has no alert")
	}
}

func containsAny(exprs []string, name string) bool {
	for _, e := range exprs {
		if strings.Contains(e, name) {
			return true
		}
	}
	return false
}

// TestPrometheusRuleMatchesRulesFile fails when the PrometheusRule of the
// kustomize component holds other groups than the plain rules file.
func TestPrometheusRuleMatchesRulesFile(t *testing.T) {
	var file struct {
		Groups []any `json:"groups"`
	}
	readYAML(t, filepath.Join(monitoring, "rules.yaml"), &file)
	var pr struct {
		Kind string `json:"kind"`
		Spec struct {
			Groups []any `json:"groups"`
		} `json:"spec"`
	}
	readYAML(t, filepath.Join(monitoring, "prometheusrule.yaml"), &pr)
	if pr.Kind != "PrometheusRule" {
		t.Fatalf("prometheusrule.yaml holds a %q", pr.Kind)
	}
	if len(file.Groups) == 0 || !reflect.DeepEqual(file.Groups, pr.Spec.Groups) {
		t.Errorf("the groups of prometheusrule.yaml differ from those of rules.yaml: copy rules.yaml's groups under spec:\nrules.yaml: %v\nprometheusrule.yaml: %v", file.Groups, pr.Spec.Groups)
	}
}

// readYAML decodes the file at path, relative to the module root, into v.
func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cluster.Root, path))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// jobMatcher is a matcher of the job label in PromQL.
var jobMatcher = regexp.MustCompile(`\bjob\s*(=|!=|=~|!~)\s*"`)

// TestRulesNameNoJob fails when a rule selects series by their job: the
// exporter is scraped as kubectl-informer, as kube-state-metrics in its
// drop-in mode, or under a job name of the user's, and the rules must hold
// under each (rules_test.yaml tests the alerts on targets under the first
// two).
func TestRulesNameNoJob(t *testing.T) {
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert, Record, Expr string
			}
		}
	}
	readYAML(t, filepath.Join(monitoring, "rules.yaml"), &rules)
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			if m := jobMatcher.FindString(r.Expr); m != "" {
				t.Errorf("rule %s%s selects by job (%s): select the exporter's targets by kubectl_informer_build_info instead\n%s", r.Alert, r.Record, m, r.Expr)
			}
		}
	}
	if n == 0 {
		t.Fatal("rules.yaml has no rule")
	}
}
