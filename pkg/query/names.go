package query

// Part is a part of a query that messages name: its filter, its sort, …
type Part int

// The parts of a query.
const (
	PartWhere Part = iota
	PartSortBy
	PartGroupBy
	PartColumns
	PartCount
	PartLimit
	// PartIndex defines an index; PartOutput chooses the output format.
	PartIndex
	PartOutput
	// PartAggregate is an aggregate per group.
	PartAggregate
	numParts
)

// Names are the words messages use for the parts of a query, indexed by
// Part. The zero value names them by the flags of the command line.
type Names [numParts]string

// FlagNames name the parts of a query by the flags that set them.
var FlagNames = Names{"--where", "--sort-by", "--group-by", "--columns", "--count", "--limit", "--index", "-o", "--aggregate"}

// SessionNames name the parts of a query as an interactive session sets
// them: the filter typed, and the commands.
var SessionNames = Names{"filter", ":sort", ":group", ":columns", ":count", ":limit", ":index", ":o", ":aggregate"}

// Of returns the name of part p.
func (n Names) Of(p Part) string {
	if n[p] == "" {
		return FlagNames[p]
	}
	return n[p]
}
