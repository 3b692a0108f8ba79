package plan

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
)

// checkSchema checks progs again against the OpenAPI v3 schema of res, as
// Kubernetes checks ValidatingAdmissionPolicy expressions: a misspelled
// field or a --where that is not bool is refused instead of silently
// matching nothing. The other resources of set are those the expressions
// are evaluated on too: what an expression reads only where it exists
// (guarded by object.kind, or in .?field and has()) is accepted (see
// indexers.Env.CheckWithSchema). A resource that publishes no schema is
// skipped: its expressions were checked dynamically.
func (p *Plan) checkSchema(set *schemaSet, res factory.Resource, progs []*indexers.Program) error {
	if len(progs) == 0 {
		return nil
	}
	schema := set.schema(res)
	if schema == nil {
		return nil
	}
	return CheckSchema(p.env, schema, res, len(set.all) > 1, progs, set.others(res))
}

// CheckSchema checks progs again with env against schema, the schema of
// res, others being the schemas of the other resources they are evaluated
// on; the errors, prefixed with res when name is true, are a *query.UsageError.
func CheckSchema(env *indexers.Env, schema *spec.Schema, res factory.Resource, name bool, progs []*indexers.Program, others []*spec.Schema) error {
	var errs []error
	for _, prog := range progs {
		if _, err := env.CheckWithSchema(prog.Expr(), prog.Kind(), prog.Context(), false, schema, others...); err != nil {
			if name {
				err = fmt.Errorf("for %s: %w", res, err)
			}
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return &query.UsageError{Err: errors.Join(errs...)}
	}
	return nil
}

// schemaSet holds the OpenAPI schemas of the resources the same
// expressions are evaluated on, each resolved once, when first needed.
type schemaSet struct {
	schemas *indexers.Schemas
	all     []factory.Resource
	// resolved holds the schemas resolved so far; nil for a resource that
	// publishes none.
	resolved map[schema.GroupVersionKind]*spec.Schema
}

func newSchemaSet(r *factory.Resolver, all []factory.Resource) *schemaSet {
	return &schemaSet{schemas: indexers.NewSchemas(r.Discovery()), all: all, resolved: map[schema.GroupVersionKind]*spec.Schema{}}
}

// schemaSetOf is newSchemaSet for the resources of infs.
func schemaSetOf(r *factory.Resolver, infs []*factory.Informer) *schemaSet {
	all := make([]factory.Resource, len(infs))
	for i, inf := range infs {
		all[i] = inf.Resource
	}
	return newSchemaSet(r, all)
}

// schema returns the schema of res; nil when it has none or it cannot be
// read.
func (s *schemaSet) schema(res factory.Resource) *spec.Schema {
	if sch, ok := s.resolved[res.GVK]; ok {
		return sch
	}
	sch, err := s.schemas.Resolve(res.GVK)
	if err != nil {
		sch = nil
	}
	s.resolved[res.GVK] = sch
	return sch
}

// others returns the schemas of the resources of s other than res.
func (s *schemaSet) others(res factory.Resource) []*spec.Schema {
	var out []*spec.Schema
	for _, o := range s.all {
		if o.GVK == res.GVK {
			continue
		}
		if sch := s.schema(o); sch != nil {
			out = append(out, sch)
		}
	}
	return out
}
