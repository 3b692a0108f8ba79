package queryserver

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/kubectl-informer/kubectl-informer/pkg/query"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
)

// QueryPath is the path of the query endpoint.
const QueryPath = "/v1/query"

// StderrTrailer is the HTTP trailer that carries, base64-encoded, what the
// command line prints on standard error after the answer's body; ErrorTrailer
// an error that occurred after the body started; PartialTrailer, for an
// answer over several clusters some of which did not answer, a JSON
// [Partial], base64-encoded.
const (
	StderrTrailer  = "Kubectl-Informer-Stderr"
	ErrorTrailer   = "Kubectl-Informer-Error"
	PartialTrailer = "Kubectl-Informer-Partial"
)

// Partial says which clusters of a query over several did not answer, and
// why: the answer is the others'.
type Partial struct {
	// Clusters is the number of clusters the query read.
	Clusters int             `json:"clusters"`
	Failed   []FailedCluster `json:"failed"`
}

// FailedCluster is a cluster that did not answer, and why.
type FailedCluster struct {
	Cluster string `json:"cluster"`
	Error   string `json:"error"`
}

// encodePartial returns the PartialTrailer of p.
func encodePartial(p *plan.PartialError) string {
	v := Partial{Clusters: p.Clusters}
	for _, f := range p.Failed {
		v.Failed = append(v.Failed, FailedCluster{Cluster: f.Cluster, Error: f.Err.Error()})
	}
	b, _ := json.Marshal(v) // strings and ints
	return base64.StdEncoding.EncodeToString(b)
}

// decodePartial returns the *plan.PartialError of a PartialTrailer.
func decodePartial(s string) (*plan.PartialError, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	var v Partial
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	p := &plan.PartialError{Clusters: v.Clusters}
	for _, f := range v.Failed {
		p.Failed = append(p.Failed, plan.MemberError{Cluster: f.Cluster, Err: errors.New(f.Error)})
	}
	return p, nil
}

// Query is a query as the command line states it: the body of POST
// /v1/query.
type Query struct {
	// Resources are the resource arguments as typed ("pods", "po,nodes").
	Resources []string `json:"resources"`
	// Namespace scopes namespaced resources; "" means all namespaces.
	Namespace     string `json:"namespace,omitempty"`
	LabelSelector string `json:"labelSelector,omitempty"`
	FieldSelector string `json:"fieldSelector,omitempty"`
	// Indexes and ResourceIndexes are the caller's index definitions
	// (--index NAME=CEL; its config file and --index RESOURCE:NAME=CEL):
	// --by on an index the server lacks evaluates the definition instead.
	Indexes         []plan.NamedExpr            `json:"indexes,omitempty"`
	ResourceIndexes map[string][]plan.NamedExpr `json:"resourceIndexes,omitempty"`
	By              []Selector                  `json:"by,omitempty"`
	Where           string                      `json:"where,omitempty"`
	SortBy          string                      `json:"sortBy,omitempty"`
	GroupBy         string                      `json:"groupBy,omitempty"`
	// GroupByKeys are the keys of aggregates after GroupBy; Aggregates
	// are --aggregate NAME=FUNC(EXPR) (see plan.Request).
	GroupByKeys []string         `json:"groupByKeys,omitempty"`
	Aggregates  []plan.NamedExpr `json:"aggregates,omitempty"`
	Columns     []plan.NamedExpr `json:"columns,omitempty"`
	Count       bool             `json:"count,omitempty"`
	Limit       int              `json:"limit,omitempty"`
	// Output is the -o value; "" prints a table.
	Output string `json:"output,omitempty"`
	Print  Print  `json:"print,omitzero"`

	// Reverse is --reverse: the answer in descending order.
	Reverse bool `json:"reverse,omitempty"`

	// Clusters names the server's clusters to answer from, by their
	// context names on the server (--server-clusters); AllClusters asks
	// all of them (--server-all-clusters). Neither: the server's home
	// cluster. Over several, or all, the answers are merged with a
	// CLUSTER column, as --context a,b merges local answers.
	Clusters    []string `json:"clusters,omitempty"`
	AllClusters bool     `json:"allClusters,omitempty"`
}

// Selector is --by INDEX=VALUE.
type Selector struct {
	Index string `json:"index"`
	Value string `json:"value"`
}

