package factory

import (
	"bytes"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

func wireFixtures() []runtime.Object {
	created := metav1.Date(2026, 1, 2, 3, 4, 5, 0, metav1.Now().Location())
	meta := metav1.ObjectMeta{
		Name: "web-0", Namespace: "shop", UID: "0b6f4f4e-1", ResourceVersion: "42", Generation: 3,
		CreationTimestamp: created,
		Labels:            map[string]string{"app": "web", "tier": "front"},
		Annotations:       map[string]string{LastAppliedAnnotation: `{"a":1}`, "note": "x"},
		OwnerReferences:   []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d", UID: "rs-1", Controller: ptr.To(true)}},
		Finalizers:        []string{"example.com/f"},
		ManagedFields: []metav1.ManagedFieldsEntry{{
			Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", Time: &created,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{}}}`),
		}},
	}
	container := corev1.Container{
		Name: "web", Image: "nginx:1.27", Command: []string{"nginx"}, Args: []string{"-g", "daemon off;"},
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
		Env:   []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
		},
		LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}, PeriodSeconds: 10},
	}
	sidecar := container
	sidecar.Name = "sidecar"
	pod := &corev1.Pod{
		ObjectMeta: meta,
		Spec: corev1.PodSpec{
			NodeName: "node-1", HostNetwork: true, PriorityClassName: "high", ServiceAccountName: "web",
			Containers:      []corev1.Container{container, sidecar},
			Volumes:         []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}}},
			SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsNonRoot: ptr.To(true)},
			Tolerations:     []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}},
			}}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, HostIP: "10.0.0.1", PodIP: "10.1.0.7", PodIPs: []corev1.PodIP{{IP: "10.1.0.7"}},
			StartTime:  &created,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: created}},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "web", Ready: true, RestartCount: 3, Image: "nginx:1.27", ImageID: "sha256:abc", ContainerID: "containerd://1",
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: created}}},
			},
		},
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-1", UID: "pv-uid", Labels: map[string]string{"zone": "a"}, ManagedFields: meta.ManagedFields},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: "h-1", FSType: "ext4"}},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			ClaimRef:               &corev1.ObjectReference{Namespace: "shop", Name: "data"},
			StorageClassName:       "fast",
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10", Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	deploy := &appsv1.Deployment{
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: pod.Spec},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromString("25%"))}},
		},
		Status: appsv1.DeploymentStatus{Replicas: 3, ReadyReplicas: 2, Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}},
	}
	pod2 := pod.DeepCopy()
	pod2.Name, pod2.Status.Phase = "web-1", corev1.PodPending
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "99", Continue: "c"}, Items: []corev1.Pod{*pod, *pod2}}
	return []runtime.Object{pod, pv, svc, deploy, list}
}

// memberPaths lists every JSON member path of obj down to depth members,
// going on into the elements of lists through jsonval.Elements (the
// members of every element), the length of each list of objects (its
// elements' member ""), and each object's members counted (its member
// Elements, then "").
func memberPaths(t *testing.T, obj runtime.Object, depth int) [][]string {
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var out [][]string
	add := func(p []string) {
		if k := strings.Join(p, "\x00"); !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	var walk func(v any, prefix []string, members int)
	walk = func(v any, prefix []string, members int) {
		switch v := v.(type) {
		case map[string]any:
			if members == depth {
				return
			}
			if len(prefix) > 0 {
				// Its members iterated over, or counted.
				add(append(slices.Clip(prefix), jsonval.Elements, ""))
			}
			for _, k := range slices.Sorted(maps.Keys(v)) {
				p := append(slices.Clip(prefix), k)
				add(p)
				walk(v[k], p, members+1)
			}
		case []any:
			elems := append(slices.Clip(prefix), jsonval.Elements)
			for _, e := range v {
				if _, ok := e.(map[string]any); ok {
					add(append(slices.Clip(elems), ""))
				}
				walk(e, elems, members)
			}
		}
	}
	walk(m, nil, 0)
	return out
}

var protoSerializer = protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)

