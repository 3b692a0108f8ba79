package indexers

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	labelselection "k8s.io/apimachinery/pkg/selection"
)

// The relationship functions read the objects related to an object from
// the informer caches, through the same [Lookup] as get() and byIndex():
//
//	owner(object)              the controlling owner, or null
//	owners(object)             the controller chain, direct owner first
//	children(object, RESOURCE) the objects of RESOURCE it controls
//	selected(object, RESOURCE) the objects of RESOURCE its selector selects
//	events(object)             the core/v1 Events about it
//
// Each reads by name or through an index, never by scanning a resource:
// children() reads the index [ControllerIndex] of RESOURCE, events() the
// index [InvolvedObjectIndex] of events, selected() the index [LabelIndex]
// of RESOURCE (or, for a selector no label value narrows, the objects of
// the object's namespace, [NamespaceIndex]). The plan of an expression
// adds those indexes ([BuiltinIndex]) to the resources read.
const (
	ownerFunction    = "owner"
	ownersFunction   = "owners"
	childrenFunction = "children"
	selectedFunction = "selected"
	eventsFunction   = "events"

	ownerOverload    = "owner_object"
	ownersOverload   = "owners_object"
	childrenOverload = "children_object_resource"
	selectedOverload = "selected_object_resource"
	eventsOverload   = "events_object"
)

// ControllerIndex is the built-in index of objects by the UID of their
// controller (the owner reference with controller: true), which
// children() reads.
const ControllerIndex = "@controller"

// InvolvedObjectIndex is the built-in index of core/v1 Events by the UID
// of their involvedObject, which events() reads.
const InvolvedObjectIndex = "@involvedObject"

// LabelIndex is the built-in index of objects by each of their labels, as
// NAMESPACE/KEY=VALUE (a cluster-scoped object's NAMESPACE is empty),
// which selected() reads.
const LabelIndex = "@label"

// EventsResource is the resource events() reads, as the lookup names it.
const EventsResource = "events"

// builtinIndexes are the expressions of the built-in indexes.
var builtinIndexes = map[string]string{
	ControllerIndex:     `object.metadata.?ownerReferences.orValue([]).filter(r, r.?controller.orValue(false)).map(r, r.uid)`,
	InvolvedObjectIndex: `object.?involvedObject.?uid`,
	LabelIndex:          `object.metadata.?labels.orValue({}).map(k, object.metadata.?namespace.orValue("") + "/" + k + "=" + object.metadata.labels[k])`,
}

// builtinValues compute the values of built-in indexes as their
// expressions do, without CEL: the label index is computed for every
// object of a resource selected() reads, a hundred thousand pods as well.
// ok is false for an object they do not read (no metadata), which the
// expression evaluates.
var builtinValues = map[string]func(obj any) (values []string, ok bool){
	LabelIndex: labelIndexValues,
}

// labelIndexValues are the values of [LabelIndex] of obj.
func labelIndexValues(obj any) ([]string, bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, false
	}
	labels := m.GetLabels()
	if len(labels) == 0 {
		return nil, true
	}
	ns := m.GetNamespace()
	out := make([]string, 0, len(labels))
	for k, v := range labels {
		out = append(out, LabelIndexValue(ns, k, v))
	}
	return out, true
}

// IsBuiltinIndex reports whether name is that of a built-in index.
func IsBuiltinIndex(name string) bool {
	_, ok := builtinIndexes[name]
	return ok
}

// BuiltinIndex compiles the built-in index name (see [ControllerIndex],
// [InvolvedObjectIndex] and [LabelIndex]); false when there is none of that name.
func (e *Env) BuiltinIndex(name string) (*Program, bool, error) {
	expr, ok := builtinIndexes[name]
	if !ok {
		return nil, false, nil
	}
	p, err := e.Compile(expr, KindIndex, fmt.Sprintf("index %q", name))
	if err == nil {
		p.values = builtinValues[name]
	}
	return p, true, err
}

