package queryserver

import (
	"context"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
)

// ReviewWorkers is how many decisions one query asks for at a time when
// it reads a resource in each namespace a caller may list it in: the
// SubjectAccessReviews not answered from the cache are sent concurrently.
const ReviewWorkers = 32

// mayEach decides with may, ReviewWorkers at a time, whether the caller
// may list res in each of namespaces; the answers are in their order. The
// first error ends the others and is returned.
func mayEach(ctx context.Context, may Access, res factory.Resource, namespaces []string) ([]bool, error) {
	allowed := make([]bool, len(namespaces))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(ReviewWorkers)
	for i, ns := range namespaces {
		g.Go(func() error {
			ok, err := may(gctx, res, ns)
			allowed[i] = ok
			return err
		})
	}
	return allowed, g.Wait()
}

// Metric names of a query server's own metrics.
const (
	decisionsMetric = "kubectl_informer_serve_authorization_decisions_total"
	reviewsMetric   = "kubectl_informer_serve_reviews_total"
	namesMetric     = "kubectl_informer_serve_resource_names_cached"
)

// countedAuthorizer counts the decisions it is asked for.
type countedAuthorizer struct {
	authorizer.Authorizer
	decisions prometheus.Counter
}

func (c countedAuthorizer) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	c.decisions.Inc()
	return c.Authorizer.Authorize(ctx, a)
}

// ReviewCounter counts the TokenReviews and SubjectAccessReviews that a
// client sends to the API server (see its Wrap), as the counter
// kubectl_informer_serve_reviews_total{kind}: with
// kubectl_informer_serve_authorization_decisions_total, how many
// decisions were answered from the cache.
type ReviewCounter struct {
	sent *prometheus.CounterVec
}

// NewReviewCounter returns a ReviewCounter registered with reg.
func NewReviewCounter(reg prometheus.Registerer) (*ReviewCounter, error) {
	sent := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: reviewsMetric,
		Help: "TokenReviews and SubjectAccessReviews sent to the API server: the authentication and authorization decisions not answered from the cache.",
	}, []string{"kind"})
	for _, k := range []string{"TokenReview", "SubjectAccessReview"} {
		sent.WithLabelValues(k)
	}
	if err := reg.Register(sent); err != nil {
		return nil, err
	}
	return &ReviewCounter{sent: sent}, nil
}

// Wrap counts the reviews sent through rt: it is a rest.Config's
// WrapTransport.
func (c *ReviewCounter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPost {
			switch {
			case strings.HasSuffix(r.URL.Path, "/subjectaccessreviews"):
				c.sent.WithLabelValues("SubjectAccessReview").Inc()
			case strings.HasSuffix(r.URL.Path, "/tokenreviews"):
				c.sent.WithLabelValues("TokenReview").Inc()
			}
		}
		return rt.RoundTrip(r)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
