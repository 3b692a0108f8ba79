package query

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/jsonpath"
	"k8s.io/kubectl/pkg/scheme"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/internal/getprint"
)

// PrintOptions describe the resource being printed and the printing flags
// kubectl get shares with this plugin. The zero value prints a namespaced
// resource across all namespaces, with headers, as of time.Now.
type PrintOptions struct {
	// GroupVersionKind is the kind of the queried resource. When set, every
	// printed item carries it as apiVersion/kind (typed objects from informers
	// usually have no TypeMeta, and metadata-only informers hold
	// PartialObjectMetadata). When empty, an item's own apiVersion/kind is
	// used, or for built-in typed objects the kind registered in kubectl's
	// scheme; an item whose kind stays unknown cannot be printed by -o json,
	// yaml, name, templates or custom-columns.
	GroupVersionKind schema.GroupVersionKind

	// Namespace is the namespace queried; "" means all namespaces, which adds
	// the NAMESPACE column to tables of namespaced resources. It also words
	// the "No resources found in NAMESPACE namespace." message.
	Namespace string

	// ClusterScoped marks a resource without namespaces: no NAMESPACE column.
	ClusterScoped bool

	// Template is the --template argument: the template (or template file) of
	// -o go-template, go-template-file, jsonpath, jsonpath-file and
	// jsonpath-as-json when the -o value does not carry one. With an empty -o
	// it selects -o go-template, as in kubectl get.
	Template string

	// StrictTemplateKeys makes templates fail on missing keys
	// (--allow-missing-template-keys=false). Default: missing keys print empty.
	StrictTemplateKeys bool

	// NoHeaders omits the header line of tables and custom columns.
	NoHeaders bool

	// ShowKind prefixes names in tables with the resource kind, as in
	// pod/web-0 or deployment.apps/web (--show-kind). The kind is found as
	// for -o name.
	ShowKind bool

	// ShowLabels adds a LABELS column to tables (--show-labels).
	ShowLabels bool

	// LabelColumns adds a column per label key to tables (-L).
	LabelColumns []string

	// ShowManagedFields keeps metadata.managedFields in -o json and -o yaml.
	// Default: omitted, as in kubectl get.
	ShowManagedFields bool

	// SingleItem: the query named one object, which -o json, yaml, name
	// and templates print by itself rather than in a List, as kubectl get
	// TYPE NAME does. Default: a List, whatever the number of objects.
	SingleItem bool

	// IndexNames adds a column per index to tables, in this order, with
	// each object's values in it (--index-columns), after the kind's
	// columns and Result.ColumnNames. Each must be one of
	// Result.Indexers. Nil: none, so that a table, -o wide too, has the
	// columns kubectl get prints.
	IndexNames []string

	// ErrOut receives "No resources found" and index evaluation warnings, as
	// kubectl writes them to stderr. Nil: discarded.
	ErrOut io.Writer

	// Now is the clock the AGE column is computed from. Nil: time.Now.
	Now func() time.Time

	// Clusters: the answer merges several clusters, and each item names
	// its own (Item.Cluster). Tables then begin with a CLUSTER column
	// (before NAMESPACE); -o json, yaml and templates see it as the
	// annotation ClusterAnnotation of each item; -o name prints "CLUSTER
	// TYPE/NAME" lines.
	Clusters bool

	// SayEmpty makes every format, not only tables, write "No resources
	// found" to ErrOut when there are no objects (-o json and yaml still
	// print their empty List): a watching command's answer that became
	// empty is then seen as such in every format. Default: as kubectl get,
	// only tables and groups say it.
	SayEmpty bool

	// Columns are the printer columns of a custom resource's
	// CustomResourceDefinition: tables then show NAME and these columns,
	// as the API server prints them. Nil: the columns the API server gives
	// the kind of the items (READY, STATUS, RESTARTS, AGE for pods, see
	// docs/query.md), or NAME and AGE for kinds without columns of their own.
	Columns []PrinterColumn

	// Server, when not nil, is the API server's table of the items (see
	// ServerTable): tables show its columns and cells, as kubectl get
	// does for kinds whose columns the plugin does not compute (see
	// HasKindColumns). Columns take precedence.
	Server *ServerTable

	// Encoded, when not nil, keeps the text -o json prints for each item
	// of a List and gives it back for the same object, so that objects
	// printed again unchanged are written without being encoded again. It
	// is used only when the text is the item's alone: without
	// ShowManagedFields and Clusters.
	Encoded ItemCache

	// ServerSide marks a printer printing for others (a query server): it
	// reads no files (a -file format is a *TemplateFileError) and refuses
	// templates longer than MaxTemplateBytes and JSONPath templates with
	// more than MaxServedRecursiveDescents recursive descents.
	ServerSide bool

	// Context, when not nil, bounds printing: once it ends, writes fail,
	// Go templates stop at their next template call or range element, and
	// Print returns an error wrapping indexers.ErrInterrupted and the
	// context's cause. Nil: printing runs to its end.
	Context context.Context
}

