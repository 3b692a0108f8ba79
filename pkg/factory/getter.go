package factory

import (
	"fmt"

	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// NewResolverFor returns a Resolver using the RESTMapper and discovery client
// of a RESTClientGetter (kubectl's ConfigFlags), so short names, categories
// and CRDs resolve as they do for kubectl, with the same discovery cache.
func NewResolverFor(getter genericclioptions.RESTClientGetter) (*Resolver, error) {
	mapper, err := getter.ToRESTMapper()
	if err != nil {
		return nil, discoveryError(fmt.Errorf("building the REST mapper: %w", err))
	}
	dc, err := getter.ToDiscoveryClient()
	if err != nil {
		return nil, discoveryError(fmt.Errorf("building the discovery client: %w", err))
	}
	return NewResolver(mapper, dc), nil
}
