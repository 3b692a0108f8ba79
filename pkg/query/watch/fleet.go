package watch

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
)

// Member is one cluster of a watch over several: its context's name, how
// to reach it, and the watch compiled for it (each cluster's get() and
// byIndex() read its own caches).
type Member struct {
	Name    string
	Conn    plan.Conn
	Watcher *Watcher
}

// RunFleet watches every member at once until ctx ends, printing each
// cluster's events on out as Run prints one cluster's, with the cluster's
// name in each line and NDJSON object; their warnings go to errOut, each
// naming its cluster. A cluster whose watch fails (unreachable, forbidden,
// not synced in time) does not stop the others: a warning names it and
// the cause, as explain words it, and RunFleet returns a
// *plan.PartialError once ctx ends. When every cluster's watch fails, it
// returns as soon as the last one does, with an error naming each.
func RunFleet(ctx context.Context, members []Member, out, errOut io.Writer, explain func(cluster string, err error) error) error {
	if explain == nil {
		explain = func(_ string, err error) error { return err }
	}
	// Each event is one write: whole lines, whatever the cluster.
	lines := plan.LockedWriter(out)
	warnings := plan.LockedWriter(errOut)
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		w := m.Watcher.InCluster(m.Name)
		wg.Go(func() {
			if err := w.Run(ctx, m.Conn, lines, plan.ClusterWarnings(warnings, m.Name)); err != nil {
				errs[i] = explain(m.Name, err)
				_, _ = fmt.Fprintf(warnings, "warning: cluster %q: %v\n", m.Name, errs[i])
			}
		})
	}
	wg.Wait()
	var failed []plan.MemberError
	for i, err := range errs {
		if err != nil {
			failed = append(failed, plan.MemberError{Cluster: members[i].Name, Err: err})
		}
	}
	switch {
	case len(failed) == len(members) && len(members) > 0:
		return plan.NoAnswer(failed)
	case len(failed) > 0:
		return &plan.PartialError{Failed: failed, Clusters: len(members)}
	}
	return nil
}
