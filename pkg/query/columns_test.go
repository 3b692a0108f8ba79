package query

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// statusPod is a pod of the STATUS rules: containers named c0…, init
// containers i0…; edit fills its status.
func statusPod(name string, containers, initContainers int, edit func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		TypeMeta:   podTypeMeta,
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, CreationTimestamp: ago(time.Hour)},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}
	for i := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "c" + string(rune('0'+i))})
	}
	for i := range initContainers {
		p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: "i" + string(rune('0'+i))})
	}
	if edit != nil {
		edit(p)
	}
	return p
}

func waiting(reason string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
}

func exited(code int32, signal int32, reason string) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Signal: signal, Reason: reason}}
}

var runningState = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}

// TestPodColumns checks READY, STATUS and RESTARTS against the API
// server's rules, one pod per rule.
func TestPodColumns(t *testing.T) {
	deleted := metav1.NewTime(now)
	restartedAt := ago(5 * time.Minute)
	objs := []any{
		statusPod("a-pending", 2, 0, nil),
		statusPod("b-gated", 1, 0, func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}}
		}),
		statusPod("c-init-progress", 1, 3, func(p *corev1.Pod) {
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "i0", State: exited(0, 0, "Completed")}, {Name: "i1", State: runningState}, {Name: "i2"}}
		}),
		statusPod("d-init-error", 1, 1, func(p *corev1.Pod) {
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "i0", State: exited(1, 0, "Error"), RestartCount: 2,
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: restartedAt}}}}
		}),
		statusPod("e-init-exit", 1, 1, func(p *corev1.Pod) {
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "i0", State: exited(3, 0, "")}}
		}),
		statusPod("f-init-signal", 1, 1, func(p *corev1.Pod) {
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "i0", State: exited(137, 9, "")}}
		}),
		statusPod("g-init-backoff", 1, 1, func(p *corev1.Pod) {
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "i0", State: waiting("CrashLoopBackOff")}}
		}),
		statusPod("h-crashloop", 2, 0, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{
				{Name: "c0", State: waiting("CrashLoopBackOff"), RestartCount: 4,
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: restartedAt}}},
				{Name: "c1", State: runningState, Ready: true, RestartCount: 1},
			}
		}),
		statusPod("i-completed-running", 2, 0, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", State: exited(0, 0, "Completed")}, {Name: "c1", State: runningState, Ready: true}}
		}),
		statusPod("j-completed-notready", 2, 0, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", State: exited(0, 0, "Completed")}, {Name: "c1", State: runningState, Ready: true}}
		}),
		statusPod("k-completed-error", 2, 0, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", State: exited(0, 0, "Completed")}, {Name: "c1", State: exited(2, 0, "OOMKilled")}}
		}),
		statusPod("l-signal", 1, 0, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", State: exited(143, 15, "")}}
		}),
		statusPod("m-evicted", 1, 0, func(p *corev1.Pod) { p.Status.Phase, p.Status.Reason = corev1.PodFailed, "Evicted" }),
		statusPod("n-terminating", 1, 0, func(p *corev1.Pod) {
			p.DeletionTimestamp = &deleted
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", State: runningState, Ready: true}}
		}),
		statusPod("o-nodelost", 1, 0, func(p *corev1.Pod) {
			p.DeletionTimestamp = &deleted
			p.Status.Phase, p.Status.Reason = corev1.PodRunning, "NodeLost"
		}),
		statusPod("p-deleted-succeeded", 1, 0, func(p *corev1.Pod) {
			p.DeletionTimestamp = &deleted
			p.Status.Phase = corev1.PodSucceeded
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", State: exited(0, 0, "Completed")}}
		}),
		statusPod("q-sidecar", 1, 2, func(p *corev1.Pod) {
			always := corev1.ContainerRestartPolicyAlways
			p.Spec.InitContainers[1].RestartPolicy = &always
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}}
			started := true
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{
				{Name: "i0", State: exited(0, 0, "Completed"), RestartCount: 7},
				{Name: "i1", State: runningState, Started: &started, Ready: true, RestartCount: 2,
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: ago(3 * time.Hour)}}},
			}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", State: runningState, Ready: true}}
		}),
	}
	printCase{
		name: "pod states",
		objs: objs,
		opts: PrintOptions{Namespace: "default"},
		want: `NAME                   READY   STATUS                  RESTARTS     AGE
a-pending              0/2     Pending                 0            60m
b-gated                0/1     SchedulingGated         0            60m
c-init-progress        0/1     Init:1/3                0            60m
d-init-error           0/1     Init:Error              2 (5m ago)   60m
e-init-exit            0/1     Init:ExitCode:3         0            60m
f-init-signal          0/1     Init:Signal:9           0            60m
g-init-backoff         0/1     Init:CrashLoopBackOff   0            60m
h-crashloop            1/2     CrashLoopBackOff        5 (5m ago)   60m
i-completed-running    1/2     Running                 0            60m
j-completed-notready   1/2     NotReady                0            60m
k-completed-error      0/2     OOMKilled               0            60m
l-signal               0/1     Signal:15               0            60m
m-evicted              0/1     Evicted                 0            60m
n-terminating          1/1     Terminating             0            60m
o-nodelost             0/1     Unknown                 0            60m
p-deleted-succeeded    0/1     Completed               0            60m
q-sidecar              2/2     Running                 2 (3h ago)   60m
`,
	}.run(t)
}

