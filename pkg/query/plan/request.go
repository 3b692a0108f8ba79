package plan

import (
	"io"
	"regexp"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
)

// NamedExpr is a NAME=CEL pair of --index or --columns.
type NamedExpr struct {
	Name string `json:"name" yaml:"name"`
	Expr string `json:"expr" yaml:"expr"`
}

var columnStart = regexp.MustCompile(`^\s*[A-Za-z_][A-Za-z0-9_.-]*\s*=[^=]`)

// SplitColumns splits "NAME=CEL,NAME=CEL" at the commas that are outside
// parentheses, brackets, braces and string literals and are followed by
// another NAME=, so that expressions may contain commas.
func SplitColumns(s string) []string {
	var parts []string
	depth, start := 0, 0
	indexers.OutsideStrings(s, func(i int) bool {
		switch c := s[i]; {
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0 && columnStart.MatchString(s[i+1:]):
			parts = append(parts, s[start:i])
			start = i + 1
		}
		return true
	})
	return append(parts, s[start:])
}

// Request is a whole query as the command line states it.
type Request struct {
	// Resources are the resource arguments as typed ("pods", "po,nodes"),
	// read as kubectl get reads them: TYPE[,TYPE...] NAME... and
	// TYPE/NAME... name objects. A named object that does not exist is
	// reported by a *NotFoundError, after the others are printed.
	Resources []string
	// Namespace scopes namespaced resources; "" means all namespaces.
	Namespace string
	// LabelSelector and FieldSelector are sent to the server for the
	// queried resources (not for resources read by get() and byIndex()).
	LabelSelector, FieldSelector string
	// Indexes are registered on every queried resource, and on every
	// resource whose byIndex() calls name them. An index that byIndex()
	// names and --by does not is registered only where byIndex() reads.
	Indexes []NamedExpr
	// ResourceIndexes are indexes per resource (named as kubectl names it),
	// from the config file: registered when that resource is queried or
	// read by byIndex(). An index of Indexes with the same name wins.
	ResourceIndexes map[string][]NamedExpr
	// ConfigPath names the file ResourceIndexes came from, for messages.
	ConfigPath string
	// ConfigLine, when set, returns the line of ConfigPath where the
	// index name of resource is defined, for messages; 0 when unknown.
	ConfigLine func(resource, name string) int
	// ResourceFlagIndexes are indexes per resource (as written) given on
	// the command line, --index RESOURCE:NAME=CEL: registered as
	// ResourceIndexes are, over which they win. A resource among them
	// that is neither queried nor read by byIndex() is an error.
	ResourceFlagIndexes map[string][]NamedExpr
	// By answers from indexes (intersection).
	By []query.Selector
	// Where, SortBy and GroupBy are CEL expressions; "" means none. A
	// SortBy that is a negation as a whole, -X, sorts by X in descending
	// order, whatever its type. GroupBy implies Count, unless there are
	// Aggregates: it is then their first key (see GroupByKeys), and
	// SortBy names a key or an aggregate (-NAME: descending).
	Where, SortBy, GroupBy string
	// GroupByKeys are the keys of Aggregates after GroupBy, each
	// [NAME=]CEL; the name heads the key's column. Without Aggregates,
	// several keys count the objects per combination of their values,
	// as an aggregate count=count() does.
	GroupByKeys []string
	// Aggregates are NAME=FUNC(ARGS) computed per group of GroupBy (and
	// GroupByKeys), or over the whole answer without them; see
	// docs/aggregates.md.
	Aggregates []NamedExpr
	// Reverse reverses the order: descending with SortBy (ascending with
	// a SortBy of -X), else namespace/name descending.
	Reverse bool
	// Columns are extra table columns.
	Columns []NamedExpr
	// Count prints the number of matches (per GroupBy value).
	Count bool
	// Limit keeps at most Limit results; 0: all. Over several resources
	// it is a limit in all, applied to the answer they make together.
	Limit int
	// Output is the -o value.
	Output string
	// Print holds the remaining printing flags.
	Print query.PrintOptions
	// SyncTimeout bounds the wait for the caches. Default 2m.
	SyncTimeout time.Duration
	// Progress, when not nil, receives a progress line while caches fill.
	Progress io.Writer
	// WholeObjects caches whole objects even when the expressions and the
	// output need only metadata or a few fields: expressions written after
	// the caches filled (the interactive prompt) may read any field.
	// Default false: caches hold only what the plan reads.
	WholeObjects bool
	// Names are the words messages use for the parts of the query; the
	// zero value names them by their flags.
	Names query.Names
	// Remote: the request is answered by a query server, whose indexes By
	// may name without the request defining them.
	Remote bool
}
