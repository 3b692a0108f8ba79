package factory

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"

	"github.com/kubectl-informer/kubectl-informer/internal/suggest"
)

// Resource is a resource type resolved against the cluster's discovery data.
type Resource struct {
	// Arg is the name the user gave ("po", "deployments.apps", a category
	// member carries the category's name).
	Arg string
	// GVR and GVK identify the resource at its preferred version.
	GVR schema.GroupVersionResource
	GVK schema.GroupVersionKind
	// Namespaced is false for cluster-scoped resources such as nodes.
	Namespaced bool
}

// String returns resource.group as kubectl prints it ("pods", "deployments.apps").
func (r Resource) String() string { return r.GVR.GroupResource().String() }

// Resolver maps resource arguments to Resources exactly as kubectl get does.
type Resolver struct {
	mapper    meta.RESTMapper
	discovery discovery.DiscoveryInterface
	// lists reads discovery's resource lists for categories and
	// suggestions, at most once per listsTTL.
	lists *memoLists
	// categories expands "all" and CRD categories; nil disables categories.
	categories restmapper.CategoryExpander
}

// listsTTL is how long discovery's resource lists are reused to expand
// categories and suggest names: a name that is not a resource type costs
// no more than a lookup in them, however many are asked.
const listsTTL = 30 * time.Second

// memoLists is a discovery client whose ServerGroupsAndResources is read
// at most once per listsTTL (once at a time), and otherwise answered from
// the last read.
type memoLists struct {
	discovery.DiscoveryInterface
	// mu guards at, groups, lists and err, and is held while they are read.
	mu     sync.Mutex
	at     time.Time
	groups []*metav1.APIGroup
	lists  []*metav1.APIResourceList
	err    error
}

func (m *memoLists) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.at.IsZero() || time.Since(m.at) >= listsTTL {
		m.groups, m.lists, m.err = m.DiscoveryInterface.ServerGroupsAndResources()
		m.at = time.Now()
	}
	return m.groups, m.lists, m.err
}

// NewResolver returns a Resolver over a RESTMapper (with short names
// expanded, as genericclioptions.ConfigFlags.ToRESTMapper returns) and the
// discovery client it was built from.
func NewResolver(mapper meta.RESTMapper, dc discovery.DiscoveryInterface) *Resolver {
	lists := &memoLists{DiscoveryInterface: dc}
	return &Resolver{mapper: mapper, discovery: dc, lists: lists, categories: restmapper.NewDiscoveryCategoryExpander(lists)}
}

// Discovery returns the discovery client the Resolver reads.
func (r *Resolver) Discovery() discovery.DiscoveryInterface { return r.discovery }

// Resolve maps every argument to its resources: each argument may be a
// comma-separated list of plural, singular or short names, resource.group,
// resource.version.group, Kind, or a category ("all", a CRD's category).
// Duplicates are dropped, order is kept. An unknown name fails with kubectl's
// wording and, where a known name is close, a suggestion.
func (r *Resolver) Resolve(args []string) ([]Resource, error) {
	var out []Resource
	seen := sets.New[schema.GroupVersionResource]()
	add := func(res Resource) {
		if !seen.Has(res.GVR) {
			seen.Insert(res.GVR)
			out = append(out, res)
		}
	}
	for _, arg := range args {
		for _, name := range strings.Split(arg, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				// "pods," or ",pods": kubectl's words for the empty type.
				return nil, &unknownResourceError{msg: `the server doesn't have a resource type ""`, bare: true}
			}
			res, err := r.resolveOne(name)
			if err == nil {
				add(res)
				continue
			}
			if !meta.IsNoMatchError(err) && !isUnknownResource(err) {
				return nil, err
			}
			if members, ok := r.expandCategory(name); ok {
				for _, m := range members {
					add(m)
				}
				continue
			}
			return nil, r.withSuggestion(err, name)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("you must specify the type of resource to query, e.g. pods, deployments.apps, nodes")
	}
	return out, nil
}

// NameResolver resolves resource names as kubectl does; *Resolver is one.
type NameResolver interface {
	Resolve(args []string) ([]Resource, error)
}

// ResolveOne resolves name with r to exactly one resource: a name that
// stands for several (a category such as "all") is an error.
func ResolveOne(r NameResolver, name string) (Resource, error) {
	res, err := r.Resolve([]string{name})
	if err != nil {
		return Resource{}, err
	}
	if len(res) != 1 {
		return Resource{}, fmt.Errorf("names %d resource types; name one", len(res))
	}
	return res[0], nil
}

// ResolveOne resolves name to exactly one resource (see ResolveOne).
func (r *Resolver) ResolveOne(name string) (Resource, error) { return ResolveOne(r, name) }

// resolveOne is kubectl's Builder.mappingFor.
func (r *Resolver) resolveOne(arg string) (Resource, error) {
	fullGVR, gr := schema.ParseResourceArg(arg)
	var gvk schema.GroupVersionKind
	if fullGVR != nil {
		gvk, _ = r.mapper.KindFor(*fullGVR)
	}
	if gvk.Empty() {
		var err error
		if gvk, err = r.mapper.KindFor(gr.WithVersion("")); err != nil && !meta.IsNoMatchError(err) {
			return Resource{}, discoveryError(err)
		}
	}
	if !gvk.Empty() {
		m, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return Resource{}, discoveryError(err)
		}
		return fromMapping(arg, m), nil
	}
	fullGVK, gk := schema.ParseKindArg(arg)
	if fullGVK == nil {
		g := gk.WithVersion("")
		fullGVK = &g
	}
	if !fullGVK.Empty() {
		if m, err := r.mapper.RESTMapping(fullGVK.GroupKind(), fullGVK.Version); err == nil {
			return fromMapping(arg, m), nil
		}
	}
	m, err := r.mapper.RESTMapping(gk)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return Resource{}, r.unknownResource(gr, fullGVR)
		}
		return Resource{}, discoveryError(err)
	}
	return fromMapping(arg, m), nil
}

