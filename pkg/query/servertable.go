package query

import (
	"cmp"
	"math"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// ServerTable is the table the API server prints for the objects of a
// kind the plugin has no columns of its own for (see HasKindColumns), as
// kubectl get receives it: its column definitions and the cells of each
// object, in the columns' order.
type ServerTable struct {
	// Columns are the server's column definitions; those of priority 1
	// are printed only by -o wide.
	Columns []metav1.TableColumnDefinition
	// Rows are the cells of each object, by its namespace and name.
	Rows map[types.NamespacedName]ServerRow
}

// ServerRow is the row of one object in a ServerTable.
type ServerRow struct {
	// UID and ResourceVersion are those of the object the server printed;
	// a row printed for another object of the same name is not used.
	UID             types.UID
	ResourceVersion string
	Cells           []any
	// Position is the row's place in the server's list: kubectl get
	// prints the rows in this order, which for some kinds is not the
	// objects' (flow schemas by their matching precedence).
	Position int
}

// ServerOrder returns r with its items in the order of t's rows (the
// objects t has no row of last, in their order); r itself when t is nil
// or the order is the same.
func ServerOrder(r *Result, t *ServerTable) *Result {
	if t == nil {
		return r
	}
	pos := func(item Item) int {
		if m, ok := item.Object.(metav1.Object); ok {
			if row, ok := t.Rows[types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}]; ok {
				return row.Position
			}
		}
		return math.MaxInt
	}
	if slices.IsSortedFunc(r.Items, func(a, b Item) int { return cmp.Compare(pos(a), pos(b)) }) {
		return r
	}
	out := *r
	out.Items = slices.Clone(r.Items)
	slices.SortStableFunc(out.Items, func(a, b Item) int { return cmp.Compare(pos(a), pos(b)) })
	return &out
}

// HasKindColumns reports whether tables of gk are computed locally: a
// built-in kind whose columns the plugin computes as the API server does,
// or one the server has no printer for (NAME and CREATED AT). Tables of
// the other kinds, except custom resources whose CustomResourceDefinition
// gives the columns (PrintOptions.Columns), take the server's
// (PrintOptions.Server).
func HasKindColumns(gk schema.GroupKind) bool {
	_, ok := builtinColumns[gk]
	return ok || createdAtKinds.Has(gk)
}

// creationDoc describes the API server's AGE columns: the age of the
// object's creation timestamp.
var creationDoc = metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]

// serverCells returns the cells of obj in t: the server's row of the
// object, its AGE computed as of now (a row is printed again while its
// object is unchanged), or, when t has none for this very object (it was
// deleted before the server was asked), its name and age in the columns
// named Name and Age and empty cells elsewhere.
func serverCells(t *ServerTable, obj runtime.Object, now time.Time) ([]any, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nameAndAge(obj, now)
	}
	row, ok := t.Rows[types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}]
	found := ok && row.UID == m.GetUID() && len(row.Cells) == len(t.Columns)
	cells := make([]any, len(t.Columns))
	if found {
		copy(cells, row.Cells)
	}
	for i, c := range t.Columns {
		switch {
		case c.Name == ageColumn.Name && c.Description == creationDoc && (found || c.Type == "string"):
			cells[i] = age(m.GetCreationTimestamp(), now)
		case c.Name == nameColumn.Name && !found:
			cells[i] = m.GetName()
		}
	}
	return cells, nil
}
