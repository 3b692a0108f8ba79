package workload

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Summary counts what Load created; objects that existed already are counted
// in Existing.
type Summary struct {
	Namespaces, Nodes, Deployments, Pods, CustomResources int
	// Controllers counts the objects of Spec.Controllers.
	Controllers int
	// Others counts the objects of Spec.Others.
	Others   int
	Existing int
	Elapsed  time.Duration
}

func (s Summary) String() string {
	return fmt.Sprintf("%d namespaces, %d nodes, %d deployments, %d pods, %d databases, %d other controllers, %d objects of other kinds created (%d existed) in %s",
		s.Namespaces, s.Nodes, s.Deployments, s.Pods, s.CustomResources, s.Controllers, s.Others, s.Existing, s.Elapsed.Round(time.Millisecond))
}

// Load creates the workload described by spec (defaults applied) through the
// API server that cfg points to, writing progress lines to log (may be nil).
func Load(ctx context.Context, cfg *rest.Config, spec Spec, log io.Writer) (Summary, error) {
	spec = spec.Default()
	if log == nil {
		log = io.Discard
	}
	start := time.Now()
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0 // the local API server is the limit
	// The API server warns of fields the workload sets on purpose
	// (spec.externalIPs, say).
	cfg.WarningHandler = rest.NoWarnings{}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return Summary{}, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return Summary{}, err
	}
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return Summary{}, err
	}
	var sum Summary
	var mu sync.Mutex // guards sum
	count := func(field *int, err error) error {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			*field++
		case apierrors.IsAlreadyExists(err):
			sum.Existing++
		default:
			return err
		}
		return nil
	}

	if err := ensureCRD(ctx, ext, DatabaseCRD()); err != nil {
		return sum, fmt.Errorf("installing the Database CRD: %w", err)
	}
	err = parallel(ctx, spec.Namespaces, spec.Concurrency, func(ctx context.Context, i int) error {
		_, err := cs.CoreV1().Namespaces().Create(ctx, spec.namespace(i), metav1.CreateOptions{})
		return count(&sum.Namespaces, err)
	})
	if err != nil {
		return sum, fmt.Errorf("creating namespaces: %w", err)
	}
	err = parallel(ctx, spec.Nodes, spec.Concurrency, func(ctx context.Context, i int) error {
		want := spec.node(i)
		err := createWithStatus(ctx, cs.CoreV1().Nodes(), want, func(got, want *corev1.Node) { got.Status = want.Status })
		return count(&sum.Nodes, err)
	})
	if err != nil {
		return sum, fmt.Errorf("creating nodes: %w", err)
	}
	_, _ = fmt.Fprintf(log, "workload: %d namespaces and %d nodes\n", spec.Namespaces, spec.Nodes)

	groups := spec.groups()
	readyPods := make([]int, len(groups)) // per group; each index written by one worker
	err = parallel(ctx, len(groups), spec.Concurrency, func(ctx context.Context, gi int) error {
		g := groups[gi]
		for i := g.first; i < g.first+g.count; i++ {
			pod, status, ready := spec.pod(g, i)
			err := createWithStatus(ctx, cs.CoreV1().Pods(g.namespace), pod, func(got, _ *corev1.Pod) { got.Status = status })
			if err := count(&sum.Pods, err); err != nil {
				return err
			}
			if ready {
				readyPods[gi]++
			}
		}
		want := spec.deployment(g, readyPods[gi])
		err := createWithStatus(ctx, cs.AppsV1().Deployments(g.namespace), want, func(got, want *appsv1.Deployment) { got.Status = want.Status })
		return count(&sum.Deployments, err)
	})
	if err != nil {
		return sum, fmt.Errorf("creating pods and deployments: %w", err)
	}
	_, _ = fmt.Fprintf(log, "workload: %d pods in %d deployments\n", spec.Pods, len(groups))

	err = parallel(ctx, spec.CustomResources, spec.Concurrency, func(ctx context.Context, i int) error {
		want := spec.database(i)
		ri := dyn.Resource(DatabaseResource).Namespace(want.GetNamespace())
		got, err := ri.Create(ctx, want, metav1.CreateOptions{})
		if err == nil {
			got.Object["status"] = want.Object["status"]
			_, err = ri.UpdateStatus(ctx, got, metav1.UpdateOptions{})
		}
		return count(&sum.CustomResources, err)
	})
	if err != nil {
		return sum, fmt.Errorf("creating databases: %w", err)
	}
	if spec.Controllers {
		if err := ensureRuntimeClass(ctx, cs); err != nil {
			return sum, fmt.Errorf("creating runtime class %q: %w", RuntimeClassName, err)
		}
		err = parallel(ctx, spec.Namespaces, spec.Concurrency, func(ctx context.Context, i int) error {
			return spec.loadControllers(ctx, cs, i, func(err error) error { return count(&sum.Controllers, err) })
		})
		if err != nil {
			return sum, fmt.Errorf("creating controllers: %w", err)
		}
		_, _ = fmt.Fprintf(log, "workload: %d other controllers\n", sum.Controllers)
	}
	if spec.Others {
		others := func(err error) error { return count(&sum.Others, err) }
		if err := spec.loadClusterOthers(ctx, cs, others); err != nil {
			return sum, fmt.Errorf("creating cluster objects: %w", err)
		}
		err = parallel(ctx, spec.Namespaces, spec.Concurrency, func(ctx context.Context, i int) error {
			return spec.loadOthers(ctx, cs, i, others)
		})
		if err != nil {
			return sum, fmt.Errorf("creating objects of other kinds: %w", err)
		}
		_, _ = fmt.Fprintf(log, "workload: %d objects of other kinds\n", sum.Others)
	}
	sum.Elapsed = time.Since(start)
	return sum, nil
}

// ensureCRD creates crd unless it exists and waits until it is established.
func ensureCRD(ctx context.Context, ext apiextensionsclient.Interface, crd *apiextensionsv1.CustomResourceDefinition) error {
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

// parallel calls fn for 0..n-1 on up to workers goroutines and returns the
// first error; after an error no new calls start.
func parallel(ctx context.Context, n, workers int, fn func(context.Context, int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(workers, 1))
	for i := range n {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return fn(gctx, i) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// PodPhases returns how many pods of the workload are in each phase, for tests
// that check answers against what was loaded.
func (s Spec) PodPhases() map[corev1.PodPhase]int {
	s = s.Default()
	out := map[corev1.PodPhase]int{}
	for _, g := range s.groups() {
		for i := g.first; i < g.first+g.count; i++ {
			_, st, _ := s.pod(g, i)
			out[st.Phase]++
		}
	}
	return out
}

// PodObjects returns the workload's pods as the API server would return them
// after Load: with their statuses, a UID and a resourceVersion, for
// benchmarks and tests that need realistic objects without a cluster.
func (s Spec) PodObjects() []*corev1.Pod {
	s = s.Default()
	var out []*corev1.Pod
	for _, g := range s.groups() {
		for i := g.first; i < g.first+g.count; i++ {
			pod, status, _ := s.pod(g, i)
			pod.Status = status
			pod.UID = types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i))
			pod.ResourceVersion = strconv.Itoa(1000 + i)
			pod.CreationTimestamp = metav1.NewTime(time.Unix(1_700_000_000, 0).UTC())
			out = append(out, pod)
		}
	}
	return out
}
