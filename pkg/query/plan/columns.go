package plan

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/kubectl/pkg/scheme"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// printsTable reports whether the plan prints objects as a table, whose
// columns are those of each resource's kind.
func (p *Plan) printsTable() bool {
	return !p.req.Count && !p.aggregated() && p.printer != nil && p.printer.HumanReadable()
}

// printerColumns returns the additionalPrinterColumns of res, read from its
// CustomResourceDefinition, when the plan prints a table of a resource
// that is not built in (or may print one later: it caches whole objects),
// and whether it read them. A resource without a CRD (an aggregated API)
// or whose CRD the user may not read has none: its tables are the API
// server's (see serverTable), as kubectl get prints them.
func (p *Plan) printerColumns(ctx context.Context, conn Conn, res factory.Resource) ([]query.PrinterColumn, bool) {
	if !p.printsTable() && !p.req.WholeObjects || scheme.Scheme.Recognizes(res.GVK) || res.GVR.Group == "" {
		return nil, false
	}
	columns, err := readPrinterColumns(ctx, conn, res)
	if err != nil {
		return nil, false
	}
	if columns == nil {
		columns = []query.PrinterColumn{}
	}
	return columns, true
}

// readPrinterColumns reads the printer columns of res's version from its
// CustomResourceDefinition.
func readPrinterColumns(ctx context.Context, conn Conn, res factory.Resource) ([]query.PrinterColumn, error) {
	client, err := dynamic.NewForConfig(conn.Config)
	if err != nil {
		return nil, err
	}
	crd, err := client.Resource(crdResource).Get(ctx, res.GVR.GroupResource().String(), metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		version, ok := v.(map[string]any)
		if !ok || version["name"] != res.GVR.Version {
			continue
		}
		raw, _, _ := unstructured.NestedSlice(version, "additionalPrinterColumns")
		var columns []query.PrinterColumn
		for _, c := range raw {
			var col query.PrinterColumn
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(asMap(c), &col); err != nil {
				return nil, fmt.Errorf("printer column of %s: %w", res, err)
			}
			columns = append(columns, col)
		}
		return columns, nil
	}
	return nil, nil
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// needs is what the plan needs of res's objects, with the index programs
// ixs: the fields its expressions read and, for a table, those its
// columns read; metadata alone when that is all they read.
func (p *Plan) needs(res factory.Resource, ixs map[string]*indexers.Program, columns []query.PrinterColumn, stats *indexers.Stats) factory.Needs {
	needs := factory.Needs{Mode: factory.ModeFull, Indexers: indexers.IndexFuncs(ixs, stats), Fields: p.fields(ixs)}
	printed := query.PrintedFields(res.GVK.GroupKind(), nil)
	switch {
	case !p.printsTable():
		printed = query.PrintedFields(schema.GroupKind{}, nil)
	case len(columns) > 0:
		printed = query.PrintedFields(res.GVK.GroupKind(), columns)
	}
	if p.metadataOnly(ixs) && printed != nil && len(printed.List()) == 0 {
		needs.Mode, needs.Fields = factory.ModeMetadata, nil
	} else if needs.Fields != nil && !needs.Fields.Union(printed) {
		needs.Fields = nil
	}
	return needs
}
