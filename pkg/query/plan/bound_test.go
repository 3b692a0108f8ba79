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
		rec.Check(t, start, time.Now(), timeout, err, boom)
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
