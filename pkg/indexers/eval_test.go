package indexers_test

import (
	"context"
	"errors"
	corev1 "k8s.io/api/core/v1"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

func TestMatch(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		expr    string
		obj     any
		want    bool
		wantErr string
	}{
		{`object.status.phase == "Pending"`, pod("default", "web-1", "n1", "Pending"), true, ""},
		{`object.status.phase == "Pending"`, pod("default", "web-1", "n1", "Running"), false, ""},
		{`object.status.phase == "Pending"`, pod("default", "web-1", "n1", ""), false, "test: no such key: phase"},
		{`has(object.status.phase) && object.status.phase == "Pending"`, pod("default", "web-1", "n1", ""), false, ""},
		{`object.?status.?phase.orValue("") == ""`, pod("default", "web-1", "n1", ""), true, ""},
		{`object.metadata.labels.app == "web"`, pod("default", "web-1", "n1", ""), true, ""},
		{`object.metadata.namespace == "default"`, pod("default", "web-1", "", ""), true, ""},
		{`object.spec.containers.exists(c, c.image.endsWith(":1.2.3"))`, pod("default", "web-1", "", ""), true, ""},
		{`object.spec.paused`, obj(map[string]any{"spec": map[string]any{"paused": true}}), true, ""},
		{`object.spec.paused`, obj(map[string]any{"spec": map[string]any{"paused": "yes"}}), false, "test: must evaluate to bool but got string"},
		{`object.replicas > 2`, map[string]any{"replicas": int64(3)}, true, ""},
		{`object.ratio > 0.5`, map[string]any{"ratio": int64(1)}, true, ""},                  // JSON numbers compare across types
		{`object.status.phase == "Pending"`, struct{}{}, false, "test: no such key: status"}, // a Go struct is seen through its JSON fields
		{`object.status.phase == "Pending"`, &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending}}, true, ""},
		{`object.status.phase == "Pending"`, nil, false, "test: cannot evaluate a nil object"},
	}
	for _, tt := range tests {
		p := compile(t, env, tt.expr, indexers.KindPredicate)
		got, err := p.Match(tt.obj)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("Match(%q) error %v, want %q", tt.expr, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Match(%q) = %v, %v; want %v", tt.expr, got, err, tt.want)
		}
	}
}

func TestIndexValues(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		expr    string
		obj     any
		want    []string
		wantErr string
	}{
		{`object.spec.nodeName`, pod("default", "a", "n1", ""), []string{"n1"}, ""},
		{`object.spec.containers.map(c, c.image)`, pod("default", "a", "", ""), []string{"registry.example/app:1.2.3"}, ""},
		{`object.metadata.labels.map(k, k + "=" + object.metadata.labels[k])`, pod("default", "a", "", ""), []string{"app=web", "tier=frontend"}, ""},
		{`has(object.spec.nodeName) ? object.spec.nodeName : null`, pod("default", "a", "", ""), nil, ""},
		{`object.?spec.?nodeName`, pod("default", "a", "", ""), nil, ""},
		{`object.?spec.?nodeName`, pod("default", "a", "n2", ""), []string{"n2"}, ""},
		{`object.spec.nodeName`, pod("default", "a", "", ""), nil, "test: no such key: nodeName"},
		{`object.spec.replicas`, map[string]any{"spec": map[string]any{"replicas": int64(3)}}, nil, "test: must evaluate to string, list(string) or null but got int"},
		{`object.spec.ports`, map[string]any{"spec": map[string]any{"ports": []any{"http", int64(80)}}}, nil, "test: must evaluate to string, list(string) or null but got a list containing int"},
	}
	for _, tt := range tests {
		p := compile(t, env, tt.expr, indexers.KindIndex)
		got, err := p.IndexValues(tt.obj)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("IndexValues(%q) error %v, want %q", tt.expr, err, tt.wantErr)
			}
			continue
		}
		if strings.Contains(tt.expr, "labels.map") {
			// Map iteration order is not defined.
			slicesSort(got)
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("IndexValues(%q) = %q, %v; want %q", tt.expr, got, err, tt.want)
		}
	}
}