// ownerKinds are the kinds owner() and owners() read, the controllers of
// Kubernetes' own workloads. An owner of another kind reads as null.
var ownerKinds = []schema.GroupKind{
	{Group: "apps", Kind: "Deployment"},
	{Group: "apps", Kind: "ReplicaSet"},
	{Group: "apps", Kind: "StatefulSet"},
	{Group: "apps", Kind: "DaemonSet"},
	{Group: "batch", Kind: "Job"},
	{Group: "batch", Kind: "CronJob"},
	{Group: "", Kind: "ReplicationController"},
}

// OwnerResources returns the resources owner() and owners() read, as the
// lookup names them: each owner kind's singular name and group
// ("replicaset.apps"), which the RESTMapper resolves.
func OwnerResources() []string {
	out := make([]string, len(ownerKinds))
	for i, gk := range ownerKinds {
		out[i] = ownerResource(gk.Group, gk.Kind)
	}
	return out
}

// ownerResource is the name the lookup reads the kind of group under.
func ownerResource(group, kind string) string {
	if group == "" {
		return strings.ToLower(kind)
	}
	return strings.ToLower(kind) + "." + group
}

// relationFunctions declares the relationship functions, bound late as
// get() and byIndex() are.
func relationFunctions() []cel.EnvOption {
	dyn, str, list := cel.DynType, cel.StringType, cel.ListType(cel.DynType)
	return []cel.EnvOption{
		cel.Function(ownerFunction, cel.Overload(ownerOverload, []*cel.Type{dyn}, dyn, cel.LateFunctionBinding())),
		cel.Function(ownersFunction, cel.Overload(ownersOverload, []*cel.Type{dyn}, list, cel.LateFunctionBinding())),
		cel.Function(childrenFunction, cel.Overload(childrenOverload, []*cel.Type{dyn, str}, list, cel.LateFunctionBinding())),
		cel.Function(selectedFunction, cel.Overload(selectedOverload, []*cel.Type{dyn, str}, list, cel.LateFunctionBinding())),
		cel.Function(eventsFunction, cel.Overload(eventsOverload, []*cel.Type{dyn}, list, cel.LateFunctionBinding())),
	}
}

// isRelationOverload reports whether id is an overload of a relationship
// function.
func isRelationOverload(id string) bool {
	switch id {
	case ownerOverload, ownersOverload, childrenOverload, selectedOverload, eventsOverload:
		return true
	}
	return false
}

// relationCallText is a call of the relationship function fn as messages
// show it: `owner()`, `children(…, "replicasets")`.
func relationCallText(fn, resource string) string {
	if resource == "" {
		return fn + "()"
	}
	return fmt.Sprintf("%s(…, %q)", fn, resource)
}

// relationReferences returns what a call of the relationship function fn
// reads: resource (as written) → index names. resource is the string
// literal of children() and selected(); "" for the others.
func relationReferences(fn, resource string) map[string][]string {
	switch fn {
	case ownerFunction, ownersFunction:
		out := map[string][]string{}
		for _, r := range OwnerResources() {
			out[r] = nil
		}
		return out
	case childrenFunction:
		return map[string][]string{resource: {ControllerIndex}}
	case selectedFunction:
		return map[string][]string{resource: {NamespaceIndex, LabelIndex}}
	case eventsFunction:
		return map[string][]string{EventsResource: {InvolvedObjectIndex}}
	}
	return nil
}

// ResourceScopes is implemented by a [Lookup] that tells whether it reads
// a resource and whether that resource is namespaced: owner() reads a
// cluster-scoped owner without a namespace, and an owner of a kind the
// lookup does not read as null.
type ResourceScopes interface {
	Scope(resource string) (namespaced, ok bool)
}

