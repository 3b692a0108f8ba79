package indexers

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
)

// TestFastMatchesInterpreter evaluates expressions of the forms fastExpr
// handles, and some it must not handle, against typed and unstructured
// objects, with and without each: wherever the fast path answers, its
// answer is the interpreter's, value and type; where the interpreter
// fails, the fast path does not answer.
func TestFastMatchesInterpreter(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	ptrue := true
	full := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", UID: "u-1", Labels: map[string]string{"app": "web", "tier": ""},
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-1", Controller: &ptrue}}},
		Spec: corev1.PodSpec{NodeName: "node-1", HostNetwork: true, Priority: new(int32),
			SecurityContext: &corev1.PodSecurityContext{RunAsUser: new(int64), SELinuxOptions: &corev1.SELinuxOptions{User: "u"}},
			Containers: []corev1.Container{{Name: "app", Image: "nginx", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi"), "example.com/gpu": resource.MustParse("1")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi"), "hugepages-2Mi": resource.MustParse("4Mi")}}},
				{Name: "side", Image: "envoy"}},
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64)},
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "db"}, {Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "db"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.0.0.1",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue, Reason: "Scheduled"}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", RestartCount: 3, Image: "nginx:1", ImageID: "sha256:1", Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}, {Name: "side", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 2}}}}},
	}
	empty := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "bare"}}
	var objects []any
	for _, p := range []*corev1.Pod{full, empty} {
		objects = append(objects, p)
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
		if err != nil {
			t.Fatal(err)
		}
		objects = append(objects, &unstructured.Unstructured{Object: m})
	}
	withEach := []string{
		`each`, `each.name`, `each.?restartCount.orValue(0)`, `each.?image.orValue("none")`, `each.restartCount`,
		`object.status.phase == each`, `each == "Running"`, `each.name == object.spec.nodeName`,
		`each.?restartCount.orValue(0) > 2`, `each != "Running" && object.spec.hostNetwork`, `each in ["Running", "app"]`,
		`object.metadata.namespace`, `string(each.?restartCount.orValue(0))`,
		`has(each.restartCount)`, `has(each.name) && has(each.restartCount)`, `each.name == "app" ? optional.of(1) : optional.none()`,
		`has(each.restartCount) ? optional.of(each.restartCount + 1) : optional.none()`,
		`each.?restartCount.orValue(0) > 2 ? optional.none() : optional.of("low")`,
		`each.name.replace("a", "b")`, `[each].map(x, x)`, `each.?state.?terminated.?reason.orValue("")`, `each.size()`,
		`object.spec.containers.filter(c, c.name == each.name).map(c, c.image)`, `has(each.state.running) ? 1 : 0`,
	}
	plain := []string{
		`object.metadata.namespace`, `object.metadata.name`, `object.metadata.uid`, `object.metadata.labels`,
		`object.metadata.labels.app`, `object.metadata.labels.tier`, `object.metadata.labels.missing`,
		`object.spec.nodeName`, `object.status.?hostIP.orValue("")`, `object.status.?podIP.orValue("")`,
		`object.spec.?priorityClassName.orValue("")`, `object.spec.?priority.orValue(-1)`, `object.spec.priority`,
		`string(object.spec.?hostNetwork.orValue(false))`, `string(object.spec.hostNetwork)`, `string(object.metadata.name)`,
		`string(object.spec.containers)`, `object.status.?containerStatuses.orValue([])`, `object.spec.containers`,
		`object.status.phase == "Running"`, `object.status.phase == "Pending"`, `"Running" == object.status.phase`,
		`object.spec.?nodeName.orValue("") == ""`, `object.metadata.?labels.?app.orValue("none")`,
		`object.metadata.?annotations.?x.orValue(null)`, `object.spec.hostNetwork == true`, `object.spec.priority == 0`,
		`object.spec.priority == 0.0`, `object.metadata.name.size()`, `object.metadata.?ownerReferences.orValue([])[0].kind`,
		`object.kind`, `object.apiVersion`, `object`, `object.status`, `object.metadata.labels == {"app": "web", "tier": ""}`,
		`object.status.phase != "Running"`, `object.metadata.namespace < "t"`, `object.metadata.namespace <= "shop"`,
		`object.metadata.name > "a"`, `object.metadata.name >= "web-0"`, `object.spec.priority < 1`, `object.spec.priority > 0u`,
		`object.spec.priority >= 0.0`, `object.spec.hostNetwork > false`, `object.metadata.name < object.spec.nodeName`,
		`object.status.phase == "Running" && object.metadata.namespace < "ns-5"`, `object.spec.hostNetwork || object.spec.nodeName == "x"`,
		`object.spec.nodeName == "x" || object.spec.hostNetwork`, `object.spec.priority == 1 && object.spec.nodeName.size() > 0`,
		`!object.spec.hostNetwork`, `!(object.status.phase == "Running")`, `object.status.phase in ["Running", "Pending"]`,
		`object.spec.priority in [0, 1]`, `object.metadata.name in []`, `object.spec.?nodeName.orValue("") in ["node-1"]`,
		`object.status.?phase.orValue("") == "" ? [] : ["Pending", "Succeeded", "Failed", "Unknown", "Running"]`,
		`object.spec.hostNetwork ? object.metadata.name : "none"`, `object.spec.hostNetwork ? 1 : 2`,
		`object.metadata.creationTimestamp < timestamp("2030-01-01T00:00:00Z")`,
		`object.spec.securityContext.runAsUser`, `object.spec.?securityContext.?runAsUser.orValue(-1)`,
		`object.spec.securityContext.seLinuxOptions.user`, `object.spec.?securityContext.?seLinuxOptions.?user.orValue("")`,
		`object.spec.securityContext.seLinuxOptions`, `object.spec.?securityContext.?runAsGroup.orValue(-1)`,
		`object.metadata.creationTimestamp`, `object.status.?startTime.orValue("")`, `object.metadata.?labels.?app.orValue("")`,
		`object.spec.containers`, `object.spec.?containers.orValue([])`, `object.status.?conditions.orValue([])`,
		`has(object.spec.nodeName)`, `has(object.status.hostIP)`, `has(object.spec.securityContext)`, `has(object.status.podIP)`,
		`has(object.spec.securityContext.seLinuxOptions)`, `has(object.metadata.labels.app)`, `has(object.metadata.labels.missing)`,
		`has(object.metadata.labels)`, `has(object.spec.hostNetwork)`, `has(object.spec.priority)`,
		`object.spec.hostNetwork ? [object.metadata.name] : []`,
		`has(object.spec.securityContext) && has(object.spec.securityContext.runAsUser) ? optional.of(object.spec.securityContext.runAsUser) : optional.none()`,
		// Indexing, calls, literals.
		`object.metadata.name.size()`, `object.spec.containers[0].name`, `has(object.spec.containers[0].name)`,
		`object.spec.containers[9].name`, `object.spec.containers[?9].orValue(null)`, `object.spec.containers[?0].name`,
		`object.spec.containers[?0].?image.orValue("")`, `object.metadata.labels["app"]`, `object.metadata.labels["nope"]`,
		`object.metadata.?labels[?"app"].orValue("-")`, `object.metadata.?labels[?"nope"].orValue("-")`, `object.metadata.?labels.?app`,
		`optional.of(object.metadata).name`, `optional.none().name`, `{"a": object.metadata.name}.?a`, `{"a": 1}.?b`,
		`{"a": [string(object.metadata.name)], "b": [string(object.spec.nodeName), "x"]}`, `[object.metadata.name, object.spec.nodeName]`,
		`object.spec.priority == 1 && object.spec.nodeName.size() > 0`, `object.metadata.name in [object.spec.nodeName]`,
		`object.spec.hostNetwork ? [object.metadata.name] : [object.spec.nodeName]`, `object.metadata.name.startsWith("web")`,
		`object.metadata.name.replace("-", "_").replace("w", "W")`, `object.metadata.name.contains("b")`, `size(object.spec.containers)`,
		`object.metadata.name + "/" + object.spec.nodeName`, `[object.metadata.name] + [object.spec.nodeName]`, `double(object.spec.priority) / 2.0`,
		`int(object.spec.priority) + 1`, `dyn(object.spec.priority)`, `1 / object.spec.priority`, `int("x" + object.metadata.name)`,
		`object.metadata.name.matches("^w.*")`, `object.metadata.?labels.orValue({}).size()`, `object.metadata.labels.app.upperAscii()`,
		// Comprehensions.
		`object.spec.containers.map(c, c.name)`, `object.spec.containers.filter(c, c.name == "app")`,
		`object.spec.containers.exists(c, c.name == "app")`, `object.spec.containers.all(c, c.name != "")`,
		`object.spec.containers.exists_one(c, c.name == "app")`, `object.spec.containers.map(c, c.missing)`,
		`object.spec.containers.exists(c, c.missing == "x")`, `object.spec.containers.all(c, c.name.size() > 100)`,
		`object.spec.containers.map(c, c.name).join(",")`, `object.spec.containers.map(c, c.name, c.image)`,
		`object.spec.containers.filter(c, c.name.startsWith("s")).map(c, {"n": c.name, "img": c.image})`,
		`object.spec.containers.map(c, object.spec.containers.map(d, c.name + d.name))`, `object.spec.containers.map(c, [c.name, c.name]).flatten()`,
		`object.spec.containers.transformList(i, c, i)`, `object.spec.containers.transformList(i, c, i > 0, c.name)`,
		`object.metadata.?labels.orValue({}).map(k, k).sort()`, `object.metadata.?labels.orValue({}).transformList(k, v, k + "=" + v).sort()`,
		`object.metadata.?labels.orValue({}).transformMap(k, v, v + "!")`, `object.metadata.?labels.orValue({}).exists(k, k == "tier")`,
		`object.status.?containerStatuses.orValue([]).exists(s, s.restartCount > 2)`, `[1, 2, 3].map(x, x * x)`, `[].map(x, x)`,
		`object.metadata.?ownerReferences.orValue([]).filter(r, r.?controller.orValue(false))[?0].kind.orValue("")`,
		`object.spec.?tolerations.orValue([]).map(t, {"key": string(t.?key.orValue("")), "seconds": t.?tolerationSeconds.optMap(s, string(s)).orValue("")}).distinct()`,
		`object.spec.containers.map(c, c.?resources.?requests.orValue({}).transformList(r, q, {"container": string(c.name), "resource": string(r), "quantity": string(q)})).flatten().filter(e, e.resource in ["cpu", "memory"] || e.resource.startsWith("hugepages-") || (e.resource.contains("/") && !e.resource.contains("kubernetes.io/"))).map(e, e.container + e.resource + e.quantity).sort()`,
		`object.spec.containers.map(c, c.?resources.?requests.orValue({}).transformList(r, q, double(quantity(string(q)).milliValue()) / 1000.0).sort())`,
		`object.spec.containers.map(c, c.?resources.?limits.orValue({}).map(r, r).sort())`,
		`!sets.intersects([object.status.?reason.orValue("")] + object.status.?conditions.orValue([]).map(c, c.?reason.orValue("")), ["Scheduled"])`,
		`object.status.?conditions.orValue([]).filter(c, c.type == "Ready").map(c, [{"condition": dyn("true"), "is": dyn(c.status == "True")}, {"condition": dyn("false"), "is": dyn(c.status == "False")}]).flatten()`,
		`object.spec.containers.map(c, object.status.?containerStatuses.orValue([]).filter(s, s.name == c.name).map(s, {"name": string(s.name), "image": string(s.?image.orValue(""))})).flatten()`,
		// flatten() of a map, collected as the map is evaluated.
		`object.spec.containers.map(c, c.?ports.orValue([])).flatten()`, `object.spec.containers.map(c, [[c.name], [c.image]]).flatten()`,
		`object.spec.containers.map(c, c.name != "side", [c.name, c.image]).flatten()`, `[[1, 2], [], [3]].map(l, l).flatten()`,
		`object.spec.containers.map(c, dyn(c.name == "app" ? [c.name, c.image] : c.image)).flatten()`, `[].map(x, [x]).flatten()`,
		`object.metadata.?labels.orValue({}).transformList(k, v, [k, v]).flatten().sort()`, `object.spec.containers.map(c, [c.name]).flatten().flatten()`,
		`object.spec.containers.map(c, [c.missing]).flatten()`, `object.spec.containers.map(c, c.?resources.?requests.orValue({}).map(r, r)).flatten().sort()`,
		// Map literals with constant string keys: records.
		`{"a": dyn(object.metadata.name), "b": dyn(1)}.b`, `{"a": object.metadata.name}["a"]`, `{"a": 1}[?"b"].orValue(2)`, `{"a": 1}["b"]`,
		`{"a": object.metadata.name} == {"a": "web-0"}`, `{"a": object.metadata.name} == {"a": "web-0", "b": "x"}`, `{"a": 1, "b": 2}.size()`,
		`"a" in {"a": object.metadata.name}`, `dyn(1) in dyn({"a": 1})`, `{"a": 1, "b": 2}.map(k, k).sort()`, `{"a": 1, "b": 2}.transformList(k, v, k + string(v)).sort()`,
		`{"x": [object.metadata.name]}.x[0]`, `[{"a": 1}, {"a": 2}].map(m, m.a)`, `{"a": {"b": object.metadata.name}}.a.b`, `has({"a": 1}.a)`,
		`has({"a": 1}.b)`, `{"a": 1}.exists(k, k == "a")`, `dyn({"a": 1}) == dyn({"a": 1.0})`, `dyn({"a": 1})[1]`, `{"a": 1, "b": 2}.transformMap(k, v, v * 2)`,
		`object.spec.containers.map(c, {"n": c.name, "i": c.image}).filter(m, m.n == "app")`, `{"a": object.metadata.name}.?a.orValue("")`,
		`[dyn({"a": 1})] + [dyn({"a": object.metadata.name})]`, `{"a": 1} != {"b": 1}`, `{"a": object.spec.containers}.a.map(c, c.name)`,
		// An empty map as the default of an optional path.
		`object.metadata.?annotations.orValue({})`, `object.metadata.?labels.orValue({})`, `object.metadata.?labels.orValue({}) == {}`,
		`object.metadata.?annotations.orValue({}).size()`, `object.spec.containers.map(c, c.?resources.?limits.orValue({}))`,
		// A field compared with a string as it is.
		`object.status.phase == "Running"`, `"Running" != object.status.phase`, `object.spec.containers.filter(c, c.name == "side")`,
		`object.spec.containers.exists(c, "app" == c.image)`, `object.status.reason == "x"`, `object.spec.priority == "1"`,
		`object.metadata.labels.app == "web"`, `object.spec.containers.map(c, c.name != "app")`, `object.metadata.name == ""`,
	}
	// Conditionals with a side left to the interpreter, which they fall
	// back to whenever that side is chosen: not counted in the share the
	// fast path answers.
	partial := map[string]bool{
		`has(each.restartCount) ? optional.of(each.restartCount + 1) : optional.none()`:                                                                         true,
		`object.spec.hostNetwork ? [object.metadata.name] : []`:                                                                                                 true,
		`has(object.spec.securityContext) && has(object.spec.securityContext.runAsUser) ? optional.of(object.spec.securityContext.runAsUser) : optional.none()`: true,
	}
	fastForms, answered, evaluations := 0, 0, 0
	for _, tc := range []struct {
		exprs   []string
		each    bool
		element func(obj any) []any
	}{
		{exprs: plain},
		{exprs: withEach, each: true, element: func(obj any) []any {
			return []any{nil, "Running", int64(3), map[string]any{"name": "app", "restartCount": int64(2)}, types.String("x"),
				firstStatus(t, env, obj)}
		}},
	} {
		for _, expr := range tc.exprs {
			p := compileValue(t, env, expr, tc.each)
			if p.fast == nil {
				continue
			}
			fastForms++
			for _, obj := range objects {
				elements := []any{nil}
				if tc.each {
					elements = tc.element(obj)
				}
				for _, each := range elements {
					object, _, _ := p.objectValue(obj)
					want, wantErr := p.evalVars(context.Background(), &activation{object: object, each: each, hasEach: tc.each})
					got, ok := p.fastEval(object, each)
					if !partial[expr] {
						evaluations++
						if ok {
							answered++
						}
					}
					switch {
					case wantErr != nil && ok:
						t.Errorf("%s on %T, each %v: fast answered %v, the interpreter failed: %v", expr, obj, each, got, wantErr)
					case wantErr == nil && ok && (got.Type() != want.Type() || got.Equal(want) != types.True):
						t.Errorf("%s on %T, each %v: fast answered %v (%s), the interpreter %v (%s)", expr, obj, each, got, got.Type().TypeName(), want, want.Type().TypeName())
					}
				}
			}
		}
	}
	if fastForms < 30 {
		t.Errorf("only %d expressions take the fast path", fastForms)
	}
	// The objects lack many of the fields read, but most evaluations
	// succeed, and those must not fall back to the interpreter.
	if answered*2 < evaluations {
		t.Errorf("the fast path answered %d of %d evaluations", answered, evaluations)
	}
	t.Logf("%d expressions take the fast path; it answered %d of %d evaluations", fastForms, answered, evaluations)
	// Variables other than object, each and those of comprehensions are
	// left to the interpreter.
	clusterEnv, err := NewEnv(WithClusterVariable())
	if err != nil {
		t.Fatal(err)
	}
	for _, expr := range []string{`cluster`, `object.metadata.name + cluster`, `object.spec.containers.map(c, cluster)`} {
		p, err := clusterEnv.Compile(expr, KindValue, "test")
		if err != nil {
			t.Fatal(err)
		}
		if p.fast != nil {
			t.Errorf("%s takes the fast path", expr)
		}
	}
}

