package queryserver

import (
	"context"
	"log/slog"
	"math"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-informer/kubectl-informer/internal/delegatedauth"
)

// AuthOptions configures the delegated authentication and authorization
// of NewDelegated (see delegatedauth.Options).
type AuthOptions = delegatedauth.Options

// DefaultAllowCacheTTL is the default of AuthOptions.AllowCacheTTL: a
// query across namespaces asks one decision per namespace, answered from
// the cache when it is asked again within it.
const DefaultAllowCacheTTL = delegatedauth.DefaultAllowCacheTTL

// ReviewClientConfig returns a copy of cfg for the client that sends
// NewDelegated's TokenReviews and SubjectAccessReviews: at most qps of
// them a second (bursts of as many, at least 1), or unthrottled when qps
// is 0 (client-go's default of 5 a second would queue a query's reviews);
// counted by counter when it is not nil.
func ReviewClientConfig(cfg *rest.Config, qps float32, counter *ReviewCounter) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.RateLimiter = nil
	if qps > 0 {
		c.QPS, c.Burst = qps, max(1, int(math.Ceil(float64(qps))))
	} else {
		c.QPS, c.Burst = -1, 0
	}
	if counter != nil {
		c.Wrap(counter.Wrap)
	}
	return c
}

// NewDelegated returns the authenticator and the authorizer of a query
// server that delegates both to the API server client talks to, with
// k8s.io/apiserver's delegating implementations: bearer tokens are checked
// with TokenReviews, client certificates against the client CA, and each
// decision with a SubjectAccessReview; answers are cached for the TTLs.
// The client CA, when read from the cluster, is followed until ctx ends.
func NewDelegated(ctx context.Context, client kubernetes.Interface, o AuthOptions, log *slog.Logger) (authenticator.Request, authorizer.Authorizer, error) {
	return delegatedauth.New(ctx, client, o, log)
}