func slicesSort(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestKubernetesLibraries evaluates functions of the Kubernetes CEL
// libraries and of the cel-go extensions Kubernetes enables.
func TestKubernetesLibraries(t *testing.T) {
	env := newEnv(t)
	p := pod("default", "web-12", "n1", "Running")
	tests := []struct {
		expr string
		want any
	}{
		// quantity
		{`quantity("1Gi").isGreaterThan(quantity("1Mi"))`, true},
		{`quantity(object.spec.containers[0].resources.requests.memory).asInteger()`, int64(128 << 20)},
		{`quantity(object.spec.containers[0].resources.requests.cpu).asApproximateFloat()`, 0.25},
		{`quantity("1Gi")`, "1Gi"},
		// regex
		{`object.metadata.name.matches("^web-[0-9]+$")`, true},
		{`object.metadata.name.find("[0-9]+")`, "12"},
		// ip, cidr
		{`ip(object.status.podIP).family()`, int64(4)},
		{`cidr("10.0.0.0/8").containsIP(object.status.podIP)`, true},
		{`isIP("2001:db8::1")`, true},
		// urls
		{`url("https://example.com:8443/x").getPort()`, "8443"},
		// lists (Kubernetes)
		{`[1, 5, 3].max()`, int64(5)},
		{`[1, 2, 3].isSorted()`, true},
		// format
		{`format.dns1123Label().validate("Not_Valid").hasValue()`, true},
		// semver
		{`semver("1.2.3").isLessThan(semver("1.10.0"))`, true},
		// strings
		{`"a,b".split(",")`, []any{"a", "b"}},
		{`"%s-%d".format(["x", 1])`, "x-1"},
		{`object.metadata.name.upperAscii()`, "WEB-12"},
		// sets
		{`sets.contains(["a", "b", "c"], ["b"])`, true},
		// lists (cel-go)
		{`lists.range(3)`, []any{int64(0), int64(1), int64(2)}},
		{`[3, 1, 2].sort()`, []any{int64(1), int64(2), int64(3)}},
		// optionals, two-variable comprehensions
		{`object.?spec.?hostNetwork.orValue(false)`, false},
		{`object.metadata.labels.all(k, v, k != "" && v != "")`, true},
		// time
		{`timestamp(object.metadata.creationTimestamp)`, "2024-05-01T10:00:00Z"},
		{`timestamp("2024-05-01T10:30:00Z") - timestamp(object.metadata.creationTimestamp)`, "1800s"},
		// plain values
		{`object.metadata.labels`, map[string]any{"app": "web", "tier": "frontend"}},
		{`null`, nil},
		{`b"hi"`, "aGk="},
		{`18446744073709551615u`, float64(math.MaxUint64)},
		{`{1: "one"}`, map[string]any{"1": "one"}},
		{`type(1)`, "int"},
		{`optional.none()`, nil},
	}
	for _, tt := range tests {
		got, err := compile(t, env, tt.expr, indexers.KindValue).Value(p)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Value(%q) = %#v, %v; want %#v", tt.expr, got, err, tt.want)
		}
	}
}

func TestValueSharesNothingWithTheObject(t *testing.T) {
	env := newEnv(t)
	o := pod("default", "a", "", "")
	got, err := compile(t, env, `object.metadata.labels`, indexers.KindValue).Value(o)
	if err != nil {
		t.Fatal(err)
	}
	got.(map[string]any)["app"] = "changed"
	if o.GetLabels()["app"] != "web" {
		t.Error("modifying the result of Value modified the object")
	}
}

func TestCostLimit(t *testing.T) {
	list := func(n int) map[string]any {
		items := make([]any, n)
		for i := range items {
			items[i] = int64(i)
		}
		return map[string]any{"items": items}
	}
	const expr = `object.items.all(x, object.items.all(y, x + y >= 0))`

	t.Run("default limit", func(t *testing.T) {
		// 250,000 iterations of about 5 cost units.
		p := compile(t, newEnv(t), expr, indexers.KindPredicate)
		_, err := p.Match(list(500))
		if !errors.Is(err, indexers.ErrCostLimitExceeded) {
			t.Fatalf("Match: error %v, want one wrapping ErrCostLimitExceeded", err)
		}
		if want := "test: cost limit exceeded: evaluation stopped after 1000000 cost units; simplify the expression or raise the limit"; err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
	})
	t.Run("chosen limit", func(t *testing.T) {
		// 22,500 iterations: about 110,000 cost units.
		o := list(150)
		if _, err := compile(t, newEnv(t, indexers.WithCostLimit(100_000)), expr, indexers.KindPredicate).Match(o); !errors.Is(err, indexers.ErrCostLimitExceeded) {
			t.Errorf("Match with a limit of 100000: error %v, want one wrapping ErrCostLimitExceeded", err)
		}
		if ok, err := compile(t, newEnv(t, indexers.WithCostLimit(200_000)), expr, indexers.KindPredicate).Match(o); err != nil || !ok {
			t.Errorf("Match with a limit of 200000 = %v, %v; want true", ok, err)
		}
	})
	t.Run("hint", func(t *testing.T) {
		env := newEnv(t, indexers.WithCostLimit(100_000), indexers.WithCostLimitHint("raise --cost-limit"))
		_, err := compile(t, env, expr, indexers.KindPredicate).Match(list(150))
		if want := "test: cost limit exceeded: evaluation stopped after 100000 cost units; simplify the expression or raise --cost-limit"; err == nil || err.Error() != want {
			t.Errorf("error %v, want %q", err, want)
		}
	})
	t.Run("no limit", func(t *testing.T) {
		env := newEnv(t, indexers.WithCostLimit(indexers.NoCostLimit))
		if got := env.CostLimit(); got != indexers.NoCostLimit {
			t.Errorf("CostLimit() = %d, want NoCostLimit", got)
		}
		// 490,000 iterations: about 2,500,000 cost units.
		if ok, err := compile(t, env, expr, indexers.KindPredicate).Match(list(700)); err != nil || !ok {
			t.Errorf("Match without a limit = %v, %v; want true", ok, err)
		}
	})
	t.Run("index", func(t *testing.T) {
		p := compile(t, newEnv(t, indexers.WithCostLimit(50)), `object.items.filter(x, x > 10).map(x, string(x))`, indexers.KindIndex)
		if _, err := p.IndexValues(list(100)); !errors.Is(err, indexers.ErrCostLimitExceeded) {
			t.Errorf("IndexValues: error %v, want one wrapping ErrCostLimitExceeded", err)
		}
	})
}

