package exporter

import (
	"fmt"
	"io"
	"strings"

	"k8s.io/cli-runtime/pkg/printers"
)

// noneCell stands for an empty cell in Describe's table, as in kubectl's.
const noneCell = "<none>"

// Describe writes, for each resource of c in the config's order, the metric
// families it exposes, as a table:
//
//	RESOURCE   METRIC                          TYPE    AGGREGATE   LABELS
//	pods       kube_pod_info                   info    <none>      namespace,node,pod,cluster="prod"
//	pods       kube_pod_status_phase_count     gauge   count       namespace,phase,cluster="prod"
//	nodes      <none>                          <none>  <none>      <none>
//
// LABELS lists the computed labels by name (those of a labelsFrom map as
// PREFIX_*), then the constant labels of
// commonLabels as name="value". A resource without metrics (one read only
// by get() or byIndex()) has a row of <none>. The output depends only on c.
func Describe(w io.Writer, c *Compiled) error {
	tw := printers.GetNewTabWriter(w)
	// tw buffers every cell until Flush, which returns any write error.
	_, _ = fmt.Fprintln(tw, "RESOURCE\tMETRIC\tTYPE\tAGGREGATE\tLABELS")
	for _, r := range c.Resources {
		resource := printers.EscapeTerminal(r.Config.Resource)
		if len(r.Families) == 0 {
			_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", resource, noneCell, noneCell, noneCell, noneCell)
			continue
		}
		for _, f := range r.Families {
			aggregate := f.Aggregate
			if aggregate == AggregateNone {
				aggregate = noneCell
			}
			_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", resource, printers.EscapeTerminal(f.Name), f.Type, aggregate, describeLabels(f))
		}
	}
	return tw.Flush()
}

// describeLabels lists the labels of f for Describe.
func describeLabels(f *Family) string {
	labels := make([]string, 0, len(f.LabelNames)+len(f.ConstLabels))
	labels = append(labels, f.LabelNames...)
	switch {
	case f.LabelsFrom != nil && f.LabelsVerbatim:
		labels = append(labels, "*")
	case f.LabelsFrom != nil:
		labels = append(labels, f.LabelsPrefix+"_*")
	}
	for _, c := range f.ConstLabels {
		labels = append(labels, fmt.Sprintf("%s=%q", c[0], c[1]))
	}
	if len(labels) == 0 {
		return noneCell
	}
	return printers.EscapeTerminal(strings.Join(labels, ","))
}