// NamespaceReader is implemented by a [Lookup] that reads a resource in
// some namespaces only: ReadsNamespace fails, as ByIndex of
// [NamespaceIndex] would, for a namespace where it does not read resource.
// selected() asks it before it reads [LabelIndex], whose values of an
// unread namespace hold nothing.
type NamespaceReader interface {
	ReadsNamespace(resource, namespace string) error
}

// relationCall is the evaluation step of a relationship function.
type relationCall struct {
	id       int64
	function string
	overload string
	args     []interpreter.InterpretableV2
	convert  Converter
}

var _ interpreter.InterpretableCall = (*relationCall)(nil)

// ID implements interpreter.Interpretable.
func (c *relationCall) ID() int64 { return c.id }

// Function implements interpreter.InterpretableCall.
func (c *relationCall) Function() string { return c.function }

// OverloadID implements interpreter.InterpretableCall.
func (c *relationCall) OverloadID() string { return c.overload }

// Args implements interpreter.InterpretableCall.
func (c *relationCall) Args() []interpreter.InterpretableV2 { return c.args }

// Eval implements interpreter.Interpretable.
func (c *relationCall) Eval(vars interpreter.Activation) ref.Val {
	return c.Exec(interpreter.AsFrame(vars))
}

// Exec implements interpreter.InterpretableV2.
func (c *relationCall) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	obj := c.args[0].Exec(frame)
	if types.IsUnknownOrError(obj) {
		return obj
	}
	if obj == types.NullValue {
		return types.NewErrWithNodeID(c.id, "%s(): the object is null", c.function)
	}
	resource := ""
	if len(c.args) > 1 {
		v := c.args[1].Exec(frame)
		if types.IsUnknownOrError(v) {
			return v
		}
		s, ok := v.(types.String)
		if !ok {
			return types.NewErrWithNodeID(c.id, "%s(): argument 2 must be a string but got %s", c.function, v.Type().TypeName())
		}
		resource = string(s)
	}
	l, _ := frame.ResolveName(lookupVar)
	lookup, _ := l.(Lookup)
	if lookup == nil {
		return types.NewErrWithNodeID(c.id, "%s() is not available: no lookup is bound to the program", c.function)
	}
	m, err := objectMeta(obj)
	if err != nil {
		return types.NewErrWithNodeID(c.id, "%s(): %w", c.function, err)
	}
	var found []any
	switch c.overload {
	case ownerOverload:
		o, err := ownerOf(lookup, m.Namespace, m.OwnerReferences)
		if err != nil {
			return types.NewErrWithNodeID(c.id, "owner(): %w", err)
		}
		if o == nil {
			return types.NullValue
		}
		return c.convert(o)
	case ownersOverload:
		found, err = ownerChain(lookup, m)
	case childrenOverload:
		found, err = controlledBy(lookup, resource, m)
	case selectedOverload:
		b, _ := frame.ResolveName(budgetVar)
		budget, _ := b.(*Budget)
		found, err = selectedBy(lookup, budget, resource, obj, m)
	default:
		found, err = eventsOf(lookup, m)
	}
	if err != nil {
		return types.NewErrWithNodeID(c.id, "%s(): %w", c.function, err)
	}
	vals := make([]ref.Val, len(found))
	for i, o := range found {
		v := c.convert(o)
		if types.IsError(v) {
			return v
		}
		vals[i] = v
	}
	return types.NewRefValList(types.DefaultTypeAdapter, vals)
}

// relMeta is what the relationship functions read of an object.
type relMeta struct {
	Kind            string
	Namespace       string
	UID             string
	OwnerReferences []metav1.OwnerReference
}

