package indexers

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// NamespaceIndex is the name of the built-in index of objects by namespace,
// the one client-go's listers use.
const NamespaceIndex = cache.NamespaceIndex

// NamespaceIndexFunc indexes an object by its namespace
// (cache.MetaNamespaceIndexFunc), except that an object without metadata is
// not indexed instead of making the store panic.
func NamespaceIndexFunc(obj any) ([]string, error) {
	values, err := cache.MetaNamespaceIndexFunc(obj)
	if err != nil {
		return nil, nil
	}
	return values, nil
}

// maxErrorMessages bounds the distinct error messages kept per index; the
// failures with other messages are only counted.
const maxErrorMessages = 10

// IndexFunc returns a client-go index function that indexes each object
// under the values p computes for it (see [Program.IndexValues]). p should
// be compiled with [KindIndex]. name is the name of the index, for stats.
//
// The function never returns an error (a client-go store panics on one) and
// never panics: an object whose evaluation fails is not indexed, and the
// failure is counted in stats under name. stats may be nil. An evaluation
// stopped by p's [Budget] (the command is ending) leaves the object
// unindexed without counting a failure.
func IndexFunc(name string, p *Program, stats *Stats) cache.IndexFunc {
	st := stats.index(name)
	return func(obj any) (values []string, _ error) {
		defer func() {
			if r := recover(); r != nil {
				values = nil
				st.fail(fmt.Sprintf("internal error: %v", r), obj)
			}
		}()
		st.evaluated()
		values, err := p.indexValues(obj)
		if err != nil {
			if IsBudgetStop(err) {
				return nil, nil
			}
			st.fail(err.Error(), obj)
			return nil, nil
		}
		return values, nil
	}
}

// Indexers returns the client-go indexers for a resource: [NamespaceIndex]
// and one index per entry of indexes, built with [IndexFunc]. An empty name,
// or the name of the built-in index, is an error. stats may be nil.
func Indexers(indexes map[string]*Program, stats *Stats) (cache.Indexers, error) {
	result := cache.Indexers{NamespaceIndex: NamespaceIndexFunc}
	for name, p := range indexes {
		switch name {
		case "":
			return nil, fmt.Errorf("index %q: an index needs a name", name)
		case NamespaceIndex:
			return nil, fmt.Errorf("index %q: the name is taken by the built-in index of objects by namespace; choose another", name)
		}
		result[name] = IndexFunc(name, p, stats)
	}
	return result, nil
}

// Stats counts the evaluations of index functions and their failures, per
// index. The zero value is ready to use; a Stats is safe for concurrent use.
type Stats struct {
	mu sync.Mutex
	// indexes holds the counters of each index by name. Guarded by mu; the
	// counters guard themselves.
	indexes map[string]*indexStats
}

// IndexStat is a snapshot of the counters of one index.
type IndexStat struct {
	// Index is the name of the index.
	Index string
	// Evaluated counts evaluations of the index function. After the initial
	// list each object has been evaluated once; every update or deletion
	// evaluates the object again.
	Evaluated uint64
	// Failed counts the evaluations that failed; those objects got no
	// index value.
	Failed uint64
	// Errors lists the distinct error messages with their counts, most
	// frequent first. At most 10 messages are kept per index; Failed also
	// counts the failures whose message was not kept.
	Errors []ErrorCount
}

// ErrorCount is an error message and the number of evaluations that failed
// with it.
type ErrorCount struct {
	Message string
	Count   uint64
	// Object is the namespace/name (or name) of an object that failed
	// with Message: of those, the first in that order.
	Object string
}

// index returns the counters of the named index, creating them if needed.
// A nil Stats returns nil counters, which count nothing.
func (s *Stats) index(name string) *indexStats {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.indexes == nil {
		s.indexes = map[string]*indexStats{}
	}
	st, ok := s.indexes[name]
	if !ok {
		st = &indexStats{errors: map[string]*failedWith{}}
		s.indexes[name] = st
	}
	return st
}

