package exporter

import (
	"bufio"
	"bytes"
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// TestWriteFamilyStats checks the telemetry of configured metrics that
// writeFamilyStats writes (export's telemetry) against what
// client_golang's registry gathers from familyStatsCollector (the
// drop-in's) and expfmt's encoder writes for the same values, byte for
// byte, in the text format and in OpenMetrics.
func TestWriteFamilyStats(t *testing.T) {
	stats := []familyStats{
		{name: "pod_info", series: 10000, unserved: 2, dropped: 12, duplicates: 1, errors: 0},
		{name: "kube_pod_status_phase", series: 1_234_567, unserved: 0, dropped: 1, duplicates: 0, errors: 3},
		{name: "a_metric", series: 0, unserved: 1, dropped: math.MaxUint32 + 10, duplicates: 7, errors: 1},
	}
	registry := prometheus.NewRegistry()
	registry.MustRegister(familyStatsCollector{stats: func() []familyStats { return stats }})
	mfs, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, openMetrics := range []bool{false, true} {
		format := expfmt.NewFormat(expfmt.TypeTextPlain)
		if openMetrics {
			format = expfmt.NewFormat(expfmt.TypeOpenMetrics)
		}
		var want bytes.Buffer
		enc := expfmt.NewEncoder(&want, format)
		// The registry sorts the families by name; writeFamilyStats
		// writes them in the order of familyStatMetrics.
		for _, m := range familyStatMetrics {
			for _, mf := range mfs {
				if mf.GetName() == TelemetryPrefix+m.name {
					if err := enc.Encode(mf); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		var got bytes.Buffer
		w := bufio.NewWriter(&got)
		writeFamilyStats(w, openMetrics, stats)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("OpenMetrics %t: writeFamilyStats wrote\n%s\nthe registry and expfmt write\n%s", openMetrics, got.String(), want.String())
		}
	}
	var none bytes.Buffer
	w := bufio.NewWriter(&none)
	writeFamilyStats(w, false, nil)
	if _ = w.Flush(); none.Len() != 0 {
		t.Errorf("no configured metric: writeFamilyStats wrote %q", none.String())
	}
}