// TestPodWideColumns checks the columns -o wide adds for pods: kubectl's,
// without the indexes the pods have.
func TestPodWideColumns(t *testing.T) {
	p := statusPod("web-0", 1, 0, func(p *corev1.Pod) {
		p.Spec.NodeName = "n1"
		p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "a"}, {ConditionType: "b"}}
		p.Status.Phase = corev1.PodRunning
		p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.7"}, {IP: "fd00::7"}}
		p.Status.Conditions = []corev1.PodCondition{{Type: "a", Status: corev1.ConditionTrue}, {Type: "b", Status: corev1.ConditionFalse}}
	})
	q := statusPod("web-1", 1, 0, func(p *corev1.Pod) { p.Status.NominatedNodeName = "n2" })
	printCase{
		name:   "wide",
		objs:   []any{p, q},
		output: "wide",
		opts:   PrintOptions{Namespace: "default"},
		want: `NAME    READY   STATUS    RESTARTS   AGE   IP         NODE     NOMINATED NODE   READINESS GATES
web-0   0/1     Running   0          60m   10.0.0.7   n1       <none>           1/2
web-1   0/1     Pending   0          60m   <none>     <none>   n2               <none>
`,
	}.run(t)
}

// TestCustomColumns checks a CRD's printer columns: the value of each type,
// missing values and values of another type (empty cells), a date printed
// as an age, a priority 1 column shown by -o wide only.
func TestCustomColumns(t *testing.T) {
	full := widget("default", "w1", "blue", time.Hour)
	full.Object["spec"] = map[string]any{"color": "blue", "size": int64(3), "ratio": 0.5, "on": true, "since": ago(48 * time.Hour).UTC().Format(time.RFC3339),
		"tags": []any{"a", "b"}, "owner": map[string]any{"name": "team-a"}}
	sparse := widget("default", "w2", "", 2*time.Hour)
	sparse.Object["spec"] = map[string]any{"size": "big", "on": "yes", "since": "yesterday"}
	columns := []PrinterColumn{
		{Name: "Color", Type: "string", JSONPath: ".spec.color"},
		{Name: "Size", Type: "integer", JSONPath: ".spec.size"},
		{Name: "Ratio", Type: "number", JSONPath: ".spec.ratio"},
		{Name: "On", Type: "boolean", JSONPath: ".spec.on"},
		{Name: "Since", Type: "date", JSONPath: ".spec.since"},
		{Name: "Tags", Type: "string", JSONPath: ".spec.tags"},
		{Name: "Owner", Type: "string", JSONPath: ".spec.owner.name", Priority: 1},
	}
	printCase{
		name: "default",
		objs: []any{full, sparse},
		opts: PrintOptions{Namespace: "default", Columns: columns},
		want: "NAME   COLOR   SIZE   RATIO   ON     SINCE       TAGS\n" +
			"w1     blue    3      0.5     true   2d          [\"a\",\"b\"]\n" +
			"w2                                   <invalid>   \n",
	}.run(t)
	printCase{
		name:   "wide",
		objs:   []any{full, sparse},
		output: "wide",
		opts:   PrintOptions{Namespace: "default", Columns: columns},
		want: "NAME   COLOR   SIZE   RATIO   ON     SINCE       TAGS        OWNER\n" +
			"w1     blue    3      0.5     true   2d          [\"a\",\"b\"]   team-a\n" +
			"w2                                   <invalid>               \n",
	}.run(t)
}

