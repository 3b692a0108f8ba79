// Package exportertest runs exporter configs in tests: a compiled config's
// engine fed objects, its exposition written and linted. The tests of the
// shipped configs (profiles, translated custom resource state configs) use
// it.
//
// It imports only package exporter of the project.
package exportertest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
)

// Exposition gives objs to an engine of c, all as objects of its first
// resource, as an informer delivers them, and returns the exposition the
// engine serves. An evaluation error fails the test, and so does a
// promlint problem with the exposition itself; advice on metric names
// (IsNamingAdvice) does not, as the names are kube-state-metrics'.
func Exposition(t testing.TB, c *exporter.Compiled, objs ...any) string {
	t.Helper()
	e := exporter.NewEngine(c, exporter.EngineOptions{})
	t.Cleanup(e.Close)
	for _, o := range objs {
		e.Update(0, o)
	}
	for name, msg := range e.EvaluationErrors() {
		t.Errorf("%s: evaluation error: %s", name, msg)
	}
	var b bytes.Buffer
	if err := e.WriteFamilies(&b, false); err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.New(bytes.NewReader(b.Bytes())).Lint()
	if err != nil {
		t.Fatalf("promlint: %v\n%s", err, b.String())
	}
	for _, p := range problems {
		if !IsNamingAdvice(p.Text) {
			t.Errorf("promlint: %s: %s", p.Metric, p.Text)
		}
	}
	return b.String()
}

// IsNamingAdvice reports whether a promlint problem is advice on a metric's
// name (a counter without _total, a unit-less gauge, a _count that is not a
// histogram's), which kube-state-metrics' names sometimes do not follow.
func IsNamingAdvice(text string) bool {
	for _, s := range []string{"counter metrics should have \"_total\" suffix", "non-counter metrics should not have \"_total\" suffix", "use base unit", "metric names should be written in 'snake_case'", "non-histogram and non-summary metrics should not have"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}