// ItemCache keeps the text printed for cached objects. Its methods are
// called concurrently.
type ItemCache interface {
	// Load returns the text stored for obj printed as kind gvk: the very
	// object (the same pointer), not another version of it.
	Load(gvk schema.GroupVersionKind, obj runtime.Object) ([]byte, bool)
	// Store offers text, obj printed as kind gvk, which the cache may keep
	// or not. text is not changed afterwards, by either side.
	Store(gvk schema.GroupVersionKind, obj runtime.Object, text []byte)
}

// Printer writes query results in one kubectl get output format. A Printer
// holds no state between calls: Print may be called repeatedly and
// concurrently.
type Printer struct {
	output string
	opts   PrintOptions
	// isTable is true for the default table and -o wide.
	isTable bool
	wide    bool
}

// NewPrinter validates the -o value output and returns a printer for it. It
// accepts every format of kubectl get: "" (table), wide, json, yaml, kyaml,
// name, go-template, go-template-file, template, templatefile, jsonpath,
// jsonpath-file, jsonpath-as-json, custom-columns and custom-columns-file,
// with a template given as -o FORMAT=TEMPLATE or in opts.Template.
//
// An unknown format returns kubectl's error (a
// genericclioptions.NoCompatiblePrinterError, so
// genericclioptions.IsNoCompatiblePrinterError reports it): "unable to match a
// printer suitable for the output format "x", allowed formats are: …". A bad
// template or an unreadable template file is reported here too.
func NewPrinter(output string, opts PrintOptions) (*Printer, error) {
	p := &Printer{
		output:  output,
		opts:    opts,
		isTable: (output == "" && opts.Template == "") || output == "wide",
		wide:    output == "wide",
	}
	p.opts.LabelColumns = slices.Clone(opts.LabelColumns)
	p.opts.IndexNames = slices.Clone(opts.IndexNames)
	p.opts.Columns = slices.Clone(opts.Columns)
	for _, c := range p.opts.Columns {
		if _, err := parseColumn(c); err != nil {
			return nil, err
		}
	}
	if opts.ServerSide {
		if err := checkServed(output, opts.Template); err != nil {
			return nil, err
		}
	}
	if opts.ErrOut == nil {
		p.opts.ErrOut = io.Discard
	}
	if opts.Now == nil {
		p.opts.Now = time.Now
	}
	if _, err := p.resourcePrinter(schema.GroupKind{}); err != nil {
		return nil, err
	}
	return p, nil
}

// AllowedFormats returns the -o values NewPrinter accepts (those that take a
// template as FORMAT=TEMPLATE are listed by their FORMAT), sorted.
func AllowedFormats() []string {
	formats := getprint.NewGetPrintFlags().AllowedFormats()
	slices.Sort(formats)
	return formats
}

// HumanReadable reports whether the printer writes tables (the default
// output and -o wide). Counts (ModeCount and ModeGroups results) can only be
// printed by such printers.
func (p *Printer) HumanReadable() bool { return p.isTable }

// resourcePrinter builds the kubectl printer for the output format; kind is
// the prefix of names in tables with ShowKind. It is built per Print: several
// kubectl printers remember what they printed last.
func (p *Printer) resourcePrinter(kind schema.GroupKind) (printers.ResourcePrinter, error) {
	flags := getprint.NewGetPrintFlags()
	*flags.OutputFormat = p.output
	*flags.NoHeaders = p.opts.NoHeaders
	*flags.TemplateFlags.TemplateArgument = p.opts.Template
	*flags.TemplateFlags.AllowMissingKeys = !p.opts.StrictTemplateKeys
	// Managed fields are dropped while copying items, which spares the deep
	// copy of the whole list that kubectl's OmitManagedFieldsPrinter makes.
	flags.JSONYamlPrintFlags.ShowManagedFields = true

	human := flags.HumanReadableFlags
	// With clusters, table adds NAMESPACE itself, after CLUSTER.
	if p.namespaceColumn() && !p.opts.Clusters {
		human.WithNamespace = true
	}
	human.ShowKind = &p.opts.ShowKind
	human.ShowLabels = &p.opts.ShowLabels
	labelColumns := slices.Clone(p.opts.LabelColumns) // the flags own their copy
	human.ColumnLabels = &labelColumns
	human.Kind = kind

	printer, err := flags.ToPrinter()
	if g, ok := printer.(*printers.GoTemplatePrinter); ok && err == nil && p.opts.Context != nil {
		return p.stoppable(g)
	}
	return printer, err
}

