package exporter

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
)

// TestShardOfStatefulSet checks the shard a pod of a StatefulSet takes:
// its ordinal, of as many shards as the StatefulSet has replicas.
func TestShardOfStatefulSet(t *testing.T) {
	ss := func(name string, replicas *int32) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.StatefulSetSpec{Replicas: replicas}}
	}
	for _, tc := range []struct {
		ss   *appsv1.StatefulSet
		pod  string
		want Shard
		err  bool
	}{
		{ss("ksm", ptr.To[int32](3)), "ksm-2", Shard{Index: 2, Total: 3}, false},
		{ss("ksm", nil), "ksm-0", Shard{Index: 0, Total: 1}, false},
		{ss("kube-state-metrics", ptr.To[int32](2)), "kube-state-metrics-1", Shard{Index: 1, Total: 2}, false},
		{ss("ksm", ptr.To[int32](2)), "other-1", Shard{}, true},
		{ss("ksm", ptr.To[int32](2)), "ksm-x", Shard{}, true},
	} {
		got, err := shardOfStatefulSet(tc.ss, tc.pod)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%s of %s: %+v, %v; want %+v (error: %v)", tc.pod, tc.ss.Name, got, err, tc.want, tc.err)
		}
	}
}

// TestPodNodeSelector checks that --node and --track-unscheduled-pods
// select core/v1 pods only, beside the entry's own field selector.
func TestPodNodeSelector(t *testing.T) {
	pods := factory.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true}
	metricsPods := factory.Resource{GVR: schema.GroupVersionResource{Group: "metrics.k8s.io", Version: "v1beta1", Resource: "pods"}, Namespaced: true}
	deployments := factory.Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespaced: true}
	for _, tc := range []struct {
		opts Options
		res  factory.Resource
		sel  string
		want string
	}{
		{Options{}, pods, "", ""},
		{Options{Node: "n1"}, pods, "", "spec.nodeName=n1"},
		{Options{Node: "n1"}, pods, "metadata.namespace!=x", "metadata.namespace!=x,spec.nodeName=n1"},
		{Options{UnscheduledPods: true}, pods, "", "spec.nodeName="},
		{Options{Node: "n1", UnscheduledPods: true}, pods, "", "spec.nodeName="},
		{Options{Node: "n1"}, deployments, "a=b", "a=b"},
		{Options{Node: "n1"}, metricsPods, "", ""},
	} {
		x := &Exporter{opts: tc.opts}
		if got := x.podNodeSelector(tc.res, tc.sel); got != tc.want {
			t.Errorf("%+v on %s with %q: %q, want %q", tc.opts, tc.res.GVR, tc.sel, got, tc.want)
		}
	}
}