func (r *Resolver) expandCategory(name string) ([]Resource, bool) {
	if r.categories == nil || strings.Contains(name, ".") {
		return nil, false
	}
	grs, ok := r.categories.Expand(name)
	if !ok || len(grs) == 0 {
		return nil, false
	}
	var out []Resource
	for _, gr := range grs {
		res, err := r.resolveOne(gr.String())
		if err != nil {
			continue
		}
		res.Arg = name
		out = append(out, res)
	}
	return out, len(out) > 0
}

func fromMapping(arg string, m *meta.RESTMapping) Resource {
	return Resource{
		Arg:        arg,
		GVR:        m.Resource,
		GVK:        m.GroupVersionKind,
		Namespaced: m.Scope.Name() == meta.RESTScopeNameNamespace,
	}
}

// unknownResourceError is kubectl's "the server doesn't have a resource type".
type unknownResourceError struct {
	msg        string
	suggestion string
	// bare: kubectl's message alone, without a suggestion or a hint.
	bare bool
}

func (e *unknownResourceError) Error() string {
	if e.bare {
		return e.msg
	}
	if e.suggestion != "" {
		return fmt.Sprintf("%s; did you mean %q? (kubectl api-resources lists them all)", e.msg, e.suggestion)
	}
	return e.msg + " (kubectl api-resources lists the resource types the server has)"
}

func isUnknownResource(err error) bool {
	var u *unknownResourceError
	return errors.As(err, &u)
}

// IsUnknownResource reports whether err says a resource type does not exist.
func IsUnknownResource(err error) bool { return isUnknownResource(err) }

// unknownResource is the error for a name that matched no resource type.
// RESOURCE.VERSION.GROUP of a resource that GROUP serves in other versions
// only names the version the server does not serve, and suggests the
// versions it serves; otherwise the last dotted parts are the group.
func (r *Resolver) unknownResource(gr schema.GroupResource, gvr *schema.GroupVersionResource) error {
	if gvr != nil && gvr.Group != "" {
		if served, err := r.mapper.ResourcesFor(gvr.GroupResource().WithVersion("")); err == nil && len(served) > 0 {
			return &unknownResourceError{
				msg:        fmt.Sprintf("the server doesn't have a resource type %q in group %q and version %q", gvr.Resource, gvr.Group, gvr.Version),
				suggestion: served[0].Resource + "." + served[0].Version + "." + served[0].Group,
			}
		}
	}
	msg := fmt.Sprintf("the server doesn't have a resource type %q", gr.Resource)
	if gr.Group != "" {
		msg = fmt.Sprintf("the server doesn't have a resource type %q in group %q", gr.Resource, gr.Group)
	}
	return &unknownResourceError{msg: msg}
}

// maxSuggestionCandidates bounds the names an unknown name is compared
// with, the preferred first.
const maxSuggestionCandidates = 4096

// withSuggestion adds the closest known resource name to an unknown-resource error.
func (r *Resolver) withSuggestion(err error, name string) error {
	var u *unknownResourceError
	if !errors.As(err, &u) || u.bare || u.suggestion != "" {
		return err
	}
	_, lists, _ := r.lists.ServerGroupsAndResources()
	// Plural names win ties over singular and short names.
	rank := map[string]int{}
	note := func(name string, r int) {
		if old, ok := rank[name]; !ok || r < old {
			rank[name] = r
		}
	}
	for _, l := range lists {
		for _, res := range l.APIResources {
			if strings.Contains(res.Name, "/") {
				continue
			}
			note(res.Name, 0)
			if res.SingularName != "" {
				note(res.SingularName, 1)
			}
			for _, s := range res.ShortNames {
				note(s, 2)
			}
		}
	}
	names := make([]string, 0, len(rank))
	for c := range rank {
		names = append(names, c)
	}
	sort.Slice(names, func(i, j int) bool {
		if rank[names[i]] != rank[names[j]] {
			return rank[names[i]] < rank[names[j]]
		}
		return names[i] < names[j]
	})
	names = slices.DeleteFunc(names, func(c string) bool { return len(c) <= 2 }) // short names suggest too much
	names = names[:min(len(names), maxSuggestionCandidates)]
	first := strings.SplitN(name, ".", 2)[0]
	if _, known := rank[first]; known {
		// The type exists in another group: naming itself again helps no one.
		return u
	}
	best, _ := suggest.Closest(first, names)
	u.suggestion = best
	return u
}

// ServerError wraps a failure to reach or read from the API server with a
// message that names the fix.
type ServerError struct{ Err error }

func (e *ServerError) Error() string {
	return fmt.Sprintf("%v\nthe API server could not be reached: check that the cluster is running and that the kubeconfig and its context point at it", e.Err)
}
func (e *ServerError) Unwrap() error { return e.Err }

// discoveryError wraps errors that mean the server is unreachable, or that
// it did not accept the credentials.
func discoveryError(err error) error {
	if apierrors.IsUnauthorized(err) {
		return fmt.Errorf("%w\nthe server did not accept your credentials (401 Unauthorized): log in again or check the kubeconfig, its context and user", err)
	}
	var ne net.Error
	var ue *url.Error
	if errors.As(err, &ne) || errors.As(err, &ue) || errors.Is(err, syscall.ECONNREFUSED) {
		return &ServerError{Err: err}
	}
	return err
}
