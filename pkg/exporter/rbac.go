package exporter

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
)

// rbacVerbs are the verbs the exporter needs on every resource it reads: it
// lists and watches each one into an informer cache, and never gets,
// creates or changes anything.
var rbacVerbs = []string{"list", "watch"}

// rbacLabels are the labels of the objects RBAC returns.
var rbacLabels = map[string]string{"app.kubernetes.io/name": "kubectl-informer"}

// RBACOptions name the objects RBAC returns.
type RBACOptions struct {
	// Name is the name of the ServiceAccount and of every role and binding.
	Name string
	// Namespace is the ServiceAccount's namespace.
	Namespace string
}

// Validate checks that the names are valid for the objects they name.
func (o RBACOptions) Validate() error {
	var errs []error
	if o.Name == "" {
		errs = append(errs, errors.New("no name for the ServiceAccount, roles and bindings"))
	} else if msgs := validation.IsDNS1123Subdomain(o.Name); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("name %q: %s", o.Name, strings.Join(msgs, "; ")))
	}
	if o.Namespace == "" {
		errs = append(errs, errors.New("no namespace for the ServiceAccount"))
	} else if msgs := validation.IsDNS1123Label(o.Namespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("namespace %q: %s", o.Namespace, strings.Join(msgs, "; ")))
	}
	return errors.Join(errs...)
}

// RBACObjects grant an exporter's ServiceAccount list and watch on what its
// config reads, and nothing else.
//
// A resource that the exporter watches in every namespace and a
// cluster-scoped resource are granted by the ClusterRole. A namespaced
// resource that the config watches only in some namespaces is granted by a
// Role in each of those namespaces instead, so that the ServiceAccount
// cannot read it anywhere else: a resource of an entry with namespaces
// (its own, or those of DefaultNamespace), and a resource read with get()
// or byIndex() whose every reader is such an entry — it is read in the
// namespaces of the entries that read it and of its own entry.
type RBACObjects struct {
	ServiceAccount *corev1.ServiceAccount
	// ClusterRole and ClusterRoleBinding are nil when every resource is
	// granted by Roles.
	ClusterRole        *rbacv1.ClusterRole
	ClusterRoleBinding *rbacv1.ClusterRoleBinding
	// Roles and RoleBindings, one of each per namespace, sorted by
	// namespace.
	Roles        []*rbacv1.Role
	RoleBindings []*rbacv1.RoleBinding
}

// Objects returns the objects in the order they can be applied: the
// ServiceAccount, the ClusterRole and its binding, then each namespace's
// Role and RoleBinding.
func (o *RBACObjects) Objects() []runtime.Object {
	out := []runtime.Object{o.ServiceAccount}
	if o.ClusterRole != nil {
		out = append(out, o.ClusterRole, o.ClusterRoleBinding)
	}
	for i := range o.Roles {
		out = append(out, o.Roles[i], o.RoleBindings[i])
	}
	return out
}

// WriteYAML writes the objects as YAML documents separated by "---", as
// kubectl apply -f reads them.
func (o *RBACObjects) WriteYAML(w io.Writer) error {
	p := &printers.YAMLPrinter{}
	for _, obj := range o.Objects() {
		if err := p.PrintObj(obj, w); err != nil {
			return err
		}
	}
	return nil
}

// resourceResolver resolves resource names as kubectl does;
// *factory.Resolver is one.
type resourceResolver interface {
	Resolve(args []string) ([]factory.Resource, error)
}

// RBACResourceNames returns the names of the resources an exporter of c
// reads, as the config writes them: those of its entries and those its
// expressions read with get() and byIndex(). Sorted, without duplicates.
func RBACResourceNames(c *Compiled) []string {
	set := sets.New[string]()
	for _, r := range c.Resources {
		set.Insert(r.Config.Resource)
		for _, p := range programsOf(r) {
			for _, ref := range p.References() {
				set.Insert(ref.Resource)
			}
		}
	}
	return sets.List(set)
}

