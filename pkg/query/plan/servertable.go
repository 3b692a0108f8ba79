package plan

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
)

// tableAccept asks the API server for its table of the objects, as
// kubectl get does.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

// tableChunk is the number of rows asked for per list request, as
// kubectl get's --chunk-size.
const tableChunk = 500

// refetchOver is the number of objects missing from the last table above
// which a new table is listed rather than each object's row read by name.
const refetchOver = 8

// serverTables are the API server's tables of the queried resources whose
// columns are not computed locally (see query.HasKindColumns): the last
// table of each, whose rows are printed again while their objects are
// unchanged.
type serverTables struct {
	mu sync.Mutex // guards tables and clients
	// tables are the last table printed of each resource.
	tables map[schema.GroupVersionResource]*query.ServerTable
	// clients are the REST clients of each group and version.
	clients map[schema.GroupVersion]*rest.RESTClient
}

// serverTable returns the API server's table of the objects of the
// result r of res, when the plan prints a table of a resource whose
// columns are not computed locally; nil otherwise. A table is listed
// over the request's scope the first time (one request, or one per 500
// objects), and afterwards each object printed since it changed has its
// row read by name, or, when more than a few have, the table is listed
// again. When the server does not answer, a warning is written to errOut
// and nil returned: the table shows NAME and AGE, as it does, without a
// warning, for a server that sends no tables.
func (c *Caches) serverTable(p *Plan, res factory.Resource, r *query.Result, errOut io.Writer) *query.ServerTable {
	if c == nil || c.conn.Config == nil || len(r.Items) == 0 || !p.printsTable() || query.HasKindColumns(res.GVK.GroupKind()) {
		return nil
	}
	if _, ok := c.crdColumns[res.GVR]; ok {
		return nil
	}
	c.server.mu.Lock()
	defer c.server.mu.Unlock()
	ctx := context.Background()
	if p.req.SyncTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.req.SyncTimeout)
		defer cancel()
	}
	last := c.server.tables[res.GVR]
	missing := missingRows(last, r.Items)
	if last == nil || len(missing) > refetchOver {
		t, err := c.listTable(ctx, p, res)
		if errors.Is(err, errNotTable) {
			return nil // as kubectl get prints the objects of such a server
		}
		if err != nil {
			_, _ = fmt.Fprintf(errOut, "warning: the columns of %s are unknown, NAME and AGE are printed: reading its table: %v\n", res, err)
			return nil
		}
		last = t
		missing = missingRows(last, r.Items)
	}
	for _, m := range missing {
		t, err := c.getTable(ctx, res, m)
		if err != nil {
			continue // deleted since: printed with NAME and AGE
		}
		last = mergeTables(last, t)
	}
	if c.server.tables == nil {
		c.server.tables = map[schema.GroupVersionResource]*query.ServerTable{}
	}
	// Only the rows printed are kept: the objects deleted since leave.
	kept := &query.ServerTable{Columns: last.Columns, Rows: make(map[types.NamespacedName]query.ServerRow, len(r.Items))}
	for _, item := range r.Items {
		if m, ok := item.Object.(metav1.Object); ok {
			key := types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}
			if row, ok := last.Rows[key]; ok {
				kept.Rows[key] = row
			}
		}
	}
	c.server.tables[res.GVR] = kept
	return last
}

// missingRows returns the objects of items that t has no row of, or the
// row of an older version of.
func missingRows(t *query.ServerTable, items []query.Item) []metav1.Object {
	var out []metav1.Object
	for _, item := range items {
		m, ok := item.Object.(metav1.Object)
		if !ok {
			continue
		}
		if t != nil {
			row, ok := t.Rows[types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}]
			if ok && row.UID == m.GetUID() && row.ResourceVersion == m.GetResourceVersion() {
				continue
			}
		}
		out = append(out, m)
	}
	return out
}

// mergeTables returns t with the rows of more, which keep the places of
// the rows they replace (new ones come last, in their order); t unchanged
// when the columns differ.
func mergeTables(t, more *query.ServerTable) *query.ServerTable {
	if len(more.Columns) != len(t.Columns) {
		return t
	}
	rows := make(map[types.NamespacedName]query.ServerRow, len(t.Rows)+len(more.Rows))
	for k, v := range t.Rows {
		rows[k] = v
	}
	last := 0
	for _, v := range t.Rows {
		last = max(last, v.Position+1)
	}
	added := slices.SortedFunc(maps.Keys(more.Rows), func(a, b types.NamespacedName) int {
		return cmp.Compare(more.Rows[a].Position, more.Rows[b].Position)
	})
	for _, k := range added {
		v := more.Rows[k]
		if old, ok := t.Rows[k]; ok {
			v.Position = old.Position
		} else {
			v.Position = last
			last++
		}
		rows[k] = v
	}
	return &query.ServerTable{Columns: t.Columns, Rows: rows}
}