// objectMeta reads kind and metadata of the CEL value obj: straight from
// the Go object it presents when it is one (a JSON map, a typed API
// object), else through CEL.
func objectMeta(obj ref.Val) (relMeta, error) {
	var m relMeta
	var acc metav1.Object
	switch v := obj.Value().(type) {
	case map[string]any:
		u := &unstructured.Unstructured{Object: v}
		acc, m.Kind = u, u.GetKind()
	case metav1.Object:
		acc = v
		if o, ok := v.(runtime.Object); ok {
			m.Kind = o.GetObjectKind().GroupVersionKind().Kind
		}
	}
	if acc != nil {
		m.Namespace, m.UID, m.OwnerReferences = acc.GetNamespace(), string(acc.GetUID()), acc.GetOwnerReferences()
		if m.Kind == "" {
			if kind, ok := field(obj, "kind").(types.String); ok {
				m.Kind = string(kind)
			}
		}
		return m, nil
	}
	if kind, ok := field(obj, "kind").(types.String); ok {
		m.Kind = string(kind)
	}
	md := field(obj, "metadata")
	if md == nil {
		return m, fmt.Errorf("the argument is not an object: it has no metadata")
	}
	if ns, ok := field(md, "namespace").(types.String); ok {
		m.Namespace = string(ns)
	}
	if uid, ok := field(md, "uid").(types.String); ok {
		m.UID = string(uid)
	}
	if refs := field(md, "ownerReferences"); refs != nil {
		if err := fromNative(native(refs), &m.OwnerReferences); err != nil {
			return m, fmt.Errorf("reading metadata.ownerReferences: %w", err)
		}
	}
	return m, nil
}

// field returns the member name of the CEL map v, nil when v is no map or
// has no such member.
func field(v ref.Val, name string) ref.Val {
	mapper, ok := v.(traits.Mapper)
	if !ok {
		return nil
	}
	f, found := mapper.Find(types.String(name))
	if !found || types.IsUnknownOrError(f) {
		return nil
	}
	return f
}

// native turns a CEL value into the JSON value it stands for: maps,
// lists, strings, numbers, bools and null.
func native(v ref.Val) any {
	switch x := v.(type) {
	case nil:
		return nil
	case types.String:
		return string(x)
	case types.Int:
		return int64(x)
	case types.Uint:
		return uint64(x)
	case types.Double:
		return float64(x)
	case types.Bool:
		return bool(x)
	case types.Null:
		return nil
	case traits.Mapper:
		out := map[string]any{}
		for it := x.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			if s, ok := k.(types.String); ok {
				out[string(s)] = native(x.Get(k))
			}
		}
		return out
	case traits.Lister:
		var out []any
		for it := x.Iterator(); it.HasNext() == types.True; {
			out = append(out, native(it.Next()))
		}
		return out
	}
	if n, err := v.ConvertToNative(reflect.TypeFor[any]()); err == nil {
		return n
	}
	return v.Value()
}

