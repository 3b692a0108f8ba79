package plan

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	fakediscovery "k8s.io/client-go/discovery/fake"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/internal/fixture"
)

// TestSyncBoundsResolution checks that a plan filling its caches tells
// Conn.Bound the sync deadline before it resolves anything, and releases it
// once when it is done, here because resolution failed.
func TestSyncBoundsResolution(t *testing.T) {
	boom := errors.New("discovery failed")
	const timeout = 5 * time.Second
	check := func(t *testing.T, rec *fixture.BoundRecorder, start, end time.Time, err error) {
		t.Helper()
		if !errors.Is(err, boom) {
			t.Errorf("error %v, want the resolver's", err)
		}
		if rec.Calls != 1 || rec.Released != 1 {
			t.Fatalf("Bound called %d times and released %d times, want 1 and 1", rec.Calls, rec.Released)
		}
		d, ok := rec.Ctx.Deadline()
		if !ok || d.Before(start.Add(timeout)) || d.After(end.Add(timeout)) || rec.Limit != timeout {
			t.Errorf("the bound's deadline is %v (set: %v, limit %s), want %s after the start", d, ok, rec.Limit, timeout)
		}
		if rec.Ctx.Err() == nil {
			t.Error("the bound's context still runs after the sync ended")
		}
	}
	conn := func(rec *fixture.BoundRecorder) Conn {
		return Conn{Resolver: factory.NewResolver(fixture.FailingMapper{Err: boom}, fixture.NoSchemas{FakeDiscovery: &fakediscovery.FakeDiscovery{}}), Bound: rec.Bound}
	}

	t.Run("query", func(t *testing.T) {
		p, err := Compile(fixture.Env(t), Request{Resources: []string{"pods"}, SyncTimeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		rec := &fixture.BoundRecorder{}
		start := time.Now()
		err = p.Execute(context.Background(), conn(rec), io.Discard, io.Discard)
		check(t, rec, start, time.Now(), err)
	})
	t.Run("no bound", func(t *testing.T) {
		p, err := Compile(fixture.Env(t), Request{Resources: []string{"pods"}, SyncTimeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		c := Conn{Resolver: factory.NewResolver(fixture.FailingMapper{Err: boom}, fixture.NoSchemas{FakeDiscovery: &fakediscovery.FakeDiscovery{}})}
		if err := p.Execute(context.Background(), c, io.Discard, io.Discard); !errors.Is(err, boom) {
			t.Errorf("error %v, want the resolver's", err)
		}
	})
}
