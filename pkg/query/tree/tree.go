// Package tree prints an object and the objects it owns, down the chain of
// owner references, as kubectl-tree does, from informer caches: the
// dependents of each object are read from an index of every searched
// resource by the UIDs of their owners, never by scanning.
package tree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
)

// DefaultResources are the resources searched for dependents unless
// Request.Resources says otherwise: the workloads and what their
// controllers create (ReplicaSets, pods, ControllerRevisions, Jobs), and
// the objects other controllers own (EndpointSlices of Services, Services
// and PersistentVolumeClaims some operators and StatefulSets own).
// ConfigMaps and Secrets are left out: caching them costs memory and
// Secrets hold data; name them with Request.Include.
var DefaultResources = []string{
	"deployments.apps", "replicasets.apps", "statefulsets.apps", "daemonsets.apps",
	"controllerrevisions.apps", "cronjobs.batch", "jobs.batch", "pods",
	"services", "endpointslices.discovery.k8s.io", "persistentvolumeclaims",
}

// OwnerIndex is the index of every searched resource by the UIDs of the
// objects in its owner references.
const OwnerIndex = "@owner"

// Request is what to print.
type Request struct {
	// Resource is the type of the roots, as written (TYPE).
	Resource string
	// Names are the roots' names; none: every object of Resource in the
	// namespace (in every namespace for Namespace "").
	Names []string
	// Namespace is where the roots are and the dependents are searched;
	// "" for every namespace.
	Namespace string
	// Resources replace DefaultResources when not empty; Include adds to
	// them.
	Resources []string
	Include   []string
	// Watch prints the trees again on every change.
	Watch       bool
	SyncTimeout time.Duration
	// Now is the time ages are computed against; nil: time.Now.
	Now func() time.Time
}

// Node is an object of a tree and its dependents.
type Node struct {
	Kind      string
	Namespace string
	Name      string
	// Ready and Reason are those of the Ready condition, or what the
	// object's status says (see Readiness); Ready is "-" when nothing
	// does.
	Ready, Reason string
	Created       time.Time
	Children      []*Node
}

// Run fills the caches of the roots' resource and of the searched ones,
// prints the trees, and with Watch prints them again after every change
// until ctx ends.
func Run(ctx context.Context, conn plan.Conn, req Request, out io.Writer) error {
	now := req.Now
	if now == nil {
		now = time.Now
	}
	root, err := resolve(conn.Resolver, req.Resource)
	if err != nil {
		return err
	}
	if root.Namespaced && req.Namespace == "" && len(req.Names) > 0 {
		// As kubectl get NAME -A.
		return &query.UsageError{Err: errors.New("a resource cannot be retrieved by name across all namespaces")}
	}
	names := req.Resources
	if len(names) == 0 {
		names = DefaultResources
	}
	names = append(append([]string{}, names...), req.Include...)
	f, err := factory.New(conn.Config, factory.Config{KubectlFlags: conn.KubectlFlags})
	if err != nil {
		return err
	}
	scope := factory.Scope{Namespace: req.Namespace}
	needs := factory.Needs{Mode: factory.ModeFull, Indexers: cache.Indexers{OwnerIndex: ownerUIDs}}
	rootInf, err := f.Request(root, scopeOf(root, scope), needs)
	if err != nil {
		return err
	}
	searched := []*factory.Informer{rootInf}
	for _, n := range names {
		res, err := resolve(conn.Resolver, n)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(searched, func(i *factory.Informer) bool { return i.Resource.GVR == res.GVR }) {
			continue
		}
		inf, err := f.Request(res, scopeOf(res, scope), needs)
		if err != nil {
			return err
		}
		searched = append(searched, inf)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := f.Start(runCtx); err != nil {
		return err
	}
	changed := make(chan struct{}, 1)
	if req.Watch {
		signal := func() {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
		h := cache.ResourceEventHandlerFuncs{AddFunc: func(any) { signal() }, UpdateFunc: func(any, any) { signal() }, DeleteFunc: func(any) { signal() }}
		for _, inf := range searched {
			if _, err := inf.Informer.AddEventHandler(h); err != nil {
				return err
			}
		}
	}
	timeout := req.SyncTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	if err := f.WaitForSync(ctx, timeout, true, nil); err != nil {
		return err
	}
	// render prints the trees; what kubectl get would say of the names
	// not found is returned as a *plan.NotFoundError.
	render := func() (string, error) {
		roots, missing, err := Roots(rootInf, req.Namespace, req.Names)
		if err != nil {
			return "", err
		}
		var b bytes.Buffer
		if len(roots) > 0 {
			var trees []*Node
			for _, r := range roots {
				trees = append(trees, Build(r, rootInf.Resource, searched))
			}
			if err := Print(&b, trees, now()); err != nil {
				return "", err
			}
		}
		if len(missing) > 0 {
			return b.String(), &plan.NotFoundError{Missing: missing}
		}
		return b.String(), nil
	}
	text, err := render()
	if _, werr := io.WriteString(out, text); werr != nil {
		return werr
	}
	if err != nil || !req.Watch {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
		next, err := render()
		if err != nil {
			next += err.Error() + "\n"
		}
		if next == text {
			continue
		}
		text = next
		if _, err := io.WriteString(out, "\n"+text); err != nil {
			return err
		}
	}
}

// resolve resolves name as kubectl does; a resource the server does not
// have is a *query.UsageError.
func resolve(r *factory.Resolver, name string) (factory.Resource, error) {
	res, err := r.ResolveOne(name)
	if err != nil && factory.IsUnknownResource(err) {
		return res, &query.UsageError{Err: err}
	}
	return res, err
}

// scopeOf is scope for a namespaced resource, every object of a
// cluster-scoped one.
func scopeOf(res factory.Resource, scope factory.Scope) factory.Scope {
	if !res.Namespaced {
		return factory.Scope{}
	}
	return scope
}

// ownerUIDs is the index function of OwnerIndex.
func ownerUIDs(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil
	}
	refs := m.GetOwnerReferences()
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		out = append(out, string(r.UID))
	}
	return out, nil
}

