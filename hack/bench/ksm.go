package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strings"

	"github.com/kubectl-informer/kubectl-informer/internal/seriesset"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
)

// kubeStateMetricsVersion returns what the kube-state-metrics binary at
// path says of its version (its `version` command: it has no --version
// flag).
func kubeStateMetricsVersion(path string) (string, error) {
	out, err := exec.Command(path, "version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%q version: %w\n%s (KSM= must name a kube-state-metrics binary)", path, err, out)
	}
	return strings.Join(strings.Fields(string(out)), " "), nil
}

// exporterTarget is what the exporter serves in the benchmark, and the
// resources and families kube-state-metrics serves beside it.
type exporterTarget struct {
	// name names it in the report.
	name string
	// args are the exporter's flags that choose its families.
	args []string
	// resources and families are the profile's, for kube-state-metrics'
	// --resources and --metric-allowlist.
	resources, families []string
	// whole is set when the target is the whole profile: every default
	// resource and family of kube-state-metrics, which then runs with its
	// defaults, not with --resources and --metric-allowlist.
	whole bool
}

// profileTarget is the kube-state-metrics profile on resources; all of it
// when resources is nil.
func profileTarget(resources []string) (exporterTarget, error) {
	t := exporterTarget{
		name:      "the kube-state-metrics profile",
		args:      []string{"--profile=" + profiles.KubeStateMetrics},
		resources: resources,
		whole:     resources == nil,
	}
	if t.whole {
		files, err := profiles.Files(profiles.KubeStateMetrics)
		if err != nil {
			return t, err
		}
		for _, f := range files {
			if f.Default {
				t.resources = append(t.resources, f.Resource)
			}
		}
		t.name = "the whole kube-state-metrics profile"
	} else {
		t.args = append(t.args, "--resources="+strings.Join(resources, ","))
	}
	for _, res := range t.resources {
		f, err := profiles.FileOf(profiles.KubeStateMetrics, res)
		if err != nil {
			return t, err
		}
		cfg, err := exporter.Parse(f.Path, f.Data)
		if err != nil {
			return t, err
		}
		for _, r := range cfg.Resources {
			for _, m := range r.Metrics {
				// The opt-in families are served by neither side: the
				// exporter runs without --metric-opt-in-list.
				if !slices.Contains(profiles.OptInFamilies(profiles.KubeStateMetrics), cfg.Prefix+m.Name) {
					t.families = append(t.families, cfg.Prefix+m.Name)
				}
			}
		}
	}
	return t, nil
}

// kubeStateMetricsArgs are the flags kube-state-metrics runs with beside
// the exporter: the resources and families of the exporter's target (none
// for the whole profile: its defaults are the same), so that both serve the
// same series, on loopback ports, gzip allowed (it is off by default;
// Prometheus asks for it), all else at its defaults.
func kubeStateMetricsArgs(t exporterTarget, kubeconfig, addr, telemetryAddr string) []string {
	host, port, _ := strings.Cut(addr, ":")
	thost, tport, _ := strings.Cut(telemetryAddr, ":")
	args := []string{"--kubeconfig=" + kubeconfig}
	if !t.whole {
		args = append(args, "--resources="+strings.Join(t.resources, ","), "--metric-allowlist="+strings.Join(t.families, ","))
	}
	return append(args,
		"--host="+host, "--port="+port,
		"--telemetry-host="+thost, "--telemetry-port="+tport,
		"--enable-gzip-encoding")
}

// comparison is how the exporter's exposition compares with
// kube-state-metrics', family by family.
type comparison struct {
	// same are the families identical in both; differ those that are not,
	// each with what differs.
	same   []string
	differ []string
	// series counts the series of the identical families.
	series int
}

func (c *comparison) summary() string {
	s := fmt.Sprintf("%d of %d (%d series)", len(c.same), len(c.same)+len(c.differ), c.series)
	if len(c.differ) > 0 {
		s += "; differing: " + strings.Join(c.differ, "; ")
	}
	return s
}

// compareSeries compares the families of exp and ksm, two expositions.
func compareSeries(exp, ksm []byte, families []string) (*comparison, error) {
	e, err := seriesset.Parse(bytes.NewReader(exp))
	if err != nil {
		return nil, fmt.Errorf("parsing the exporter's /metrics: %w", err)
	}
	k, err := seriesset.Parse(bytes.NewReader(ksm))
	if err != nil {
		return nil, fmt.Errorf("parsing kube-state-metrics' /metrics: %w", err)
	}
	c := &comparison{}
	for _, name := range families {
		ef, kf := e[name], k[name]
		var what []string
		if ef.Help != kf.Help && len(ef.Series)+len(kf.Series) > 0 {
			what = append(what, "HELP")
		}
		if ef.Type != kf.Type && len(ef.Series)+len(kf.Series) > 0 {
			what = append(what, "TYPE")
		}
		if a, b := seriesset.Minus(ef.Series, kf.Series), seriesset.Minus(kf.Series, ef.Series); len(a)+len(b) > 0 {
			what = append(what, fmt.Sprintf("%d series only in the exporter's, %d only in kube-state-metrics'", len(a), len(b)))
		}
		if len(what) > 0 {
			c.differ = append(c.differ, name+": "+strings.Join(what, ", "))
			continue
		}
		c.same = append(c.same, name)
		c.series += len(ef.Series)
	}
	return c, nil
}