// fromNative fills out (a pointer) from the JSON value v.
func fromNative(v any, out any) error {
	if v == nil {
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// controllerOf returns the owner reference with controller: true of refs.
func controllerOf(refs []metav1.OwnerReference) *metav1.OwnerReference {
	for i := range refs {
		if refs[i].Controller != nil && *refs[i].Controller {
			return &refs[i]
		}
	}
	return nil
}

// ownerOf returns the cached controller of an object of namespace with
// the owner references refs; nil when it has none, the lookup does not
// read its kind, or the cached object of that name is another (its UID
// differs).
func ownerOf(l Lookup, namespace string, refs []metav1.OwnerReference) (any, error) {
	c := controllerOf(refs)
	if c == nil {
		return nil, nil
	}
	gv, err := schema.ParseGroupVersion(c.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("owner reference %s/%s: %w", c.Kind, c.Name, err)
	}
	resource := ownerResource(gv.Group, c.Kind)
	ns := namespace
	if s, ok := l.(ResourceScopes); ok {
		namespaced, reads := s.Scope(resource)
		if !reads {
			return nil, nil
		}
		if !namespaced {
			ns = ""
		}
	}
	obj, found, err := l.Get(resource, ns, c.Name)
	if err != nil || !found {
		return nil, err
	}
	if m, err := meta.Accessor(obj); err != nil || string(m.GetUID()) != string(c.UID) {
		return nil, nil
	}
	return obj, nil
}

// maxOwnerDepth bounds the controller chain owners() follows, so that a
// cycle of owner references ends.
const maxOwnerDepth = 32

// ownerChain returns the controllers of the object m describes, from its
// own up to the root.
func ownerChain(l Lookup, m relMeta) ([]any, error) {
	var out []any
	seen := map[string]bool{m.UID: true}
	ns, refs := m.Namespace, m.OwnerReferences
	for range maxOwnerDepth {
		o, err := ownerOf(l, ns, refs)
		if err != nil || o == nil {
			return out, err
		}
		om, err := meta.Accessor(o)
		if err != nil || seen[string(om.GetUID())] {
			return out, nil
		}
		seen[string(om.GetUID())] = true
		out = append(out, o)
		ns, refs = om.GetNamespace(), om.GetOwnerReferences()
	}
	return out, nil
}

// controlledBy returns the objects of resource that the object m describes
// controls, by namespace and name.
func controlledBy(l Lookup, resource string, m relMeta) ([]any, error) {
	if m.UID == "" {
		return nil, nil
	}
	objs, err := l.ByIndex(resource, ControllerIndex, m.UID)
	if err != nil {
		return nil, err
	}
	sortByName(objs)
	return objs, nil
}

// eventsOf returns the Events whose involvedObject is the object m
// describes, oldest first.
func eventsOf(l Lookup, m relMeta) ([]any, error) {
	if m.UID == "" {
		return nil, nil
	}
	objs, err := l.ByIndex(EventsResource, InvolvedObjectIndex, m.UID)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(objs, func(i, j int) bool {
		a, errA := meta.Accessor(objs[i])
		b, errB := meta.Accessor(objs[j])
		if errA != nil || errB != nil {
			return false
		}
		ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
		if !ta.Equal(&tb) {
			return ta.Before(&tb)
		}
		return a.GetName() < b.GetName()
	})
	return objs, nil
}

// selectedBy returns the objects of resource in the namespace of obj that
// its selector selects, by name. It reads, through the index [LabelIndex],
// the objects of each requirement of the selector that names values
// (KEY=VALUE, KEY in (VALUES)), and keeps, of the requirement that holds
// the fewest, those the whole selector selects; a selector with none (only notin, !=, exists and
// does-not-exist requirements, or none at all: every object) reads every
// object of resource in the namespace. budget, when not nil, is charged
// one unit for each object read.
func selectedBy(l Lookup, budget *Budget, resource string, obj ref.Val, m relMeta) ([]any, error) {
	sel, err := SelectorOf(m.Kind, native(field(obj, "spec")))
	if err != nil {
		return nil, err
	}
	reqs, selectable := sel.Requirements()
	if !selectable {
		return nil, nil
	}
	objs, read, indexed, err := selectedCandidates(l, resource, m.Namespace, reqs)
	if err != nil {
		return nil, err
	}
	if !indexed {
		if objs, err = l.ByIndex(resource, NamespaceIndex, m.Namespace); err != nil {
			return nil, err
		}
		read = len(objs)
	}
	if budget != nil {
		if err := budget.charge(uint64(read)); err != nil {
			return nil, err
		}
	}
	var out []any
	for _, o := range objs {
		om, err := meta.Accessor(o)
		if err != nil {
			continue
		}
		if sel.Matches(labels.Set(om.GetLabels())) {
			out = append(out, o)
		}
	}
	sortByName(out)
	return out, nil
}

// selectedCandidates reads the objects of resource of each requirement of
// reqs, a selector of namespace, that [LabelIndex] answers (those of
// KEY=VALUE, or of each VALUE of KEY in (VALUES)), and returns those of the
// one that holds the fewest, with the number read. indexed is false when
// no requirement is answered so. A lookup that tells which namespaces it
// reads ([NamespaceReader]) fails for another, as a read of the namespace
// would.
func selectedCandidates(l Lookup, resource, namespace string, reqs labels.Requirements) (objs []any, read int, indexed bool, err error) {
	if r, ok := l.(NamespaceReader); ok {
		if err := r.ReadsNamespace(resource, namespace); err != nil {
			return nil, 0, false, err
		}
	}
	for _, r := range reqs {
		switch r.Operator() {
		case labelselection.Equals, labelselection.DoubleEquals, labelselection.In:
		default:
			continue
		}
		// An object has one value of a key: the objects of the values
		// are distinct.
		var found []any
		for _, v := range r.Values().UnsortedList() {
			posting, err := l.ByIndex(resource, LabelIndex, LabelIndexValue(namespace, r.Key(), v))
			if err != nil {
				return nil, 0, false, err
			}
			found = append(found, posting...)
		}
		read += len(found)
		if !indexed || len(found) < len(objs) {
			objs, indexed = found, true
		}
		if len(objs) == 0 {
			break
		}
	}
	return objs, read, indexed, nil
}

// LabelIndexValue is the value of [LabelIndex] under which the objects of
// namespace with the label key=value are indexed.
func LabelIndexValue(namespace, key, value string) string {
	return namespace + "/" + key + "=" + value
}

// SelectorOf returns the selector of an object of kind with the spec
// spec (a JSON value): spec.selector, a map of labels, for a Service and a
// ReplicationController; spec.selector, a LabelSelector, for a Deployment,
// ReplicaSet, StatefulSet, DaemonSet, Job and PodDisruptionBudget;
// spec.podSelector for a NetworkPolicy. For an object whose kind is not
// known (""), the form of its spec decides. A missing selector selects
// nothing, as a Service without one selects no pods; an empty
// LabelSelector selects everything.
func SelectorOf(kind string, spec any) (labels.Selector, error) {
	s, _ := spec.(map[string]any)
	switch kind {
	case "Service", "ReplicationController":
		return setSelector(s["selector"])
	case "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "PodDisruptionBudget":
		return labelSelector(s["selector"])
	case "NetworkPolicy":
		return labelSelector(s["podSelector"])
	case "":
		if ps, ok := s["podSelector"]; ok {
			return labelSelector(ps)
		}
		sel, _ := s["selector"].(map[string]any)
		_, ml := sel["matchLabels"]
		_, me := sel["matchExpressions"]
		if ml || me {
			return labelSelector(sel)
		}
		return setSelector(s["selector"])
	}
	return nil, fmt.Errorf("a %s has no selector: selected() reads those of Services, ReplicationControllers, Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, PodDisruptionBudgets and NetworkPolicies", kind)
}

func setSelector(v any) (labels.Selector, error) {
	m, _ := v.(map[string]any)
	if len(m) == 0 {
		return labels.Nothing(), nil
	}
	set := labels.Set{}
	for k, val := range m {
		s, ok := val.(string)
		if !ok {
			return nil, fmt.Errorf("selector %q: the value is not a string", k)
		}
		set[k] = s
	}
	return labels.SelectorFromSet(set), nil
}

func labelSelector(v any) (labels.Selector, error) {
	if v == nil {
		return labels.Nothing(), nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the selector is not a LabelSelector")
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &ls); err != nil {
		return nil, err
	}
	return metav1.LabelSelectorAsSelector(&ls)
}

// sortByName sorts objs by namespace and name.
func sortByName(objs []any) {
	sort.SliceStable(objs, func(i, j int) bool { return ObjectName(objs[i]) < ObjectName(objs[j]) })
}

// isRelationFunction reports whether a global call of fn with n arguments
// is one of the relationship functions.
func isRelationFunction(fn string, n int) bool {
	switch fn {
	case ownerFunction, ownersFunction, eventsFunction:
		return n == 1
	case childrenFunction, selectedFunction:
		return n == 2
	}
	return false
}