func encodeProto(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := protoSerializer.Encode(obj, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// decodePrepared decodes data with dec and prepares the object (or each
// item of a list) as an informer does.
func decodePrepared(t *testing.T, dec runtime.Decoder, data []byte, fields *jsonval.Paths, trim bool) runtime.Object {
	t.Helper()
	obj, _, err := dec.Decode(data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	prepare := prepareFunc(fields, trim, true)
	if prepare == nil {
		return obj
	}
	if l, ok := obj.(*corev1.PodList); ok {
		for i := range l.Items {
			prepare(&l.Items[i])
		}
		return obj
	}
	prepare(obj)
	return obj
}

// TestWirePruneEquivalent checks that an object decoded from its pruned
// encoding and then prepared equals the object decoded whole and
// prepared, for random sets of kept paths.
func TestWirePruneEquivalent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // G404: seeded test data, not a secret
	shrunk := 0
	for _, obj := range wireFixtures() {
		gvks, _, err := scheme.Scheme.ObjectKinds(obj)
		if err != nil {
			t.Fatal(err)
		}
		gvk := gvks[0]
		item := obj
		if l, ok := obj.(*corev1.PodList); ok {
			gvk = gvk.GroupVersion().WithKind("Pod")
			item = &l.Items[0]
		}
		obj.GetObjectKind().SetGroupVersionKind(gvks[0])
		data := encodeProto(t, obj)
		all := memberPaths(t, item, 4)
		for round := range 300 {
			trim := round%3 != 0
			var fields *jsonval.Paths
			if round%10 != 9 {
				fields = alwaysKept()
				for _, p := range all {
					if rng.IntN(6) == 0 {
						fields.Add(p)
					}
				}
			}
			wire := newWirePruner(gvk, fields, trim)
			if wire == nil {
				if trim {
					t.Fatalf("%s: no pruner for %s with managedFields dropped", gvk, fields)
				}
				continue // every field kept
			}
			var buf []byte
			if len(wire.prune(data, &buf)) < len(data) {
				shrunk++
			}
			want := decodePrepared(t, protoSerializer, data, fields, trim)
			got := decodePrepared(t, pruningDecoder{Serializer: protoSerializer, pruner: wire}, data, fields, trim)
			if !reflect.DeepEqual(got, want) {
				gotJSON, _ := json.Marshal(got)
				wantJSON, _ := json.Marshal(want)
				t.Fatalf("%s kept %s, trim %v:\n got %s\nwant %s", gvk.Kind, fields, trim, gotJSON, wantJSON)
			}
			// What the pruner keeps is exactly what Prune keeps: objects
			// decoded from pruned encodings need only trimming.
			got = decodePrepared(t, pruningDecoder{Serializer: protoSerializer, pruner: wire}, data, nil, trim)
			if !reflect.DeepEqual(got, want) {
				gotJSON, _ := json.Marshal(got)
				wantJSON, _ := json.Marshal(want)
				t.Fatalf("%s kept %s, trim %v, without Prune:\n got %s\nwant %s", gvk.Kind, fields, trim, gotJSON, wantJSON)
			}
		}
	}
	if shrunk < 1000 {
		t.Errorf("only %d of 1500 encodings were pruned at all", shrunk)
	}
}

// TestWirePruneShrinks checks that what the exporter's pod metrics read
// leaves little of a pod to decode, and that other kinds pass unchanged.
func TestWirePruneShrinks(t *testing.T) {
	pod := wireFixtures()[0]
	pod.GetObjectKind().SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	data := encodeProto(t, pod)
	fields := alwaysKept()
	for _, p := range [][]string{{"spec", "nodeName"}, {"status", "phase"}, {"status", "containerStatuses"}} {
		fields.Add(p)
	}
	wire := newWirePruner(corev1.SchemeGroupVersion.WithKind("Pod"), fields, true)
	if !wire.exact {
		t.Errorf("a Pod pruner is not exact")
	}
	var buf []byte
	pruned := wire.prune(data, &buf)
	if len(pruned)*2 > len(data) {
		t.Errorf("pruned encoding is %d bytes of %d; want under half", len(pruned), len(data))
	}
	if bytes.Contains(pruned, []byte("nginx")) && !bytes.Contains(pruned, []byte("nginx:1.27")) {
		t.Errorf("unexpected bytes kept")
	}
	if bytes.Contains(pruned, []byte("f:metadata")) {
		t.Errorf("managedFields kept in %q", pruned)
	}
	if bytes.Contains(pruned, []byte("/healthz")) {
		t.Errorf("container probes kept in %q", pruned)
	}

	svc := wireFixtures()[2]
	svc.GetObjectKind().SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Service"))
	other := encodeProto(t, svc)
	if got := wire.prune(other, &buf); !bytes.Equal(got, other) {
		t.Errorf("a Service's encoding was changed by a Pod pruner")
	}
	for _, bad := range [][]byte{nil, []byte("k8s"), append(append([]byte(nil), protobufPrefix...), 0xff), data[:len(data)-3]} {
		if got := wire.prune(bad, &buf); !bytes.Equal(got, bad) {
			t.Errorf("prune(%q) = %q; want it unchanged", bad, got)
		}
	}
	if newWirePruner(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, fields, true) != nil {
		t.Errorf("a pruner for a kind the scheme does not know")
	}
	if newWirePruner(corev1.SchemeGroupVersion.WithKind("Pod"), nil, false) != nil {
		t.Errorf("a pruner that keeps everything")
	}
}

// BenchmarkDecodePod decodes a pod and prepares it as an informer does for
// the pod metrics of examples/kube-state-metrics-pods.yaml: whole and then
// pruned, or pruned before decoding.
func BenchmarkDecodePod(b *testing.B) {
	pod := wireFixtures()[0]
	pod.GetObjectKind().SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	var buf bytes.Buffer
	if err := protoSerializer.Encode(pod, &buf); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	fields := alwaysKept()
	for _, p := range [][]string{{"spec", "nodeName"}, {"spec", "hostNetwork"}, {"spec", "priorityClassName"},
		{"status", "phase"}, {"status", "hostIP"}, {"status", "podIP"}, {"status", "containerStatuses"}} {
		fields.Add(p)
	}
	wire := newWirePruner(corev1.SchemeGroupVersion.WithKind("Pod"), fields, true)
	run := func(b *testing.B, dec runtime.Decoder, prepare func(runtime.Object)) {
		b.ReportAllocs()
		for b.Loop() {
			obj, _, err := dec.Decode(data, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			prepare(obj)
		}
	}
	b.Run("whole", func(b *testing.B) { run(b, protoSerializer, prepareFunc(fields, true, true)) })
	b.Run("pruned", func(b *testing.B) {
		run(b, pruningDecoder{Serializer: protoSerializer, pruner: wire}, prepareFunc(nil, true, true))
	})
}
