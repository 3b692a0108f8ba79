package indexers_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

func TestCronFunctions(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x"}}}
	eval := func(expr string) (any, error) {
		t.Helper()
		p, err := env.Compile(expr, indexers.KindValue, "test")
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		v, err := p.Eval(context.Background(), obj)
		if err != nil {
			return nil, err
		}
		return v, nil
	}
	for expr, want := range map[string]bool{
		`isCronSchedule("*/5 * * * *")`:                    true,
		`isCronSchedule("@hourly")`:                        true,
		`isCronSchedule("CRON_TZ=Europe/Paris 0 3 * * *")`: true,
		`isCronSchedule("61 * * * *")`:                     false,
		`isCronSchedule("* * * *")`:                        false,
		`isCronSchedule("CRON_TZ=Nowhere/Else 0 3 * * *")`: false,
	} {
		v, err := eval(expr)
		if err != nil || v != types.Bool(want) {
			t.Errorf("%s = %v, %v; want %v", expr, v, err, want)
		}
	}
	after := `timestamp("2026-11-25T10:00:00Z")`
	for schedule, want := range map[string]time.Time{
		"0 3 * * *":                      time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC),
		"*/15 * * * *":                   time.Date(2026, 11, 25, 10, 15, 0, 0, time.UTC),
		"@daily":                         time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC),
		"CRON_TZ=Europe/Paris 0 3 * * *": time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC),
		"0 0 30 2 *":                     {},
	} {
		v, err := eval(`cronNext("` + schedule + `", ` + after + `)`)
		if err != nil {
			t.Errorf("cronNext(%q): %v", schedule, err)
			continue
		}
		if got := v.(types.Timestamp).Time; !got.Equal(want) {
			t.Errorf("cronNext(%q) = %v, want %v", schedule, got, want)
		}
	}
	if _, err := eval(`cronNext("61 * * * *", ` + after + `)`); err == nil {
		t.Error("cronNext of an invalid schedule is not an error")
	}
}