// Snapshot returns the counters of every index that has an index function,
// sorted by index name. A nil Stats has none.
func (s *Stats) Snapshot() []IndexStat {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	names := make([]string, 0, len(s.indexes))
	counters := make(map[string]*indexStats, len(s.indexes))
	for name, st := range s.indexes {
		names = append(names, name)
		counters[name] = st
	}
	s.mu.Unlock()
	sort.Strings(names)
	snap := make([]IndexStat, 0, len(names))
	for _, name := range names {
		snap = append(snap, counters[name].snapshot(name))
	}
	return snap
}

// Summary returns one line per index with failures, sorted by index name,
// such as
//
//	index "byNode": 3 of 10000 objects failed: default/web-0: no such key: spec
//
// or nil when no evaluation failed.
func (s *Stats) Summary() []string {
	var lines []string
	for _, st := range s.Snapshot() {
		if st.Failed == 0 {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "index %q: %d of %d objects failed: ", st.Index, st.Failed, st.Evaluated)
		if len(st.Errors) == 1 && st.Errors[0].Count == st.Failed {
			b.WriteString(withObject(st.Errors[0]))
			lines = append(lines, b.String())
			continue
		}
		var kept uint64
		for i, e := range st.Errors {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s (%d)", withObject(e), e.Count)
			kept += e.Count
		}
		if other := st.Failed - kept; other > 0 {
			if len(st.Errors) > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "other errors (%d)", other)
		}
		lines = append(lines, b.String())
	}
	return lines
}

// withObject is e's message after the object that failed with it, as
// the warnings of --where name it.
func withObject(e ErrorCount) string {
	if e.Object == "" {
		return e.Message
	}
	return e.Object + ": " + e.Message
}

// indexStats are the counters of one index. A nil *indexStats counts
// nothing.
type indexStats struct {
	evaluations atomic.Uint64
	failures    atomic.Uint64

	mu sync.Mutex
	// errors counts failures by message, for at most maxErrorMessages
	// messages, with the first failing object in namespace/name order.
	// Guarded by mu.
	errors map[string]*failedWith
}

func (st *indexStats) evaluated() {
	if st != nil {
		st.evaluations.Add(1)
	}
}

// failedWith counts the failures with one message.
type failedWith struct {
	count  uint64
	object string
}

func (st *indexStats) fail(msg string, obj any) {
	if st == nil {
		return
	}
	st.failures.Add(1)
	key := ObjectName(obj)
	st.mu.Lock()
	defer st.mu.Unlock()
	f, ok := st.errors[msg]
	switch {
	case ok:
		f.count++
		if key < f.object {
			f.object = key
		}
	case len(st.errors) < maxErrorMessages:
		st.errors[msg] = &failedWith{count: 1, object: key}
	}
}

// ObjectName names an object in messages: namespace/name, or name; a
// tombstone (cache.DeletedFinalStateUnknown) by its key.
func ObjectName(obj any) string {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return d.Key
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("<%T>", obj)
	}
	if ns := m.GetNamespace(); ns != "" {
		return ns + "/" + m.GetName()
	}
	return m.GetName()
}

func (st *indexStats) snapshot(name string) IndexStat {
	st.mu.Lock()
	errs := make([]ErrorCount, 0, len(st.errors))
	for msg, f := range st.errors {
		errs = append(errs, ErrorCount{Message: msg, Count: f.count, Object: f.object})
	}
	// Read the counters under the lock too, so that Failed is never below
	// the sum of Errors.
	snap := IndexStat{Index: name, Evaluated: st.evaluations.Load(), Failed: st.failures.Load(), Errors: errs}
	st.mu.Unlock()
	sort.Slice(errs, func(i, j int) bool {
		if errs[i].Count != errs[j].Count {
			return errs[i].Count > errs[j].Count
		}
		return errs[i].Message < errs[j].Message
	})
	return snap
}

// IndexFuncs returns the index functions of the programs ixs, by index
// name, as IndexFunc makes each; stats counts their failures.
func IndexFuncs(ixs map[string]*Program, stats *Stats) cache.Indexers {
	out := make(cache.Indexers, len(ixs))
	for name, prog := range ixs {
		out[name] = IndexFunc(name, prog, stats)
	}
	return out
}