// Print holds the printing flags of the command line.
type Print struct {
	NoHeaders          bool     `json:"noHeaders,omitempty"`
	ShowLabels         bool     `json:"showLabels,omitempty"`
	ShowKind           bool     `json:"showKind,omitempty"`
	LabelColumns       []string `json:"labelColumns,omitempty"`
	IndexColumns       []string `json:"indexColumns,omitempty"`
	Template           string   `json:"template,omitempty"`
	StrictTemplateKeys bool     `json:"strictTemplateKeys,omitempty"`
}

// FromRequest returns the Query of a request of the command line.
func FromRequest(r plan.Request) Query {
	q := Query{
		Resources: r.Resources, Namespace: r.Namespace,
		LabelSelector: r.LabelSelector, FieldSelector: r.FieldSelector,
		Indexes: r.Indexes, ResourceIndexes: mergeIndexes(r.ResourceIndexes, r.ResourceFlagIndexes),
		Where: r.Where, SortBy: r.SortBy, GroupBy: r.GroupBy, Columns: r.Columns,
		GroupByKeys: r.GroupByKeys, Aggregates: r.Aggregates,
		Count: r.Count, Limit: r.Limit, Output: r.Output, Reverse: r.Reverse,
		Print: Print{
			NoHeaders: r.Print.NoHeaders, ShowLabels: r.Print.ShowLabels, ShowKind: r.Print.ShowKind,
			LabelColumns: r.Print.LabelColumns, IndexColumns: r.Print.IndexNames,
			Template: r.Print.Template, StrictTemplateKeys: r.Print.StrictTemplateKeys,
		},
	}
	for _, s := range r.By {
		q.By = append(q.By, Selector{Index: s.Index, Value: s.Value})
	}
	return q
}

// mergeIndexes returns the indexes of config and those of flags, by
// resource as written; an index of flags wins over one of config with the
// same resource and name.
func mergeIndexes(config, flags map[string][]plan.NamedExpr) map[string][]plan.NamedExpr {
	if len(flags) == 0 {
		return config
	}
	out := map[string][]plan.NamedExpr{}
	for res, ixs := range config {
		for _, ix := range ixs {
			if !slices.ContainsFunc(flags[res], func(f plan.NamedExpr) bool { return f.Name == ix.Name }) {
				out[res] = append(out[res], ix)
			}
		}
	}
	for res, ixs := range flags {
		out[res] = append(out[res], ixs...)
	}
	return out
}

// Request returns the request of the command line that q states.
func (q Query) Request() plan.Request {
	r := plan.Request{
		Resources: q.Resources, Namespace: q.Namespace,
		LabelSelector: q.LabelSelector, FieldSelector: q.FieldSelector,
		Indexes: q.Indexes, ResourceIndexes: q.ResourceIndexes,
		Where: q.Where, SortBy: q.SortBy, GroupBy: q.GroupBy, Columns: q.Columns,
		GroupByKeys: q.GroupByKeys, Aggregates: q.Aggregates,
		Count: q.Count, Limit: q.Limit, Output: q.Output, Reverse: q.Reverse,
		Print: query.PrintOptions{
			NoHeaders: q.Print.NoHeaders, ShowLabels: q.Print.ShowLabels, ShowKind: q.Print.ShowKind,
			LabelColumns: q.Print.LabelColumns, IndexNames: q.Print.IndexColumns,
			Template: q.Print.Template, StrictTemplateKeys: q.Print.StrictTemplateKeys,
		},
	}
	for _, s := range q.By {
		r.By = append(r.By, query.Selector{Index: s.Index, Value: s.Value})
	}
	return r
}

// DecodeQuery reads the body of POST /v1/query: a Query, with no field it
// does not know, that Validate accepts. It reads only r (whose length the
// caller bounds): no file, no state of the server or of a cluster, so it
// may run before the caller is known.
func DecodeQuery(r io.Reader) (Query, error) {
	var q Query
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil {
		return Query{}, fmt.Errorf("the body is not a query: %w", err)
	}
	if err := q.Validate(); err != nil {
		return Query{}, err
	}
	return q, nil
}

// Validate checks how q is to be printed, as a query server prints it
// (query.PrintOptions.ServerSide): an output format that reads a template
// file is refused, naming the format that takes the template's text, as
// are templates longer than query.MaxTemplateBytes and templates the
// printer cannot parse. The error is a *query.UsageError, the same
// whatever files the server's host holds.
func (q Query) Validate() error {
	_, err := query.NewPrinter(q.Output, query.PrintOptions{
		Template: q.Print.Template, NoHeaders: q.Print.NoHeaders, StrictTemplateKeys: q.Print.StrictTemplateKeys,
		ServerSide: true,
	})
	if err != nil {
		return &query.UsageError{Err: err}
	}
	return nil
}
