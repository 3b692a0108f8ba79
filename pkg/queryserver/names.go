package queryserver

import (
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
)

// maxCachedNames bounds the resource type names a nameCache keeps: the
// spellings of the types a server serves are few, and a name beyond it is
// resolved each time it is used.
const maxCachedNames = 1024

// nameCache keeps what single resource type names ("po", "pods",
// "deployments.apps", "all") resolve to: only names that resolve, each
// at most MaxNameLength long, at most maxCachedNames of them. A resource
// argument ("pods,,nodes") is split into its names before the cache is
// read, so that the spellings of one list of types are not kept apart.
type nameCache struct {
	resolver factory.NameResolver
	// full, when not nil, is called once, the first time a name that
	// resolves finds no room; set before the cache is used.
	full     func()
	fullOnce sync.Once
	// mu guards byName.
	mu     sync.Mutex
	byName map[string][]factory.Resource
}

func newNameCache(r factory.NameResolver) *nameCache {
	return &nameCache{resolver: r, byName: map[string][]factory.Resource{}}
}

// resolve resolves one resource argument (a comma-separated list of type
// names) as factory.Resolver.Resolve does: duplicates dropped, order kept,
// its errors.
func (c *nameCache) resolve(arg string) ([]factory.Resource, error) {
	var out []factory.Resource
	seen := sets.New[schema.GroupVersionResource]()
	for name := range strings.SplitSeq(arg, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		res, err := c.resolveName(name)
		if err != nil {
			return nil, err
		}
		for _, r := range res {
			if !seen.Has(r.GVR) {
				seen.Insert(r.GVR)
				out = append(out, r)
			}
		}
	}
	if len(out) == 0 {
		// No name at all: the resolver's own error.
		return c.resolver.Resolve([]string{arg})
	}
	return out, nil
}

// resolveName resolves one type name, from the cache when it is there.
func (c *nameCache) resolveName(name string) ([]factory.Resource, error) {
	c.mu.Lock()
	res, ok := c.byName[name]
	c.mu.Unlock()
	if ok {
		return res, nil
	}
	res, err := c.resolver.Resolve([]string{name})
	if err != nil {
		return nil, err
	}
	if len(name) <= MaxNameLength {
		c.mu.Lock()
		kept := len(c.byName) < maxCachedNames
		if kept {
			c.byName[name] = res
		}
		c.mu.Unlock()
		if !kept && c.full != nil {
			c.fullOnce.Do(c.full)
		}
	}
	return res, nil
}

// len returns the number of names kept.
func (c *nameCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byName)
}