// ClusterAnnotation holds, in the items of an answer over several
// clusters printed as -o json, yaml or a template, the name of the context
// the item was read from.
const ClusterAnnotation = "kubectl-informer.io/cluster"

// namespaceColumn reports whether tables have a NAMESPACE column: all
// namespaces of a namespaced resource.
func (p *Printer) namespaceColumn() bool {
	return p.opts.Namespace == "" && !p.opts.ClusterScoped
}

// Print writes res to w in the printer's format.
//
// Objects (ModeObjects) are printed as a table (NAMESPACE when all
// namespaces, then the columns of the items' kind as the API server gives
// them to kubectl get, NAME and AGE for most kinds, with -o wide those of
// priority 1 too; then Result.ColumnNames; then the values of each index
// of PrintOptions.IndexNames) in the order of res.Items, or, in every other format,
// as one v1 List like kubectl get -o json prints: apiVersion v1, kind List,
// metadata.resourceVersion "", each item with its apiVersion and kind. When
// there are no objects, a table prints nothing and writes "No resources
// found in NAMESPACE namespace." (or "No resources found") to
// PrintOptions.ErrOut.
//
// A count (ModeCount) prints the bare number; groups (ModeGroups) print one
// aligned "VALUE COUNT" line per group. Both need a HumanReadable printer.
func (p *Printer) Print(w io.Writer, res *Result) error {
	if p.opts.Context == nil {
		return p.print(w, res)
	}
	if err := p.stopped(); err != nil {
		return err
	}
	sw := &stoppingWriter{w: w, p: p}
	err := p.print(sw, res)
	if stop := p.stopped(); stop != nil && (err != nil || sw.failed) {
		return stop // whatever else failed since
	}
	return err
}

// print is Print.
func (p *Printer) print(w io.Writer, res *Result) error {
	switch res.Mode {
	case ModeAggregates:
		return p.printRows(w, res)
	case ModeCount, ModeGroups:
		if !p.isTable {
			return fmt.Errorf("counts are printed as text; output format %q cannot print them", p.output)
		}
		if res.Mode == ModeCount {
			_, err := fmt.Fprintf(w, "%d\n", res.Matched)
			return err
		}
		if len(res.Groups) == 0 {
			p.noResources()
			return nil
		}
		tw := printers.GetNewTabWriter(w)
		for _, g := range res.Groups {
			_, _ = fmt.Fprintf(tw, "%s\t%d\n", printers.EscapeTerminal(g.Value), g.Count)
		}
		return tw.Flush()
	}

	if p.isTable {
		if len(res.Items) == 0 {
			p.noResources()
			return nil
		}
		var kind schema.GroupKind
		if p.opts.ShowKind {
			gvk, err := p.kindOf(res.Items[0].Object)
			if err != nil {
				return err
			}
			kind = gvk.GroupKind()
		}
		printer, err := p.resourcePrinter(kind)
		if err != nil {
			return err
		}
		table, err := p.table(res)
		if err != nil {
			return err
		}
		return printer.PrintObj(table, w)
	}
	if p.opts.SayEmpty && len(res.Items) == 0 {
		p.noResources()
	}
	if stream := p.streamed(res); stream != nil {
		return stream(w, res)
	}
	return p.printWhole(w, res, 0)
}

// noResources writes kubectl get's message for an empty result.
func (p *Printer) noResources() {
	if p.opts.Namespace != "" && !p.opts.ClusterScoped {
		_, _ = fmt.Fprintf(p.opts.ErrOut, "No resources found in %s namespace.\n", p.opts.Namespace)
		return
	}
	_, _ = fmt.Fprintln(p.opts.ErrOut, "No resources found")
}