// Roots returns the objects named (every object, by namespace and name,
// when none is) and the names that are not cached.
func Roots(inf *factory.Informer, namespace string, names []string) ([]any, []plan.Missing, error) {
	store := inf.Informer.GetIndexer()
	if len(names) == 0 {
		objs := store.List()
		sort.Slice(objs, func(i, j int) bool { return key(objs[i]) < key(objs[j]) })
		return objs, nil, nil
	}
	var out []any
	var missing []plan.Missing
	for _, n := range names {
		k := n
		if inf.Resource.Namespaced && namespace != "" {
			k = namespace + "/" + n
		}
		obj, found, err := store.GetByKey(k)
		if err != nil {
			return nil, nil, err
		}
		if !found {
			missing = append(missing, plan.Missing{Resource: inf.Resource.GVR.GroupResource(), Name: n})
			continue
		}
		out = append(out, obj)
	}
	return out, missing, nil
}

func key(obj any) string {
	k, _ := cache.MetaNamespaceKeyFunc(obj)
	return k
}

// maxDepth bounds a tree, so that a cycle of owner references ends.
const maxDepth = 32

// Build returns the tree of obj, of resource res: its dependents in
// searched, found through their OwnerIndex, each with its own.
func Build(obj any, res factory.Resource, searched []*factory.Informer) *Node {
	return build(obj, res, searched, map[string]bool{}, 0)
}

func build(obj any, res factory.Resource, searched []*factory.Informer, seen map[string]bool, depth int) *Node {
	n := node(obj, res)
	m, err := meta.Accessor(obj)
	if err != nil {
		return n
	}
	uid := string(m.GetUID())
	if seen[uid] || depth >= maxDepth {
		return n
	}
	seen[uid] = true
	for _, inf := range searched {
		deps, err := inf.Informer.GetIndexer().ByIndex(OwnerIndex, uid)
		if err != nil {
			continue
		}
		for _, d := range deps {
			n.Children = append(n.Children, build(d, inf.Resource, searched, seen, depth+1))
		}
	}
	sort.SliceStable(n.Children, func(i, j int) bool {
		a, b := n.Children[i], n.Children[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return n
}

// node is the Node of obj, without children.
func node(obj any, res factory.Resource) *Node {
	n := &Node{Kind: res.GVK.Kind, Ready: "-"}
	if m, err := meta.Accessor(obj); err == nil {
		n.Namespace, n.Name, n.Created = m.GetNamespace(), m.GetName(), m.GetCreationTimestamp().Time
	}
	n.Ready, n.Reason = Readiness(asMap(obj))
	return n
}

// asMap returns the JSON map of obj.
func asMap(obj any) map[string]any {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return o.Object
	case runtime.Object:
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err == nil {
			return m
		}
	}
	return nil
}

// Readiness returns READY and REASON of an object: the status and reason
// of its Ready condition; without one, for an object with replicas (a
// Deployment, ReplicaSet, StatefulSet), "True" when status.readyReplicas
// reaches spec.replicas and "False" otherwise, with REASON the count
// ("1/2 ready"); "-" and "" when neither says.
func Readiness(obj map[string]any) (ready, reason string) {
	conds, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, c := range conds {
		cm, ok := c.(map[string]any)
		if !ok || cm["type"] != "Ready" {
			continue
		}
		s, _ := cm["status"].(string)
		r, _ := cm["reason"].(string)
		return s, r
	}
	want, found, err := unstructured.NestedFieldNoCopy(obj, "spec", "replicas")
	if !found || err != nil {
		return "-", ""
	}
	wantN, ok := number(want)
	if !ok {
		return "-", ""
	}
	got, _, _ := unstructured.NestedFieldNoCopy(obj, "status", "readyReplicas")
	gotN, _ := number(got)
	if gotN >= wantN {
		return "True", ""
	}
	return "False", fmt.Sprintf("%d/%d ready", gotN, wantN)
}

func number(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case int:
		return int64(n), true
	case float64:
		return int64(n), true
	}
	return 0, false
}

// Print writes trees as kubectl-tree does: NAMESPACE, NAME (KIND/NAME,
// each dependent under its owner with ├─ and └─), READY, REASON and AGE.
func Print(w io.Writer, trees []*Node, now time.Time) error {
	tw := printers.GetNewTabWriter(w)
	_, _ = fmt.Fprintln(tw, "NAMESPACE\tNAME\tREADY\tREASON\tAGE")
	var walk func(n *Node, prefix, childPrefix string)
	walk = func(n *Node, prefix, childPrefix string) {
		age := "<unknown>"
		if !n.Created.IsZero() {
			age = duration.HumanDuration(now.Sub(n.Created))
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s%s/%s\t%s\t%s\t%s\n", n.Namespace, prefix, n.Kind, n.Name, n.Ready, n.Reason, age)
		for i, c := range n.Children {
			if i == len(n.Children)-1 {
				walk(c, childPrefix+"└─", childPrefix+"  ")
			} else {
				walk(c, childPrefix+"├─", childPrefix+"│ ")
			}
		}
	}
	for _, t := range trees {
		walk(t, "", "")
	}
	return tw.Flush()
}
