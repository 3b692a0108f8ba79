package plan

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
)

// Conn is how a Plan reaches the cluster.
type Conn struct {
	// Config is the REST config of the user's kubeconfig and flags.
	Config *rest.Config
	// Resolver maps resource arguments to resources.
	Resolver *factory.Resolver
	// Bound, when not nil, is told how long the requests of Resolver
	// (discovery and OpenAPI schemas) may take while a plan fills its
	// caches: it is called with a context that ends limit (the
	// Request.SyncTimeout) after the plan began, and the function it
	// returns is called once the caches have synced or the attempt has
	// failed. Resolver's requests take no context of their own, so without
	// it a server that never answers holds resolution up for as long as
	// its client's timeouts allow, whatever the sync timeout.
	Bound func(ctx context.Context, limit time.Duration) (release func())
	// KubectlFlags are carried by the kubectl commands that messages
	// suggest (--kubeconfig, --context, --as...): see
	// factory.Config.KubectlFlags.
	KubectlFlags []string
	// Cluster is the name of the context: the value of the variable
	// cluster in the plan's expressions (see indexers.WithClusterVariable).
	Cluster string
}

// bound starts the contact phase of a plan filling its caches: the
// returned context ends limit from now (or with ctx), and Resolver's
// requests are held to it until release is called (once or more).
func (c Conn) bound(ctx context.Context, limit time.Duration) (context.Context, func()) {
	bctx, cancel := context.WithTimeout(ctx, limit)
	if c.Bound == nil {
		return bctx, cancel
	}
	release := sync.OnceFunc(c.Bound(bctx, limit))
	return bctx, func() {
		release()
		cancel()
	}
}