// table builds the metav1.Table kubectl's table printer lays out. Index
// columns have priority 1, so only -o wide shows them.
func (p *Printer) table(res *Result) (*metav1.Table, error) {
	now := p.opts.Now()
	rowOf, kindColumns, err := p.kindCells(res)
	if err != nil {
		return nil, err
	}
	kindRows := make([][]any, len(res.Items))
	for i, item := range res.Items {
		if kindRows[i], err = rowOf(item.Object, now); err != nil {
			break
		}
	}
	if err != nil {
		// Items of another kind than the columns' (a caller's mix): the
		// columns every object has.
		kindColumns = []metav1.TableColumnDefinition{nameColumn, ageColumn}
		for i, item := range res.Items {
			kindRows[i], _ = nameAndAge(item.Object, now)
		}
	}
	if p.opts.Clusters {
		// CLUSTER first, then NAMESPACE, which kubectl's printer would
		// otherwise put first.
		lead := []metav1.TableColumnDefinition{{Name: "CLUSTER", Type: "string"}}
		if p.namespaceColumn() {
			lead = append(lead, metav1.TableColumnDefinition{Name: "NAMESPACE", Type: "string"})
		}
		for i, item := range res.Items {
			cells := []any{item.Cluster}
			if p.namespaceColumn() {
				ns := ""
				if m, ok := item.Object.(metav1.Object); ok {
					ns = m.GetNamespace()
				}
				cells = append(cells, ns)
			}
			kindRows[i] = append(cells, kindRows[i]...)
		}
		kindColumns = append(lead, kindColumns...)
	}
	table := &metav1.Table{
		ColumnDefinitions: slices.Clone(kindColumns),
		Rows:              make([]metav1.TableRow, len(res.Items)),
	}
	for _, name := range res.ColumnNames {
		table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{Name: name, Type: "string"})
	}
	indexes := p.opts.IndexNames
	var indexFuncs []cache.IndexFunc
	for _, name := range indexes {
		f, ok := res.Indexers[name]
		if !ok {
			return nil, unknownIndexError(name, res.Indexers)
		}
		indexFuncs = append(indexFuncs, f)
		table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{Name: name, Type: "string"})
	}
	indexFails := make([]Failures, len(indexes))

	for i, item := range res.Items {
		cells := slices.Grow(kindRows[i], len(table.ColumnDefinitions)-len(kindRows[i]))
		for c := range res.ColumnNames {
			var v any
			if c < len(item.Values) {
				v = item.Values[c]
			}
			cells = append(cells, FormatValue(v))
		}
		for x, f := range indexFuncs {
			values, err := f(item.Object)
			switch {
			case err != nil:
				indexFails[x].Add(item.Object, err)
				cells = append(cells, "<error>")
			case len(values) == 0:
				cells = append(cells, None)
			default:
				cells = append(cells, strings.Join(values, ","))
			}
		}
		table.Rows[i] = metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: item.Object}}
	}
	for x, name := range indexes {
		indexFails[x].w.Source = "index " + name
		if w, ok := indexFails[x].Warning(len(res.Items)); ok {
			_, _ = fmt.Fprintf(p.opts.ErrOut, "warning: %s\n", w)
		}
	}
	return table, nil
}

// kindCells returns the columns of the items' kind and the function that
// computes an item's cells in them: the CRD's printer columns, the API
// server's table (PrintOptions.Server), the columns of a built-in kind,
// NAME and CREATED AT for the built-in kinds the API server has no
// printer for, or NAME and AGE. Items held as metadata only
// (metav1.PartialObjectMetadata) have no columns of their kind of their
// own, only those of the server's table.
func (p *Printer) kindCells(res *Result) (func(runtime.Object, time.Time) ([]any, error), []metav1.TableColumnDefinition, error) {
	if len(p.opts.Columns) > 0 {
		columns := []metav1.TableColumnDefinition{nameColumn}
		paths := make([]*jsonpath.JSONPath, len(p.opts.Columns))
		for i, c := range p.opts.Columns {
			jp, err := parseColumn(c) // a JSONPath keeps state while it prints
			if err != nil {
				return nil, nil, err
			}
			paths[i] = jp
			columns = append(columns, metav1.TableColumnDefinition{Name: c.Name, Type: c.Type, Format: c.Format, Description: c.Description, Priority: c.Priority})
		}
		return func(obj runtime.Object, now time.Time) ([]any, error) {
			return customColumns(obj, p.opts.Columns, paths, now)
		}, columns, nil
	}
	if t := p.opts.Server; t != nil && len(t.Columns) > 0 {
		return func(obj runtime.Object, now time.Time) ([]any, error) {
			return serverCells(t, obj, now)
		}, t.Columns, nil
	}
	if len(res.Items) > 0 {
		if gvk, err := p.kindOf(res.Items[0].Object); err == nil {
			_, partial := res.Items[0].Object.(*metav1.PartialObjectMetadata)
			if kc, ok := builtinColumns[gvk.GroupKind()]; ok && !partial {
				return kc.cells, kc.columns, nil
			}
			if createdAtKinds.Has(gvk.GroupKind()) {
				return nameAndCreatedAt, []metav1.TableColumnDefinition{nameColumn, createdAtColumn}, nil
			}
		}
	}
	return nameAndAge, []metav1.TableColumnDefinition{nameColumn, ageColumn}, nil
}