// ResolveRBACResources resolves every name of RBACResourceNames(c) through
// the API server's discovery, as the exporter does when it starts: each
// name must name exactly one resource type. A server that cannot be
// reached is one error, the *factory.ServerError of the first name.
func ResolveRBACResources(c *Compiled, resolver resourceResolver) (map[string]factory.Resource, error) {
	out := map[string]factory.Resource{}
	var errs []error
	for _, name := range RBACResourceNames(c) {
		res, err := factory.ResolveOne(resolver, name)
		var serverErr *factory.ServerError
		if errors.As(err, &serverErr) {
			// The same for every resource, and not the config's.
			return nil, err
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: resource %q: %w", c.Path, name, err))
			continue
		}
		out[name] = res
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// RBAC returns least-privilege RBAC for an exporter of c running as the
// ServiceAccount opts names: list and watch on each resource it reads (see
// RBACObjects for where). resolved maps every name of RBACResourceNames(c)
// to its resource, as ResolveRBACResources returns it. Rules hold one API
// group each, sorted by group, with their resources sorted. The result
// depends only on its arguments.
func RBAC(c *Compiled, resolved map[string]factory.Resource, opts RBACOptions) (*RBACObjects, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	resource := func(name string) (factory.Resource, error) {
		res, ok := resolved[name]
		if !ok {
			return factory.Resource{}, fmt.Errorf("%s: resource %q was not resolved", c.Path, name)
		}
		return res, nil
	}
	// Every namespace: the resources read cluster-wide. Per namespace: the
	// namespaced resources watched only there.
	cluster := sets.New[schema.GroupResource]()
	namespaced := map[schema.GroupResource]sets.Set[string]{}
	grant := func(res factory.Resource, namespaces []string) {
		gr := res.GVR.GroupResource()
		if !res.Namespaced || len(namespaces) == 0 {
			cluster.Insert(gr)
			return
		}
		if namespaced[gr] == nil {
			namespaced[gr] = sets.New[string]()
		}
		for _, ns := range namespaces {
			namespaced[gr].Insert(ns)
		}
	}
	entries := make([]factory.Resource, len(c.Resources))
	looked := map[string]factory.Resource{}
	for i, r := range c.Resources {
		res, err := resource(r.Config.Resource)
		if err != nil {
			return nil, err
		}
		entries[i] = res
		grant(res, r.Config.Namespaces)
		for _, p := range programsOf(r) {
			for _, ref := range p.References() {
				if looked[ref.Resource], err = resource(ref.Resource); err != nil {
					return nil, err
				}
			}
		}
	}
	for name, namespaces := range lookupNamespaces(c, entries, looked) {
		grant(looked[name], namespaces)
	}
	perNamespace := map[string]sets.Set[schema.GroupResource]{}
	for gr, nss := range namespaced {
		if cluster.Has(gr) {
			continue // granted everywhere already
		}
		for ns := range nss {
			if perNamespace[ns] == nil {
				perNamespace[ns] = sets.New[schema.GroupResource]()
			}
			perNamespace[ns].Insert(gr)
		}
	}

	subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: opts.Name, Namespace: opts.Namespace}
	meta := func(namespace string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: opts.Name, Namespace: namespace, Labels: maps.Clone(rbacLabels)}
	}
	out := &RBACObjects{
		ServiceAccount: &corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: meta(opts.Namespace),
		},
	}
	if len(cluster) > 0 {
		out.ClusterRole = &rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
			ObjectMeta: meta(""),
			Rules:      rbacRules(cluster),
		}
		out.ClusterRoleBinding = &rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
			ObjectMeta: meta(""),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: opts.Name},
			Subjects:   []rbacv1.Subject{subject},
		}
	}
	for _, ns := range slices.Sorted(maps.Keys(perNamespace)) {
		out.Roles = append(out.Roles, &rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
			ObjectMeta: meta(ns),
			Rules:      rbacRules(perNamespace[ns]),
		})
		out.RoleBindings = append(out.RoleBindings, &rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
			ObjectMeta: meta(ns),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: opts.Name},
			Subjects:   []rbacv1.Subject{subject},
		})
	}
	return out, nil
}

// rbacRules returns one rule per API group, sorted by group, granting
// rbacVerbs on the group's resources, sorted.
func rbacRules(resources sets.Set[schema.GroupResource]) []rbacv1.PolicyRule {
	byGroup := map[string][]string{}
	for gr := range resources {
		byGroup[gr.Group] = append(byGroup[gr.Group], gr.Resource)
	}
	var rules []rbacv1.PolicyRule
	for _, group := range slices.Sorted(maps.Keys(byGroup)) {
		rules = append(rules, rbacv1.PolicyRule{
			APIGroups: []string{group},
			Resources: slices.Sorted(slices.Values(byGroup[group])),
			Verbs:     slices.Clone(rbacVerbs),
		})
	}
	return rules
}
