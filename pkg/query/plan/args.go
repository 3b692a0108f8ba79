package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
)

// splitArgs reads the resource arguments of a query as kubectl get reads
// them: TYPE[,TYPE...] lists every object of each type; TYPE[,TYPE...]
// NAME... names objects, each of every type; TYPE/NAME... names objects
// of types that may differ. It returns the resource types, one argument
// each, and the names of each (nil when none are named: then types are
// the arguments as given). Mistakes are worded as kubectl words them.
func splitArgs(args []string) (types []string, names [][]string, err error) {
	slashes := 0
	for _, a := range args {
		if strings.Contains(a, "/") {
			slashes++
		}
	}
	switch {
	case slashes > 0 && slashes != len(args):
		return nil, nil, errors.New("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl informer query resource/<resource_name>' instead of 'kubectl informer query resource resource/<resource_name>')")
	case slashes > 0:
		at := map[string]int{}
		for _, a := range args {
			parts := strings.Split(a, "/")
			if len(parts) != 2 {
				return nil, nil, errors.New("arguments in resource/name form may not have more than one slash")
			}
			typ, name := strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1])
			if typ == "" || name == "" || strings.Contains(typ, ",") {
				return nil, nil, errors.New("arguments in resource/name form must have a single resource and name")
			}
			i, ok := at[typ]
			if !ok {
				i = len(types)
				at[typ] = i
				types, names = append(types, typ), append(names, nil)
			}
			names[i] = appendNew(names[i], name)
		}
		return types, names, nil
	case len(args) > 1:
		var named []string
		for _, n := range args[1:] {
			if n = strings.TrimSpace(n); n == "" {
				return nil, nil, errors.New("an object name must not be empty")
			}
			named = appendNew(named, n)
		}
		return args[:1], [][]string{named}, nil
	}
	return args, nil, nil
}

// appendNew appends s to list unless list holds it already.
func appendNew(list []string, s string) []string {
	for _, have := range list {
		if have == s {
			return list
		}
	}
	return append(list, s)
}

// Missing is a named object that the cache does not hold.
type Missing struct {
	// Resource is the resource type, such as pods or deployments.apps.
	Resource schema.GroupResource
	// Name is the object's name, as given.
	Name string
}

// NotFoundError reports the named objects that do not exist, one line
// each, in kubectl get's words:
//
//	Error from server (NotFound): pods "web-9" not found
//
// The objects that do exist have been printed.
type NotFoundError struct {
	Missing []Missing
}

// Error returns one line per missing object.
func (e *NotFoundError) Error() string {
	lines := make([]string, len(e.Missing))
	for i, m := range e.Missing {
		lines[i] = fmt.Sprintf("Error from server (NotFound): %s %q not found", m.Resource, m.Name)
	}
	return strings.Join(lines, "\n")
}

// positions returns the place of each named object among those the
// arguments name, in kubectl get's order: TYPE/NAME arguments in the order
// given; TYPE[,TYPE...] NAME... type by type, then name by name. nil when
// no object is named.
func (p *Plan) positions(r *factory.Resolver, named map[schema.GroupVersionResource][]string) map[schema.GroupVersionResource]map[string]int {
	if p.objects == nil {
		return nil
	}
	out := map[schema.GroupVersionResource]map[string]int{}
	set := func(gvr schema.GroupVersionResource, name string, at int) {
		if out[gvr] == nil {
			out[gvr] = map[string]int{}
		}
		if _, ok := out[gvr][name]; !ok {
			out[gvr][name] = at
		}
	}
	if strings.Contains(p.req.Resources[0], "/") {
		for i, arg := range p.req.Resources {
			typ, name, _ := strings.Cut(arg, "/")
			resources, err := r.Resolve([]string{strings.TrimSpace(typ)})
			if err != nil {
				continue
			}
			for _, res := range resources {
				set(res.GVR, strings.TrimSpace(name), i)
			}
		}
		return out
	}
	resources, err := r.Resolve(p.types)
	if err != nil {
		return nil
	}
	for i, res := range resources {
		for j, name := range named[res.GVR] {
			set(res.GVR, name, i*len(named[res.GVR])+j)
		}
	}
	return out
}

// namedOrder orders refs, items of results (the answers for infs), by the
// positions of their objects among those named (see positions), in
// reverse with descending.
func namedOrder(refs []query.ItemRef, results []*query.Result, infs []*factory.Informer, positions map[schema.GroupVersionResource]map[string]int, descending bool) []query.ItemRef {
	at := func(ref query.ItemRef) int {
		m, err := meta.Accessor(results[ref.Result].Items[ref.Item].Object)
		if err != nil {
			return 0
		}
		return positions[infs[ref.Result].Resource.GVR][m.GetName()]
	}
	slices.SortStableFunc(refs, func(a, b query.ItemRef) int {
		if descending {
			return at(b) - at(a)
		}
		return at(a) - at(b)
	})
	return refs
}

// NamesObjects reports whether resource arguments name objects (TYPE NAME,
// TYPE/NAME) rather than only resource types.
func NamesObjects(args []string) bool {
	_, objects, err := splitArgs(args)
	return err == nil && objects != nil
}