// nameAndAge are the cells of kubectl's default table.
func nameAndAge(obj runtime.Object, now time.Time) ([]any, error) {
	name, created := "", metav1.Time{}
	if m, ok := obj.(metav1.Object); ok {
		name, created = m.GetName(), m.GetCreationTimestamp()
	}
	return []any{name, age(created, now)}, nil
}

// list builds the v1 List kubectl get prints for several objects. Items are
// copies (see content).
func (p *Printer) list(res *Result) (*unstructured.UnstructuredList, error) {
	list := &unstructured.UnstructuredList{
		Object: listHead(),
		Items:  make([]unstructured.Unstructured, len(res.Items)),
	}
	for i, item := range res.Items {
		content, err := p.content(item)
		if err != nil {
			return nil, err
		}
		list.Items[i].Object = content
	}
	return list, nil
}

// listHead is the top level of the v1 List kubectl get prints, without
// its items.
func listHead() map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "List",
		"metadata":   map[string]any{"resourceVersion": ""},
	}
}

// content returns the item as the List kubectl get prints holds it: a
// shallow copy of an unstructured object's top level (and of its metadata
// when managed fields are dropped), or a typed object converted to a map,
// with its apiVersion and kind. -o name needs only kind and name.
func (p *Printer) content(item Item) (map[string]any, error) {
	gvk, err := p.kindOf(item.Object)
	if err != nil {
		return nil, err
	}
	nameOnly := strings.EqualFold(p.output, "name")
	var content map[string]any
	switch {
	case nameOnly:
		name := ""
		if m, ok := item.Object.(metav1.Object); ok {
			name = m.GetName()
		}
		content = map[string]any{"metadata": map[string]any{"name": name}}
	default:
		if u, ok := item.Object.(*unstructured.Unstructured); ok {
			content = maps.Clone(u.Object)
		} else {
			content, err = runtime.DefaultUnstructuredConverter.ToUnstructured(item.Object)
			if err != nil {
				return nil, fmt.Errorf("converting %s for printing: %w", indexers.ObjectName(item.Object), err)
			}
		}
		if !p.opts.ShowManagedFields && isJSONOrYAML(p.output) {
			if md, ok := content["metadata"].(map[string]any); ok {
				if _, has := md["managedFields"]; has {
					md = maps.Clone(md)
					delete(md, "managedFields")
					content["metadata"] = md
				}
			}
		}
	}
	content["apiVersion"], content["kind"] = gvk.ToAPIVersionAndKind()
	if p.opts.Clusters && !nameOnly {
		annotateCluster(content, item.Cluster)
	}
	return content, nil
}

// annotateCluster sets the ClusterAnnotation of content, a copy of an
// item made for printing: its metadata and annotations are copied before
// they are changed, as the cache's object shares them.
func annotateCluster(content map[string]any, cluster string) {
	md, _ := content["metadata"].(map[string]any)
	md = maps.Clone(md)
	if md == nil {
		md = map[string]any{}
	}
	annotations, _ := md["annotations"].(map[string]any)
	annotations = maps.Clone(annotations)
	if annotations == nil {
		annotations = map[string]any{}
	}
	annotations[ClusterAnnotation] = cluster
	md["annotations"] = annotations
	content["metadata"] = md
}

func isJSONOrYAML(output string) bool {
	switch strings.ToLower(output) {
	case "json", "yaml", "kyaml":
		return true
	}
	return false
}

// kindOf returns the apiVersion/kind an object is printed with.
func (p *Printer) kindOf(obj runtime.Object) (schema.GroupVersionKind, error) {
	if !p.opts.GroupVersionKind.Empty() {
		return p.opts.GroupVersionKind, nil
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if _, partial := obj.(*metav1.PartialObjectMetadata); partial && gvk.Kind != "" && gvk.Kind != "PartialObjectMetadata" {
		return gvk, nil // stamped with the real kind by the informer's transform
	}
	if _, partial := obj.(*metav1.PartialObjectMetadata); !partial {
		if !gvk.Empty() && gvk.Kind != "" {
			return gvk, nil
		}
		if _, isUnstructured := obj.(runtime.Unstructured); !isUnstructured {
			if gvks, _, err := scheme.Scheme.ObjectKinds(obj); err == nil && len(gvks) > 0 {
				return gvks[0], nil
			}
		}
	}
	return schema.GroupVersionKind{}, fmt.Errorf("cannot print %s: its apiVersion and kind are unknown; the resource's kind must be given in PrintOptions.GroupVersionKind", indexers.ObjectName(obj))
}
