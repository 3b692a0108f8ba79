package main

import (
	"math"
	"testing"
)

func TestHistogramQuantiles(t *testing.T) {
	before := parseHistogram([]byte(`# TYPE kubectl_informer_event_to_series_seconds histogram
kubectl_informer_event_to_series_seconds_bucket{le="0.001"} 10
kubectl_informer_event_to_series_seconds_bucket{le="0.01"} 10
kubectl_informer_event_to_series_seconds_bucket{le="0.1"} 10
kubectl_informer_event_to_series_seconds_bucket{le="+Inf"} 10
kubectl_informer_event_to_series_seconds_sum 0.001
kubectl_informer_event_to_series_seconds_count 10
`), eventToSeries)
	after := parseHistogram([]byte(`kubectl_informer_event_to_series_seconds_bucket{le="0.001"} 60
kubectl_informer_event_to_series_seconds_bucket{le="0.01"} 108
kubectl_informer_event_to_series_seconds_bucket{le="0.1"} 109
kubectl_informer_event_to_series_seconds_bucket{le="+Inf"} 110
kubectl_informer_other_bucket{le="0.001"} 5
`), eventToSeries)
	h := after.minus(before)
	if got := h.count(); got != 100 {
		t.Errorf("count = %v, want 100", got)
	}
	for _, tc := range []struct{ q, want float64 }{{0.5, 0.001}, {0.51, 0.01}, {0.98, 0.01}, {0.99, 0.1}, {1, math.Inf(1)}} {
		if got := h.quantile(tc.q); got != tc.want {
			t.Errorf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := bound(0.0025); got != "2.5 ms" {
		t.Errorf("bound = %q", got)
	}
}

func TestMaskAges(t *testing.T) {
	in := "NAMESPACE   NAME   AGE\nshop        web    19m\nshop        db     3d4h\n"
	want := "NAMESPACE   NAME   AGE\nshop        web    -\nshop        db     -\n"
	if got := string(maskAges([]byte(in))); got != want {
		t.Errorf("maskAges = %q, want %q", got, want)
	}
	other := "NAME   STATUS\nweb    Running\n"
	if got := string(maskAges([]byte(other))); got != other {
		t.Errorf("a table without AGE changed: %q", got)
	}
	if got := string(maskAges(nil)); got != "" {
		t.Errorf("empty output changed: %q", got)
	}
}
