package exporter

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// currentShard returns the shard in force: Options.Shard, or the one
// AutoShard took from the StatefulSet last.
func (x *Exporter) currentShard() Shard {
	x.shardMu.RLock()
	defer x.shardMu.RUnlock()
	return x.shard
}

// setShard puts s in force and reports whether it changed.
func (x *Exporter) setShard(s Shard) bool {
	x.shardMu.Lock()
	defer x.shardMu.Unlock()
	changed := x.shard != s
	x.shard = s
	return changed
}

// detectShard finds the StatefulSet that controls the pod of
// Options.AutoShard and puts the shard it gives in force (see
// shardOfStatefulSet); it returns the StatefulSet's name. The pod must
// exist and a StatefulSet (apps/v1) be its controller, as
// kube-state-metrics requires.
func (x *Exporter) detectShard(ctx context.Context, client kubernetes.Interface) (string, error) {
	as := x.opts.AutoShard
	pod, err := client.CoreV1().Pods(as.Namespace).Get(ctx, as.Pod, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("automatic sharding: getting pod %q in namespace %q (--pod, --pod-namespace): %w", as.Pod, as.Namespace, err)
	}
	for _, o := range pod.OwnerReferences {
		if o.APIVersion != "apps/v1" || o.Kind != "StatefulSet" || o.Controller == nil || !*o.Controller {
			continue
		}
		ss, err := client.AppsV1().StatefulSets(as.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("automatic sharding: getting the StatefulSet %q of pod %q in namespace %q: %w", o.Name, as.Pod, as.Namespace, err)
		}
		s, err := shardOfStatefulSet(ss, as.Pod)
		if err != nil {
			return "", err
		}
		x.setShard(s)
		x.log.Info("automatic sharding: shard taken from the StatefulSet", "statefulset", as.Namespace+"/"+ss.Name, "pod", as.Pod, "shard", s.Index, "total_shards", s.Total)
		return ss.Name, nil
	}
	return "", fmt.Errorf("automatic sharding: pod %q in namespace %q is controlled by no StatefulSet (apps/v1): run it in one, or leave out --pod and --pod-namespace", as.Pod, as.Namespace)
}

// shardOfStatefulSet returns the shard of pod in ss, as kube-state-metrics
// computes it: the ordinal after the StatefulSet's name and a dash in the
// pod's name, of as many shards as ss has replicas (1 when unset).
func shardOfStatefulSet(ss *appsv1.StatefulSet, pod string) (Shard, error) {
	ordinal := strings.TrimPrefix(pod, ss.Name+"-")
	n, err := strconv.ParseInt(ordinal, 10, 32)
	if err != nil || n < 0 {
		return Shard{}, fmt.Errorf("automatic sharding: pod %q of StatefulSet %q has no ordinal after %q in its name", pod, ss.Name, ss.Name+"-")
	}
	total := 1
	if ss.Spec.Replicas != nil {
		total = int(*ss.Spec.Replicas)
	}
	return Shard{Index: int(n), Total: total}, nil
}

// watchShard watches the StatefulSet named name in the pod's namespace
// until ctx ends and, when its replicas change the shard, puts the new one
// in force and reloads the config with it: the caches stay; the series are
// computed again for the objects of the new shard. A shard that cannot be
// computed (the StatefulSet scaled to zero, say) is logged and the
// previous one kept, as it is when the reload fails.
func (x *Exporter) watchShard(ctx context.Context, client kubernetes.Interface, name string) error {
	ns := x.opts.AutoShard.Namespace
	lw := cache.NewFilteredListWatchFromClient(client.AppsV1().RESTClient(), "statefulsets", ns, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	})
	inf := cache.NewSharedIndexInformer(lw, &appsv1.StatefulSet{}, 0, cache.Indexers{})
	reshard := func(obj any) {
		ss, ok := obj.(*appsv1.StatefulSet)
		if !ok || ss.Name != name {
			return
		}
		s, err := shardOfStatefulSet(ss, x.opts.AutoShard.Pod)
		switch {
		case err != nil:
			x.log.Error("automatic sharding: the shard in force is kept", "err", err)
			return
		case s.Index >= s.Total:
			x.log.Error("automatic sharding: the pod's ordinal is not below the StatefulSet's replicas; the shard in force is kept",
				"statefulset", ns+"/"+name, "ordinal", s.Index, "replicas", s.Total)
			return
		}
		prev := x.currentShard()
		if !x.setShard(s) {
			return
		}
		x.log.Info("automatic sharding: the StatefulSet's replicas changed; reloading with the new shard", "statefulset", ns+"/"+name, "shard", s.Index, "total_shards", s.Total)
		if err := x.Reload(ctx); err != nil {
			// Logged and counted by Reload; the running config keeps
			// the shard it was loaded with, which stays the one in force.
			x.setShard(prev)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    reshard,
		UpdateFunc: func(_, obj any) { reshard(obj) },
	}); err != nil {
		return err
	}
	go inf.RunWithContext(ctx)
	return nil
}
