// Package seriesset reads a Prometheus text exposition as Prometheus sees
// it: per family, its HELP text, its TYPE and the set of its series, each
// written as name{label="value",…} value with the labels sorted and those
// with an empty value left out (Prometheus stores no empty label), so that
// two expositions that differ only in label or series order, or in
// writing an empty label or none, compare equal.
package seriesset

import (
	"fmt"
	"io"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Family is one metric family of an exposition.
type Family struct {
	Help string
	// Type is the lower-case TYPE: gauge, counter, untyped, ….
	Type string
	// Series are the family's series, sorted.
	Series []string
}

// Parse reads a text exposition.
func Parse(r io.Reader) (map[string]Family, error) {
	return parse(r, false)
}

// ParseExact is Parse keeping the labels with an empty value: two
// expositions then compare equal only if they write the same labels, as a
// diff of their text sees them, apart from label and series order.
func ParseExact(r io.Reader) (map[string]Family, error) {
	return parse(r, true)
}

func parse(r io.Reader, keepEmpty bool) (map[string]Family, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Family, len(mfs))
	for name, mf := range mfs {
		f := Family{Help: mf.GetHelp(), Type: strings.ToLower(mf.GetType().String())}
		for _, m := range mf.GetMetric() {
			f.Series = append(f.Series, seriesString(name, mf.GetType(), m, keepEmpty))
		}
		slices.Sort(f.Series)
		out[name] = f
	}
	return out, nil
}

func seriesString(name string, typ dto.MetricType, m *dto.Metric, keepEmpty bool) string {
	labels := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		if l.GetValue() == "" && !keepEmpty {
			continue
		}
		labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	slices.Sort(labels)
	var v float64
	switch typ {
	case dto.MetricType_COUNTER:
		v = m.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		v = m.GetGauge().GetValue()
	default:
		v = m.GetUntyped().GetValue()
	}
	return fmt.Sprintf("%s{%s} %s", name, strings.Join(labels, ","), model.SampleValue(v).String())
}

// Minus returns the series of sorted a that are not in sorted b.
func Minus(a, b []string) []string {
	var out []string
	for _, s := range a {
		if _, found := slices.BinarySearch(b, s); !found {
			out = append(out, s)
		}
	}
	return out
}