// client returns the REST client of gv's API.
func (c *Caches) client(gv schema.GroupVersion) (*rest.RESTClient, error) {
	if client, ok := c.server.clients[gv]; ok {
		return client, nil
	}
	cfg := rest.CopyConfig(c.conn.Config)
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	if gv.Group == "" {
		cfg.APIPath = "/api"
	}
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	client, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	if c.server.clients == nil {
		c.server.clients = map[schema.GroupVersion]*rest.RESTClient{}
	}
	c.server.clients[gv] = client
	return client, nil
}

// listTable lists the table of res over the request's scope.
func (c *Caches) listTable(ctx context.Context, p *Plan, res factory.Resource) (*query.ServerTable, error) {
	client, err := c.client(res.GVR.GroupVersion())
	if err != nil {
		return nil, err
	}
	scope := namedScope(factory.Scope{Namespace: p.req.Namespace, LabelSelector: p.req.LabelSelector, FieldSelector: p.req.FieldSelector}, c.named[res.GVR])
	var out *query.ServerTable
	next := ""
	for {
		req := client.Get().Resource(res.GVR.Resource).NamespaceIfScoped(scope.Namespace, res.Namespaced).
			Param("includeObject", string(metav1.IncludeMetadata)).Param("limit", fmt.Sprint(tableChunk)).
			SetHeader("Accept", tableAccept)
		if scope.LabelSelector != "" {
			req.Param("labelSelector", scope.LabelSelector)
		}
		if scope.FieldSelector != "" {
			req.Param("fieldSelector", scope.FieldSelector)
		}
		if next != "" {
			req.Param("continue", next)
		}
		body, err := req.DoRaw(ctx)
		if err != nil {
			return nil, err
		}
		t, cont, err := decodeTable(body)
		if err != nil {
			return nil, fmt.Errorf("decoding the table of %s: %w", res, err)
		}
		if out == nil {
			out = t
		} else {
			out = mergeTables(out, t)
		}
		if next = cont; next == "" {
			return out, nil
		}
	}
}

// getTable reads the row of the object m of res.
func (c *Caches) getTable(ctx context.Context, res factory.Resource, m metav1.Object) (*query.ServerTable, error) {
	client, err := c.client(res.GVR.GroupVersion())
	if err != nil {
		return nil, err
	}
	body, err := client.Get().Resource(res.GVR.Resource).NamespaceIfScoped(m.GetNamespace(), res.Namespaced).Name(m.GetName()).
		Param("includeObject", string(metav1.IncludeMetadata)).SetHeader("Accept", tableAccept).DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	t, _, err := decodeTable(body)
	return t, err
}

// errNotTable is the answer of a server that sends no tables (an
// aggregated API server may not).
var errNotTable = errors.New("the server sent no Table")

// decodeTable decodes a metav1.Table whose rows carry their objects'
// metadata, its cells as kubectl decodes them (whole numbers as int64,
// others as float64), and returns it with its continue token.
func decodeTable(body []byte) (*query.ServerTable, string, error) {
	var head struct {
		Kind     string                         `json:"kind"`
		Columns  []metav1.TableColumnDefinition `json:"columnDefinitions"`
		Metadata metav1.ListMeta                `json:"metadata"`
		Rows     []struct {
			Object struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			} `json:"object"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return nil, "", err
	}
	if head.Kind != "Table" {
		return nil, "", fmt.Errorf("%w: a %q", errNotTable, head.Kind)
	}
	var cells struct {
		Rows []struct {
			Cells []any `json:"cells"`
		} `json:"rows"`
	}
	if err := utiljson.Unmarshal(body, &cells); err != nil {
		return nil, "", err
	}
	t := &query.ServerTable{Columns: head.Columns, Rows: make(map[types.NamespacedName]query.ServerRow, len(head.Rows))}
	for i, row := range head.Rows {
		m := row.Object.Metadata
		t.Rows[types.NamespacedName{Namespace: m.Namespace, Name: m.Name}] = query.ServerRow{UID: m.UID, ResourceVersion: m.ResourceVersion, Cells: cells.Rows[i].Cells, Position: i}
	}
	return t, head.Metadata.Continue, nil
}

// serverOrder returns r in the order of the server's table t, as kubectl
// get prints it, unless the request orders the objects (--sort-by, or
// the names given).
func (p *Plan) serverOrder(c *Caches, res factory.Resource, r *query.Result, t *query.ServerTable) *query.Result {
	if t == nil || p.req.SortBy != "" || len(c.named[res.GVR]) > 0 {
		return r
	}
	return query.ServerOrder(r, t)
}