func TestCustomColumnsBadJSONPath(t *testing.T) {
	_, err := NewPrinter("", PrintOptions{Columns: []PrinterColumn{{Name: "Bad", Type: "string", JSONPath: ".spec[?(@.x"}}})
	if err == nil || !strings.Contains(err.Error(), `printer column "Bad"`) {
		t.Errorf("error %v, want one naming the column", err)
	}
}

// TestPrintedFields checks the fields the planner keeps for tables: those
// the columns of the kind read, metadata only for kinds without columns.
func TestPrintedFields(t *testing.T) {
	tests := []struct {
		gk      schema.GroupKind
		columns []PrinterColumn
		want    string
	}{
		{gk: schema.GroupKind{Kind: "Pod"}, want: "spec.containers, spec.initContainers, spec.nodeName, spec.readinessGates, status"},
		{gk: schema.GroupKind{Kind: "ServiceAccount"}, want: ""},
		{gk: schema.GroupKind{Group: "example.com", Kind: "Widget"}, want: ""},
		{gk: schema.GroupKind{Group: "example.com", Kind: "Widget"},
			columns: []PrinterColumn{{JSONPath: ".spec.replicas"}, {JSONPath: ".status.parts[*].name"}, {JSONPath: `.metadata.labels.app\.kubernetes\.io/name`}},
			want:    "metadata.labels.app.kubernetes.io/name, spec.replicas, status.parts"},
		{gk: schema.GroupKind{Group: "example.com", Kind: "Widget"}, columns: []PrinterColumn{{JSONPath: "..name"}}, want: "<everything>"},
	}
	for _, tt := range tests {
		if got := PrintedFields(tt.gk, tt.columns).String(); got != tt.want {
			t.Errorf("PrintedFields(%v, %v) = %q, want %q", tt.gk, tt.columns, got, tt.want)
		}
	}
}

// TestColumnsOfUnstructuredObjects checks that a built-in kind held as an
// unstructured object prints the same columns as the typed object.
func TestColumnsOfUnstructuredObjects(t *testing.T) {
	p := testPods()[0]
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	if err != nil {
		t.Fatal(err)
	}
	typedCells, err := builtinColumns[schema.GroupKind{Kind: "Pod"}].cells(p, now)
	if err != nil {
		t.Fatal(err)
	}
	u := widget("", "", "", 0)
	u.Object = content
	cells, err := builtinColumns[schema.GroupKind{Kind: "Pod"}].cells(u, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != len(typedCells) || cells[1] != "0/2" || cells[3] != "3" {
		t.Errorf("cells %v, want %v", cells, typedCells)
	}
	for i := range cells {
		if cells[i] != typedCells[i] {
			t.Errorf("cell %d = %v, want %v", i, cells[i], typedCells[i])
		}
	}
}
