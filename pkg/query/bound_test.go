package query

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
)

// failingMapper fails every lookup as a REST mapper whose discovery
// requests failed does.
type failingMapper struct {
	meta.RESTMapper
	err error
}

func (m failingMapper) KindFor(schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return schema.GroupVersionKind{}, m.err
}

// boundRecorder is a Conn.Bound that records its calls.
type boundRecorder struct {
	ctx      context.Context
	limit    time.Duration
	calls    int
	released int
}

func (b *boundRecorder) bound(ctx context.Context, limit time.Duration) func() {
	b.ctx, b.limit = ctx, limit
	b.calls++
	return func() { b.released++ }
}

// TestSyncBoundsResolution checks that a plan filling its caches and a
// watch tell Conn.Bound the sync deadline before they resolve anything,
// and release it once when they are done, here because resolution failed.
func TestSyncBoundsResolution(t *testing.T) {
	boom := errors.New("discovery failed")
	const timeout = 5 * time.Second
	check := func(t *testing.T, rec *boundRecorder, start, end time.Time, err error) {
		t.Helper()
		if !errors.Is(err, boom) {
			t.Errorf("error %v, want the resolver's", err)
		}
		if rec.calls != 1 || rec.released != 1 {
			t.Fatalf("Bound called %d times and released %d times, want 1 and 1", rec.calls, rec.released)
		}
		d, ok := rec.ctx.Deadline()
		if !ok || d.Before(start.Add(timeout)) || d.After(end.Add(timeout)) || rec.limit != timeout {
			t.Errorf("the bound's deadline is %v (set: %v, limit %s), want %s after the start", d, ok, rec.limit, timeout)
		}
		if rec.ctx.Err() == nil {
			t.Error("the bound's context still runs after the sync ended")
		}
	}
	conn := func(rec *boundRecorder) Conn {
		return Conn{Resolver: factory.NewResolver(failingMapper{err: boom}, noSchemas{&fakediscovery.FakeDiscovery{}}), Bound: rec.bound}
	}

	t.Run("query", func(t *testing.T) {
		p, err := Compile(testEnv(t), Request{Resources: []string{"pods"}, SyncTimeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		rec := &boundRecorder{}
		start := time.Now()
		err = p.Execute(context.Background(), conn(rec), io.Discard, io.Discard)
		check(t, rec, start, time.Now(), err)
	})
	t.Run("watch", func(t *testing.T) {
		w, err := CompileWatch(testEnv(t), WatchRequest{Resources: []string{"pods"}, SyncTimeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		rec := &boundRecorder{}
		start := time.Now()
		err = w.Run(context.Background(), conn(rec), io.Discard, io.Discard)
		check(t, rec, start, time.Now(), err)
	})
	t.Run("watch interrupted", func(t *testing.T) {
		// Ctrl-C ends a watch without an error whenever it comes, also
		// while the resources are being resolved.
		w, err := CompileWatch(testEnv(t), WatchRequest{Resources: []string{"pods"}, SyncTimeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		rec := &boundRecorder{}
		if err := w.Run(ctx, conn(rec), io.Discard, io.Discard); err != nil {
			t.Errorf("Run after cancellation = %v, want nil", err)
		}
		if rec.released != 1 {
			t.Errorf("released %d times, want 1", rec.released)
		}
	})
	t.Run("no bound", func(t *testing.T) {
		p, err := Compile(testEnv(t), Request{Resources: []string{"pods"}, SyncTimeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		c := Conn{Resolver: factory.NewResolver(failingMapper{err: boom}, noSchemas{&fakediscovery.FakeDiscovery{}})}
		if err := p.Execute(context.Background(), c, io.Discard, io.Discard); !errors.Is(err, boom) {
			t.Errorf("error %v, want the resolver's", err)
		}
	})
}
