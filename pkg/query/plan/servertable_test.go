package plan

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-informer/kubectl-informer/pkg/query"
)

// TestMergeTablesKeepsPlaces checks that rows read again keep their
// places in the server's order and that new rows come after the others.
func TestMergeTablesKeepsPlaces(t *testing.T) {
	cols := []metav1.TableColumnDefinition{{Name: "Name"}, {Name: "Age"}}
	key := func(name string) types.NamespacedName { return types.NamespacedName{Name: name} }
	listed := &query.ServerTable{Columns: cols, Rows: map[types.NamespacedName]query.ServerRow{
		key("b"): {UID: "ub", ResourceVersion: "1", Position: 0},
		key("a"): {UID: "ua", ResourceVersion: "1", Position: 1},
	}}
	read := &query.ServerTable{Columns: cols, Rows: map[types.NamespacedName]query.ServerRow{
		key("a"): {UID: "ua", ResourceVersion: "2", Position: 0},
	}}
	created := &query.ServerTable{Columns: cols, Rows: map[types.NamespacedName]query.ServerRow{
		key("c"): {UID: "uc", ResourceVersion: "3", Position: 0},
	}}
	got := mergeTables(mergeTables(listed, read), created)
	want := map[string]query.ServerRow{
		"b": {UID: "ub", ResourceVersion: "1", Position: 0},
		"a": {UID: "ua", ResourceVersion: "2", Position: 1},
		"c": {UID: "uc", ResourceVersion: "3", Position: 2},
	}
	if len(got.Rows) != len(want) {
		t.Fatalf("got %d rows, want %d: %v", len(got.Rows), len(want), got.Rows)
	}
	for name, w := range want {
		g := got.Rows[key(name)]
		if g.UID != w.UID || g.ResourceVersion != w.ResourceVersion || g.Position != w.Position {
			t.Errorf("row %s: got %+v, want %+v", name, g, w)
		}
	}
	if len(listed.Rows) != 2 || listed.Rows[key("a")].ResourceVersion != "1" {
		t.Errorf("the listed table was changed: %v", listed.Rows)
	}
	other := &query.ServerTable{Columns: cols[:1], Rows: map[types.NamespacedName]query.ServerRow{key("d"): {}}}
	if merged := mergeTables(listed, other); merged != listed {
		t.Errorf("rows of other columns were merged: %v", merged.Rows)
	}
}

// TestMissingRows checks which objects need their rows read: those
// without one, and those whose row is of another object or version.
func TestMissingRows(t *testing.T) {
	obj := func(name, uid, rv string) query.Item {
		return query.Item{Object: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid), ResourceVersion: rv}}}
	}
	table := &query.ServerTable{Rows: map[types.NamespacedName]query.ServerRow{
		{Name: "same"}:     {UID: "u1", ResourceVersion: "1"},
		{Name: "changed"}:  {UID: "u2", ResourceVersion: "1"},
		{Name: "replaced"}: {UID: "u3", ResourceVersion: "1"},
	}}
	items := []query.Item{obj("same", "u1", "1"), obj("changed", "u2", "2"), obj("replaced", "u4", "1"), obj("new", "u5", "1")}
	var got []string
	for _, m := range missingRows(table, items) {
		got = append(got, m.GetName())
	}
	if want := []string{"changed", "replaced", "new"}; !slices.Equal(got, want) {
		t.Errorf("missing rows %v, want %v", got, want)
	}
	if n := len(missingRows(nil, items)); n != len(items) {
		t.Errorf("without a table, %d rows are missing, want %d", n, len(items))
	}
}
