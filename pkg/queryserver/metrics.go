package queryserver

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
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
	resp, ok, err := s.o.Authenticator.AuthenticateRequest(r)
	if err != nil || !ok {
		writeStatus(w, http.StatusUnauthorized, metav1.StatusReasonUnauthorized,
			"Unauthorized: the request has no valid credentials (a bearer token or a client certificate the cluster accepts)")
		return
	}
	decision, _, err := s.o.Authorizer.Authorize(r.Context(), authorizer.AttributesRecord{
		User: resp.User, Verb: "get", Path: MetricsPath, ResourceRequest: false,
	})
	if decision != authorizer.DecisionAllow {
		msg := fmt.Sprintf("User %q cannot get path %q", resp.User.GetName(), MetricsPath)
		if err != nil {
			msg += ": " + err.Error()
		}
		writeStatus(w, http.StatusForbidden, metav1.StatusReasonForbidden, msg)
		return
	}
	promhttp.HandlerFor(s.o.Registry, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}
