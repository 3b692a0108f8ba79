// Command profiledoc writes docs/kube-state-metrics-profile.md, the
// reference of the kube-state-metrics profile's families, from the
// profile's config files: for each family its resource, type, labels, the
// series it has per object and its value, and the kube-state-metrics
// release whose semantics it follows.
//
//	go run ./hack/profiledoc > docs/kube-state-metrics-profile.md
//
// main_test.go fails when the file in docs/ is not what this writes.
package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
)

// ksmVersion is the kube-state-metrics release whose families the profile
// reproduces.
const ksmVersion = "v2.20"

func main() {
	if err := write(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "profiledoc:", err)
		os.Exit(1)
	}
}

func write(w io.Writer) error {
	files, err := profiles.Files(profiles.KubeStateMetrics)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, `# The kube-state-metrics profile

<!-- Written by go run ./hack/profiledoc; do not edit. -->

`+"`kubectl informer export --profile kube-state-metrics`"+` serves the metric families below, which
reproduce kube-state-metrics %s's families of the same names: same TYPE, HELP text, labels,
series per object and values. Each resource's families are an ordinary exporter config
(docs/exporter-config.md) embedded in the binary; `+"`--print-config`"+` writes them out. "Series"
is the CEL expression whose list gives one series per element (bound as `+"`each`"+`), or "one"
for one series per object; "value" is the sample value's expression, 1 when empty, and a value
that is absent (an empty optional, null) leaves the series out. A label whose expression gives an
empty optional (`+"`each.?reason`"+` of an element without one) is not written in that series, where
kube-state-metrics writes no such label. Labels "PREFIX_* from MAP" are one
per entry of the map, named as kube-state-metrics names them; with an allowlist, only for the
resources and keys the option names. kube-state-metrics' opt-in families, marked "opt-in", are
served when `+"`--metric-opt-in-list`"+` names them, and its resources outside its `+"`--resources`"+`
default when `+"`--resources`"+` names them, as there.

`, ksmVersion)
	for _, f := range files {
		cfg, err := exporter.Parse(f.Path, f.Data)
		if err != nil {
			return err
		}
		for _, r := range cfg.Resources {
			fmt.Fprintf(&b, "## %s\n\n", r.Resource)
			if !f.Default {
				fmt.Fprintf(&b, "Not a default resource of kube-state-metrics: served when `--resources` names it.\n\n")
			}
			b.WriteString("| family | type | labels | series | value | follows |\n|---|---|---|---|---|---|\n")
			for _, m := range r.Metrics {
				labels := slices.Sorted(maps.Keys(m.Labels))
				if lf := m.LabelsFrom; lf != nil {
					from := lf.Prefix + "_* from " + code(lf.Map)
					if lf.Allowlist != "" {
						from += " (--metric-" + lf.Allowlist + "-allowlist)"
					}
					labels = append(labels, from)
				}
				series := "one"
				if m.Each != "" {
					series = code(m.Each)
				}
				name := "`" + cfg.Prefix + m.Name + "`"
				if slices.Contains(profiles.OptInFamilies(profiles.KubeStateMetrics), cfg.Prefix+m.Name) {
					name += " (opt-in)"
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | kube-state-metrics %s |\n",
					name, m.Type, strings.Join(labels, ", "), series, code(m.Value), ksmVersion)
			}
			b.WriteString("\n")
		}
	}
	_, err = io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}

// code writes a CEL expression as a one-line code span of a table cell.
func code(expr string) string {
	expr = strings.Join(strings.Fields(expr), " ")
	if expr == "" {
		return ""
	}
	return "`" + strings.ReplaceAll(expr, "|", `\|`) + "`"
}
