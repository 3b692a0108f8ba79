// Package queryserver answers queries over HTTPS from the warm caches of
// one long-running process (kubectl informer serve), for many users, with
// the authentication and authorization of the Kubernetes API server they
// query: each request's bearer token is validated with a TokenReview (its
// client certificate against the cluster's client CA), and what it may read
// is decided with SubjectAccessReviews, both through k8s.io/apiserver's
// delegating authenticator and authorizer, which cache their decisions
// briefly. A request that impersonates (the Impersonate-User,
// Impersonate-Group, Impersonate-Uid and Impersonate-Extra-* headers that
// kubectl's --as, --as-group and --as-uid send) is answered as the user it
// impersonates, once SubjectAccessReviews have allowed its caller to
// "impersonate" each part of it, as the API server decides; else 403.
//
// The protocol is one endpoint, POST /v1/query, whose body is a [Query] (a
// query as the command line states it) and whose answer is the text the
// command line would print (a v1 List for -o json), streamed; what the
// command line prints on standard error (warnings, "No resources found")
// follows in the trailer [StderrTrailer]. A request refused before its
// answer starts gets a JSON metav1.Status: 400 for a mistake in the query,
// 401 when the caller is not authenticated, 403 when it may not list what
// the query reads, 429 over a per-user limit, 503 until the caches have
// synced.
package queryserver

import (
	"slices"

	"github.com/kubectl-informer/kubectl-informer/pkg/query"
)

// QueryPath is the path of the query endpoint.
const QueryPath = "/v1/query"

// StderrTrailer is the HTTP trailer that carries, base64-encoded, what the
// command line prints on standard error after the answer's body; ErrorTrailer
// an error that occurred after the body started.
const (
	StderrTrailer = "Kubectl-Informer-Stderr"
	ErrorTrailer  = "Kubectl-Informer-Error"
)

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
	Indexes         []query.NamedExpr            `json:"indexes,omitempty"`
	ResourceIndexes map[string][]query.NamedExpr `json:"resourceIndexes,omitempty"`
	By              []Selector                   `json:"by,omitempty"`
	Where           string                       `json:"where,omitempty"`
	SortBy          string                       `json:"sortBy,omitempty"`
	GroupBy         string                       `json:"groupBy,omitempty"`
	Columns         []query.NamedExpr            `json:"columns,omitempty"`
	Count           bool                         `json:"count,omitempty"`
	Limit           int                          `json:"limit,omitempty"`
	// Output is the -o value; "" prints a table.
	Output string `json:"output,omitempty"`
	Print  Print  `json:"print,omitzero"`

	// Reverse is --reverse: the answer in descending order.
	Reverse bool `json:"reverse,omitempty"`
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
	Template           string   `json:"template,omitempty"`
	StrictTemplateKeys bool     `json:"strictTemplateKeys,omitempty"`
}

// FromRequest returns the Query of a request of the command line.
func FromRequest(r query.Request) Query {
	q := Query{
		Resources: r.Resources, Namespace: r.Namespace,
		LabelSelector: r.LabelSelector, FieldSelector: r.FieldSelector,
		Indexes: r.Indexes, ResourceIndexes: mergeIndexes(r.ResourceIndexes, r.ResourceFlagIndexes),
		Where: r.Where, SortBy: r.SortBy, GroupBy: r.GroupBy, Columns: r.Columns,
		Count: r.Count, Limit: r.Limit, Output: r.Output, Reverse: r.Reverse,
		Print: Print{
			NoHeaders: r.Print.NoHeaders, ShowLabels: r.Print.ShowLabels, ShowKind: r.Print.ShowKind,
			LabelColumns: r.Print.LabelColumns, Template: r.Print.Template, StrictTemplateKeys: r.Print.StrictTemplateKeys,
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
func mergeIndexes(config, flags map[string][]query.NamedExpr) map[string][]query.NamedExpr {
	if len(flags) == 0 {
		return config
	}
	out := map[string][]query.NamedExpr{}
	for res, ixs := range config {
		for _, ix := range ixs {
			if !slices.ContainsFunc(flags[res], func(f query.NamedExpr) bool { return f.Name == ix.Name }) {
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
func (q Query) Request() query.Request {
	r := query.Request{
		Resources: q.Resources, Namespace: q.Namespace,
		LabelSelector: q.LabelSelector, FieldSelector: q.FieldSelector,
		Indexes: q.Indexes, ResourceIndexes: q.ResourceIndexes,
		Where: q.Where, SortBy: q.SortBy, GroupBy: q.GroupBy, Columns: q.Columns,
		Count: q.Count, Limit: q.Limit, Output: q.Output, Reverse: q.Reverse,
		Print: query.PrintOptions{
			NoHeaders: q.Print.NoHeaders, ShowLabels: q.Print.ShowLabels, ShowKind: q.Print.ShowKind,
			LabelColumns: q.Print.LabelColumns, Template: q.Print.Template, StrictTemplateKeys: q.Print.StrictTemplateKeys,
		},
	}
	for _, s := range q.By {
		r.By = append(r.By, query.Selector{Index: s.Index, Value: s.Value})
	}
	return r
}
