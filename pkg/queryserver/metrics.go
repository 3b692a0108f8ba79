package queryserver

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/internal/delegatedauth"
)

// MetricsPath is the path of the server's own metrics (Options.Registry).
const MetricsPath = "/metrics"

// AnswerCacheCollectors report the room of c: the bytes it holds
// (kubectl_informer_answer_cache_bytes), the objects whose text it holds
// (kubectl_informer_answer_cache_objects) and the bytes it may hold
// (kubectl_informer_answer_cache_limit_bytes).
func AnswerCacheCollectors(c *AnswerCache) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "kubectl_informer_answer_cache_bytes",
			Help: "Bytes the answer cache holds: the -o json text of the objects it keeps, their keys and a fixed overhead each.",
		}, func() float64 { return float64(c.Used()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "kubectl_informer_answer_cache_objects",
			Help: "Objects whose -o json text the answer cache holds.",
		}, func() float64 { return float64(c.Objects()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "kubectl_informer_answer_cache_limit_bytes",
			Help: "Bytes the answer cache may hold (--answer-cache).",
		}, func() float64 { return float64(c.Limit()) }),
	}
}

// serveMetrics serves Options.Registry to a caller the authorizer allows
// to get the non-resource URL /metrics, as the API server serves its own.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if refused := delegatedauth.NonResource(r, s.o.Authenticator, s.o.Authorizer, "get", MetricsPath); refused != nil {
		reason := metav1.StatusReasonForbidden
		if refused.Code == http.StatusUnauthorized {
			reason = metav1.StatusReasonUnauthorized
		}
		writeStatus(w, refused.Code, reason, refused.Message)
		return
	}
	promhttp.HandlerFor(s.o.Registry, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}
