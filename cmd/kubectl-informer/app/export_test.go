package app

import (
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestExportSeriesCapFlag checks that --max-series-per-metric is off by
// default (0, no cap), accepts 0 and a positive cap, and refuses a
// negative one naming what it takes.
func TestExportSeriesCapFlag(t *testing.T) {
	cmd := NewExportCommand(genericiooptions.NewTestIOStreamsDiscard())
	if def := cmd.Flags().Lookup("max-series-per-metric").DefValue; def != "0" {
		t.Errorf("--max-series-per-metric defaults to %s, want 0 (no cap)", def)
	}
	for _, tc := range []struct {
		value int
		err   string
	}{
		{0, ""},
		{500000, ""},
		{-1, "--max-series-per-metric must be 0 (no cap) or positive, got -1"},
	} {
		o := &ExportOptions{ConfigFile: "c.yaml", TotalShards: 1, LogFormat: "logfmt", MaxSeriesPerMetric: tc.value}
		err := o.Validate()
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("--max-series-per-metric %d: %v", tc.value, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("--max-series-per-metric %d: error %v, want %q", tc.value, err, tc.err)
		}
	}
}
