package prometheus_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// dashboard is the part of a Grafana dashboard the test reads.
type dashboard struct {
	Panels     []dashboardPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type dashboardPanel struct {
	Title   string           `json:"title"`
	Type    string           `json:"type"`
	Panels  []dashboardPanel `json:"panels"` // of a collapsed row
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// labelValues is the form of a query variable: label_values(METRIC, LABEL).
var labelValues = regexp.MustCompile(`^label_values\(([a-zA-Z_:][a-zA-Z0-9_:]*), *([a-zA-Z_][a-zA-Z0-9_]*)\)$`)

// checkDashboard loads the shipped dashboard and runs each panel's queries,
// with $job for every job and Grafana's rate interval as it would be for a
// scrape interval of a second, against prom: each must parse and return
// data. Its job variable must list jobs.
func checkDashboard(t *testing.T, prom *framework.Prometheus, jobs []string) {
	d := loadDashboard(t)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(map[string]any)
		expr, _ := q["query"].(string)
		m := labelValues.FindStringSubmatch(expr)
		if m == nil {
			t.Errorf("variable %s: query %q is not label_values(METRIC, LABEL)", v.Name, expr)
			continue
		}
		framework.Eventually(t, "variable "+v.Name+" lists "+strings.Join(jobs, ", "), func() bool {
			got, err := prom.LabelValues(m[2], m[1])
			return err == nil && containsAll(got, jobs)
		})
	}
	vars := strings.NewReplacer(`$job`, strings.Join(jobs, "|"), `$__rate_interval`, "10s")
	var walk func([]dashboardPanel)
	queries := 0
	walk = func(panels []dashboardPanel) {
		for _, p := range panels {
			walk(p.Panels)
			for _, target := range p.Targets {
				queries++
				q := vars.Replace(target.Expr)
				if strings.Contains(q, "$") {
					t.Errorf("panel %q: query %q uses a variable the dashboard does not define", p.Title, target.Expr)
					continue
				}
				t.Run(p.Title, func(t *testing.T) { prom.WaitFor(t, q, nonEmpty) })
			}
		}
	}
	walk(d.Panels)
	if queries == 0 {
		t.Fatal("dashboard.json has no query")
	}
}

func containsAll(got, want []string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}

// TestDashboardNamesNoJob fails when a query of the shipped dashboard
// selects a job other than by its job variable, which lists the jobs that
// serve kubectl_informer_build_info: the dashboard must work under any job
// name, as the rules do.
func TestDashboardNamesNoJob(t *testing.T) {
	d := loadDashboard(t)
	queries := 0
	var walk func([]dashboardPanel)
	walk = func(panels []dashboardPanel) {
		for _, p := range panels {
			walk(p.Panels)
			for _, target := range p.Targets {
				queries++
				for _, m := range jobMatcher.FindAllStringIndex(target.Expr, -1) {
					if rest := target.Expr[m[0]:]; !strings.HasPrefix(rest, `job=~"$job"`) {
						t.Errorf("panel %q selects a job otherwise than by $job: %s", p.Title, target.Expr)
					}
				}
			}
		}
	}
	walk(d.Panels)
	if queries == 0 {
		t.Fatal("dashboard.json has no query")
	}
	for _, v := range d.Templating.List {
		if v.Name == "job" {
			q, _ := v.Query.(map[string]any)
			if expr, _ := q["query"].(string); expr != "label_values(kubectl_informer_build_info, job)" {
				t.Errorf("the job variable lists %q, want the jobs of kubectl_informer_build_info", expr)
			}
		}
	}
}

// loadDashboard reads the shipped dashboard.
func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cluster.Root, monitoring, "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	return d
}