// firstStatus returns the first container status of obj as a program
// sees it (nil when there is none).
func firstStatus(t *testing.T, env *Env, obj any) any {
	t.Helper()
	p, err := env.Compile(`object.status.?containerStatuses.orValue([])`, KindValue, "test")
	if err != nil {
		t.Fatal(err)
	}
	v, err := p.Eval(context.Background(), obj)
	if err != nil {
		t.Fatal(err)
	}
	l := v.(traits.Lister)
	if l.Size() == types.Int(0) {
		return nil
	}
	first := l.Get(types.Int(0))
	return first
}

// TestFastProfilePods evaluates every expression of the kube-state-metrics
// profile's pod families, with the elements their each gives, against pods
// as typed objects and as JSON: the fast path takes every one, its answers
// are the interpreter's, and on a pod with a value at every field read it
// answers every evaluation.
func TestFastProfilePods(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	file, err := profiles.FileOf(profiles.KubeStateMetrics, "pods")
	if err != nil {
		t.Fatal(err)
	}
	var config struct {
		Resources []struct {
			Metrics []struct {
				Name   string
				Each   string
				Labels map[string]string
				Value  string
			}
		}
	}
	if err := yaml.Unmarshal(file.Data, &config); err != nil {
		t.Fatal(err)
	}
	ptrue := true
	full := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", UID: "u-1", CreationTimestamp: metav1.Unix(1700000000, 0),
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-1", Controller: &ptrue}}},
		Spec: corev1.PodSpec{NodeName: "node-1", PriorityClassName: "high", SchedulerName: "default-scheduler", ServiceAccountName: "web",
			RestartPolicy: corev1.RestartPolicyAlways, RuntimeClassName: new(string),
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}}},
			Containers: []corev1.Container{{Name: "app", Image: "nginx", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}}, {Name: "side", Image: "envoy"}},
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64)}},
			Volumes:     []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.0.0.1", PodIP: "10.1.0.1", PodIPs: []corev1.PodIP{{IP: "10.1.0.1"}},
			QOSClass: corev1.PodQOSBurstable, StartTime: &metav1.Time{Time: time.Unix(1700000001, 0)},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Unix(1700000005, 0)},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Unix(1700000002, 0)},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Unix(1700000003, 0)},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Unix(1700000004, 0)}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", Image: "busybox:1", ImageID: "sha256:0", ContainerID: "containerd://0",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", StartedAt: metav1.Unix(1700000002, 0), FinishedAt: metav1.Unix(1700000003, 0)}}}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", RestartCount: 3, Image: "nginx:1", ImageID: "sha256:1", ContainerID: "containerd://1", Ready: true,
				State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Unix(1700000004, 0)}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137, FinishedAt: metav1.Unix(1700000003, 0)}}},
				{Name: "side", Image: "envoy:1", ImageID: "sha256:2", ContainerID: "containerd://2",
					State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}},
	}
	pending := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "new", UID: "u-2"},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"}}}}
	var objects []any
	for _, p := range []*corev1.Pod{full, pending} {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
		if err != nil {
			t.Fatal(err)
		}
		objects = append(objects, p, &unstructured.Unstructured{Object: m})
	}
	compile := func(expr string, withEach bool) *Program {
		t.Helper()
		p := compileValue(t, env, expr, withEach)
		if p.fast == nil {
			t.Errorf("%s does not take the fast path", expr)
		}
		return p
	}
	// check evaluates p both ways and returns the interpreter's value.
	evaluations, unanswered := 0, 0
	check := func(family string, p *Program, obj, each any, withEach, unordered bool) ref.Val {
		t.Helper()
		object, _, _ := p.objectValue(obj)
		want, wantErr := p.evalVars(context.Background(), &activation{object: object, each: each, hasEach: withEach})
		if p.fast == nil {
			return want
		}
		got, ok := p.fastEval(object, each)
		evaluations++
		switch {
		case wantErr != nil && ok:
			t.Errorf("%s: %s on %T, each %v: fast answered %v, the interpreter failed: %v", family, p.Expr(), obj, each, got, wantErr)
		case wantErr == nil && ok && unordered && !sameElements(got, want):
			t.Errorf("%s: %s on %T, each %v: fast answered %v (%s), the interpreter %v (%s)", family, p.Expr(), obj, each, got, got.Type().TypeName(), want, want.Type().TypeName())
		case wantErr == nil && ok && !unordered && (got.Type() != want.Type() || got.Equal(want) != types.True):
			t.Errorf("%s: %s on %T, each %v: fast answered %v (%s), the interpreter %v (%s)", family, p.Expr(), obj, each, got, got.Type().TypeName(), want, want.Type().TypeName())
		case wantErr == nil && !ok:
			unanswered++
			if obj == objects[0] || obj == objects[1] {
				t.Errorf("%s: %s on the full pod, each %v: the fast path did not answer (the interpreter: %v)", family, p.Expr(), each, want)
			}
		}
		return want
	}
	families := 0
	for _, r := range config.Resources {
		for _, m := range r.Metrics {
			families++
			withEach := m.Each != ""
			var eachProg *Program
			if withEach {
				eachProg = compile(m.Each, false)
			}
			progs := []*Program{}
			for _, name := range slices.Sorted(maps.Keys(m.Labels)) {
				progs = append(progs, compile(m.Labels[name], withEach))
			}
			if m.Value != "" {
				progs = append(progs, compile(m.Value, withEach))
			}
			for _, obj := range objects {
				elements := []any{nil}
				if withEach {
					// A map's entries come in no set order.
					list := check(m.Name, eachProg, obj, nil, false, true)
					elements = nil
					if l, ok := list.(traits.Lister); ok {
						for it := l.Iterator(); it.HasNext() == types.True; {
							elements = append(elements, it.Next())
						}
					}
				}
				for _, each := range elements {
					for _, p := range progs {
						check(m.Name, p, obj, each, withEach, false)
					}
				}
			}
		}
	}
	if families < 50 {
		t.Errorf("read %d pod families of the profile", families)
	}
	t.Logf("%d families, %d evaluations, %d left to the interpreter", families, evaluations, unanswered)
}

