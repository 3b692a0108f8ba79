package watch

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	fakediscovery "k8s.io/client-go/discovery/fake"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/internal/fixture"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
)

// TestRunBoundsResolution checks that a watch tells Conn.Bound the sync
// deadline before it resolves anything, and releases it once when it is
// done, here because resolution failed, or because it was interrupted.
func TestRunBoundsResolution(t *testing.T) {
	boom := errors.New("discovery failed")
	const timeout = 5 * time.Second
	conn := func(rec *fixture.BoundRecorder) plan.Conn {
		return plan.Conn{Resolver: factory.NewResolver(fixture.FailingMapper{Err: boom}, fixture.NoSchemas{FakeDiscovery: &fakediscovery.FakeDiscovery{}}), Bound: rec.Bound}
	}
	t.Run("watch", func(t *testing.T) {
		w, err := Compile(fixture.Env(t), Request{Resources: []string{"pods"}, SyncTimeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		rec := &fixture.BoundRecorder{}
		start := time.Now()
		err = w.Run(context.Background(), conn(rec), io.Discard, io.Discard)
		rec.Check(t, start, time.Now(), timeout, err, boom)
	})
	t.Run("watch interrupted", func(t *testing.T) {
		// Ctrl-C ends a watch without an error whenever it comes, also
		// while the resources are being resolved.
		w, err := Compile(fixture.Env(t), Request{Resources: []string{"pods"}, SyncTimeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		rec := &fixture.BoundRecorder{}
		if err := w.Run(ctx, conn(rec), io.Discard, io.Discard); err != nil {
			t.Errorf("Run after cancellation = %v, want nil", err)
		}
		if rec.Released != 1 {
			t.Errorf("released %d times, want 1", rec.Released)
		}
	})
}
