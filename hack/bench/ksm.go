package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
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

// kubeStateMetricsArgs are the flags kube-state-metrics runs with beside
// the exporter: the resources and families of the exporter's config, so
// that both serve the same series, on loopback ports, gzip allowed (it is
// off by default; Prometheus asks for it), all else at its defaults.
func kubeStateMetricsArgs(config, kubeconfig, addr, telemetryAddr string) ([]string, error) {
	resources, families, err := configFamilies(config)
	if err != nil {
		return nil, err
	}
	host, port, _ := strings.Cut(addr, ":")
	thost, tport, _ := strings.Cut(telemetryAddr, ":")
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--resources=" + strings.Join(resources, ","),
		"--metric-allowlist=" + strings.Join(families, ","),
		"--host=" + host, "--port=" + port,
		"--telemetry-host=" + thost, "--telemetry-port=" + tport,
		"--enable-gzip-encoding",
	}, nil
}

// configFamilies returns the resources of an exporter config and the names
// of its families.
func configFamilies(path string) (resources, families []string, err error) {
	b, err := os.ReadFile(path) //nolint:gosec // G304: the exporter config the user named
	if err != nil {
		return nil, nil, err
	}
	cfg, err := exporter.Parse(path, b)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range cfg.Resources {
		resources = append(resources, r.Resource)
		for _, m := range r.Metrics {
			families = append(families, m.Name)
		}
	}
	return resources, families, nil
}