// sameElements reports whether got and want are lists of the same
// elements, in any order.
func sameElements(got, want ref.Val) bool {
	g, ok1 := got.(traits.Lister)
	w, ok2 := want.(traits.Lister)
	if !ok1 || !ok2 || g.Size() != w.Size() {
		return false
	}
	var left []ref.Val
	for it := w.Iterator(); it.HasNext() == types.True; {
		left = append(left, it.Next())
	}
	for it := g.Iterator(); it.HasNext() == types.True; {
		x := it.Next()
		i := slices.IndexFunc(left, func(y ref.Val) bool { return x.Type() == y.Type() && x.Equal(y) == types.True })
		if i < 0 {
			return false
		}
		left = slices.Delete(left, i, i+1)
	}
	return len(left) == 0
}

// FuzzFastPath compiles arbitrary expressions and, where the fast path
// takes one, evaluates it both ways against a typed pod and the same pod as
// JSON: wherever the fast path answers, the interpreter answers the same.
// A map's keys come in no set order, so an answer that differs is checked
// against several of the interpreter's.
func FuzzFastPath(f *testing.F) {
	for _, seed := range []string{
		`object.spec.containers.map(c, c.name)`, `object.spec.containers.filter(c, c.image.startsWith("n"))[?0].name.orValue("")`,
		`object.metadata.?labels.orValue({}).transformList(k, v, k + v)`, `object.spec.containers.exists(c, c.name == "side")`,
		`[1, 2, 3].map(x, x * 2).filter(y, y > 2)`, `object.spec.containers.all(c, has(c.image))`, `{"a": object.metadata.name}.?b.orValue("z")`,
		`object.spec.containers.map(c, c.?resources.?requests.orValue({}).size()).sum()`, `object.metadata.name.split("-").map(p, p.size())`,
		`optional.of(object.spec).containers[0].name`, `object.spec.containers.exists_one(c, c.name.contains("a"))`, `int(object.metadata.name)`,
	} {
		f.Add(seed)
	}
	env, err := NewEnv()
	if err != nil {
		f.Fatal(err)
	}
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", Labels: map[string]string{"app": "web", "tier": "front"}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}}, {Name: "side", Image: "envoy"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		f.Fatal(err)
	}
	objects := []any{pod, &unstructured.Unstructured{Object: m}}
	f.Fuzz(func(t *testing.T, expr string) {
		p, err := env.Compile(expr, KindValue, "test")
		if err != nil || p.fast == nil {
			return
		}
		for _, obj := range objects {
			// As Eval chooses: objects within the bounds of a program
			// that tracks its cost.
			object, sizes, measured := p.objectValue(p.Prepare(obj))
			if !p.fastFor(context.Background(), sizes, measured) {
				continue
			}
			got, ok := p.fastEval(object, nil)
			if !ok {
				continue
			}
			for try := 0; ; try++ {
				want, wantErr := p.evalVars(context.Background(), &activation{object: object})
				if wantErr == nil && got.Type() == want.Type() && (got.Equal(want) == types.True || sameElements(got, want)) {
					break
				}
				if try == 20 {
					t.Fatalf("%s on %T: fast answered %v (%s), the interpreter %v, %v", expr, obj, got, got.Type().TypeName(), want, wantErr)
				}
			}
		}
	})
}

// compileValue compiles expr as a value, with each declared when withEach.
func compileValue(t *testing.T, env *Env, expr string, withEach bool) *Program {
	t.Helper()
	compile := env.Compile
	if withEach {
		compile = env.CompileEach
	}
	p, err := compile(expr, KindValue, "test")
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return p
}