func TestEvalInterrupted(t *testing.T) {
	items := make([]any, 3000)
	for i := range items {
		items[i] = int64(i)
	}
	// With no cost limit to speak of, only the context can stop this.
	env := newEnv(t, indexers.WithCostLimit(math.MaxUint64))
	p := compile(t, env, `object.items.all(x, object.items.all(y, x + y >= 0))`, indexers.KindPredicate)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := p.Eval(ctx, map[string]any{"items": items})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Eval: error %v, want one wrapping context.DeadlineExceeded", err)
	}
}

func TestEval(t *testing.T) {
	env := newEnv(t)
	v, err := compile(t, env, `object.spec.nodeName`, indexers.KindValue).Eval(context.Background(), pod("default", "a", "n1", ""))
	if err != nil || v != types.String("n1") {
		t.Errorf("Eval = %v, %v; want \"n1\"", v, err)
	}
}

// typedPod stands for a typed API object, read through a converter.
type typedPod struct {
	Name  string
	Phase string
}

func TestConverter(t *testing.T) {
	convert := func(obj any) ref.Val {
		if p, ok := obj.(*typedPod); ok {
			return types.NewStringInterfaceMap(types.DefaultTypeAdapter, map[string]any{
				"metadata": map[string]any{"name": p.Name},
				"status":   map[string]any{"phase": p.Phase},
			})
		}
		return indexers.DefaultConverter(obj)
	}
	env := newEnv(t, indexers.WithConverter(convert))
	p := compile(t, env, `object.status.phase == "Pending"`, indexers.KindPredicate)
	for _, o := range []any{&typedPod{Name: "a", Phase: "Pending"}, pod("default", "b", "", "Pending")} {
		if ok, err := p.Match(o); err != nil || !ok {
			t.Errorf("Match(%T) = %v, %v; want true", o, ok, err)
		}
	}
}

func TestDefaultConverter(t *testing.T) {
	m := map[string]any{"a": "b"}
	for _, o := range []any{m, obj(m), types.NewStringInterfaceMap(types.DefaultTypeAdapter, m)} {
		v := indexers.DefaultConverter(o)
		if got, _ := v.(interface{ Get(ref.Val) ref.Val }); got == nil || got.Get(types.String("a")) != types.String("b") {
			t.Errorf("DefaultConverter(%T) = %v", o, v)
		}
	}
	if v := indexers.DefaultConverter(nil); !types.IsError(v) {
		t.Errorf("DefaultConverter(nil) = %v, want an error", v)
	}
}

// TestConcurrentEvaluation runs under -race.
func TestConcurrentEvaluation(t *testing.T) {
	env := newEnv(t)
	p := compile(t, env, `object.spec.containers.exists(c, c.name == "app") && object.status.phase == "Running"`, indexers.KindPredicate)
	o := pod("default", "a", "n1", "Running")
	done := make(chan error)
	for range 4 {
		go func() {
			for range 200 {
				if ok, err := p.Match(o); err != nil || !ok {
					done <- errors.Join(err, errors.New("no match"))
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func TestEvalEach(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	p, err := env.CompileEach(`object.status.phase == each`, indexers.KindPredicate, "value")
	if err != nil {
		t.Fatal(err)
	}
	pod := map[string]any{"status": map[string]any{"phase": "Running"}}
	for each, want := range map[string]bool{"Running": true, "Pending": false} {
		v, err := p.EvalEach(context.Background(), pod, each)
		if err != nil || v != types.Bool(want) {
			t.Errorf("each=%q: %v, %v; want %v", each, v, err, want)
		}
	}
	if _, err := env.Compile(`each == 1`, indexers.KindPredicate, "--where"); err == nil || !strings.Contains(err.Error(), "undeclared reference to 'each'") {
		t.Errorf("each outside CompileEach: %v", err)
	}
}
