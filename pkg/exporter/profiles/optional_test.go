package profiles_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-informer/kubectl-informer/internal/seriesset"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// optionalObjects are, for each resource of the profile, an empty object of
// its API type and what to change in the object filled from it (see fill)
// so that it takes the branches kube-state-metrics takes: members of a
// one-of that exclude each other, values a family compares with.
var optionalObjects = map[string]struct {
	proto runtime.Object
	shape func(o map[string]any)
}{
	"certificatesigningrequests": {proto: &certificatesv1.CertificateSigningRequest{}, shape: func(o map[string]any) {
		setAll(o, "status.conditions.*.type", "Approved")
	}},
	"clusterrolebindings": {proto: &rbacv1.ClusterRoleBinding{}},
	"clusterroles":        {proto: &rbacv1.ClusterRole{}},
	"configmaps":          {proto: &corev1.ConfigMap{}},
	"cronjobs":            {proto: &batchv1.CronJob{}, shape: func(o map[string]any) { setAll(o, "spec.schedule", "*/5 * * * *"); setAll(o, "spec.timeZone", "UTC") }},
	"daemonsets":          {proto: &appsv1.DaemonSet{}},
	"deployments":         {proto: &appsv1.Deployment{}, shape: func(o map[string]any) { setAll(o, "spec.strategy.type", "RollingUpdate") }},
	"endpoints":           {proto: &corev1.Endpoints{}}, //nolint:staticcheck // SA1019: kube-state-metrics still reports v1 Endpoints
	"endpointslices":      {proto: &discoveryv1.EndpointSlice{}},
	"horizontalpodautoscalers": {proto: &autoscalingv2.HorizontalPodAutoscaler{}, shape: func(o map[string]any) {
		setAll(o, "spec.metrics.0.type", "Resource")
		setAll(o, "spec.metrics.1.type", "External")
		setAll(o, "status.currentMetrics.0.type", "Resource")
		setAll(o, "status.currentMetrics.1.type", "External")
		setAll(o, "status.conditions.*.type", "AbleToScale")
	}},
	"ingressclasses": {proto: &networkingv1.IngressClass{}},
	"ingresses": {proto: &networkingv1.Ingress{}, shape: func(o map[string]any) {
		// A path to a service and one to a resource.
		deleteAll(o, "spec.rules.*.http.paths.0.backend.resource")
		deleteAll(o, "spec.rules.*.http.paths.1.backend.service")
		deleteAll(o, "spec.defaultBackend.resource")
	}},
	"jobs": {proto: &batchv1.Job{}, shape: func(o map[string]any) {
		setAll(o, "status.conditions.0.type", "Failed")
		setAll(o, "status.conditions.0.reason", "BackoffLimitExceeded")
		setAll(o, "status.conditions.1.type", "Complete")
	}},
	"leases":                          {proto: &coordinationv1.Lease{}},
	"limitranges":                     {proto: &corev1.LimitRange{}, shape: func(o map[string]any) { setAll(o, "spec.limits.*.type", "Container") }},
	"mutatingadmissionpolicies":       {proto: &admissionv1.MutatingAdmissionPolicy{}},
	"mutatingadmissionpolicybindings": {proto: &admissionv1.MutatingAdmissionPolicyBinding{}},
	"mutatingwebhookconfigurations":   {proto: &admissionv1.MutatingWebhookConfiguration{}},
	"namespaces":                      {proto: &corev1.Namespace{}, shape: func(o map[string]any) { setAll(o, "status.phase", "Active") }},
	"networkpolicies":                 {proto: &networkingv1.NetworkPolicy{}},
	"nodes": {proto: &corev1.Node{}, shape: func(o map[string]any) {
		setAll(o, "status.addresses.*.type", "InternalIP")
		setAll(o, "status.conditions.*.type", "Ready")
	}},
	"persistentvolumeclaims":            {proto: &corev1.PersistentVolumeClaim{}, shape: func(o map[string]any) { setAll(o, "status.phase", "Bound") }},
	"persistentvolumes":                 {proto: &corev1.PersistentVolume{}, shape: func(o map[string]any) { setAll(o, "status.phase", "Bound") }},
	"poddisruptionbudgets":              {proto: &policyv1.PodDisruptionBudget{}},
	"pods":                              {proto: &corev1.Pod{}, shape: shapePod},
	"replicasets":                       {proto: &appsv1.ReplicaSet{}},
	"replicationcontrollers":            {proto: &corev1.ReplicationController{}},
	"resourcequotas":                    {proto: &corev1.ResourceQuota{}},
	"rolebindings":                      {proto: &rbacv1.RoleBinding{}},
	"roles":                             {proto: &rbacv1.Role{}},
	"secrets":                           {proto: &corev1.Secret{}},
	"serviceaccounts":                   {proto: &corev1.ServiceAccount{}},
	"services":                          {proto: &corev1.Service{}, shape: func(o map[string]any) { setAll(o, "spec.type", "LoadBalancer") }},
	"statefulsets":                      {proto: &appsv1.StatefulSet{}},
	"storageclasses":                    {proto: &storagev1.StorageClass{}},
	"validatingadmissionpolicies":       {proto: &admissionv1.ValidatingAdmissionPolicy{}},
	"validatingadmissionpolicybindings": {proto: &admissionv1.ValidatingAdmissionPolicyBinding{}},
	"validatingwebhookconfigurations":   {proto: &admissionv1.ValidatingWebhookConfiguration{}},
	"volumeattachments":                 {proto: &storagev1.VolumeAttachment{}},
}

// shapePod gives the filled pod's containers the states and reasons that
// kube-state-metrics reports: the first container waiting, the second
// terminated, the phase Running, an owner that is a controller.
func shapePod(o map[string]any) {
	setAll(o, "status.phase", "Running")
	setAll(o, "status.conditions.0.type", "Ready")
	setAll(o, "status.conditions.1.type", "PodScheduled")
	setAll(o, "status.conditions.*.status", "True")
	for _, l := range []string{"containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"} {
		deleteAll(o, "status."+l+".0.state.running")
		deleteAll(o, "status."+l+".0.state.terminated")
		setAll(o, "status."+l+".0.state.waiting.reason", "CrashLoopBackOff")
		deleteAll(o, "status."+l+".1.state.running")
		deleteAll(o, "status."+l+".1.state.waiting")
		setAll(o, "status."+l+".1.state.terminated.reason", "OOMKilled")
		setAll(o, "status."+l+".*.lastTerminationState.terminated.reason", "OOMKilled")
		setAll(o, "status."+l+".0.name", "c0")
		setAll(o, "status."+l+".1.name", "c1")
	}
	for _, l := range []string{"containers", "initContainers", "ephemeralContainers"} {
		setAll(o, "spec."+l+".0.name", "c0")
		setAll(o, "spec."+l+".1.name", "c1")
	}
	setAll(o, "status.podIPs.*.ip", "10.0.0.1")
	setAll(o, "status.podIPs.1.ip", "fd00::1")
}

// TestOptionalFields takes an object of every resource of the profile with
// every field set that the profile's expressions may read, and variants of
// it with one optional field (a key of a map at any depth, as the object's
// JSON has it) absent, null, or empty ({}, [], "", 0 or false), and for a
// member of a one-of (a pointer to a struct) left out, each field of its
// other members absent or null too. Each variant is given to the profile's
// engine decoded into its API type (a typed informer's object) and as the
// API server writes that in JSON (a dynamic informer's); variants that are
// the same object so are run once, and those that do not decode (an empty
// quantity, say) are not objects the API server serves. For every
// variant:
//
//   - no family fails to evaluate;
//   - the exposition passes promlint;
//   - when the field is inside an element of a list, every series of the
//     object without that element is still there (by its labels): what a
//     field of one element holds does not take the series of the others.
func TestOptionalFields(t *testing.T) {
	files, err := profiles.Files(profiles.KubeStateMetrics)
	if err != nil {
		t.Fatal(err)
	}
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	var variants, failures int
	for _, f := range files {
		spec, ok := optionalObjects[f.Resource]
		if !ok {
			t.Errorf("resource %s: no object to vary; add it to optionalObjects", f.Resource)
			continue
		}
		t.Run(f.Resource, func(t *testing.T) {
			c, err := exporter.Compile(f.Path, f.Data, env)
			if err != nil {
				t.Fatal(err)
			}
			all, err := exporter.ParseAllowlist("*=[*]")
			if err != nil {
				t.Fatal(err)
			}
			if err := c.SetAllowlists(all, all); err != nil {
				t.Fatal(err)
			}
			read := readPaths(c)
			full := filled(t, spec.proto, read, string(f.Data), spec.shape)
			typ := reflect.TypeOf(spec.proto).Elem()
			run := newVariantRunner(t, c, typ)
			if errs := run.errors(full, "the full object"); len(errs) > 0 {
				t.Fatalf("the full object: %s", strings.Join(errs, "; "))
			}
			twins := map[string]map[string][]string{}
			// seen are the variants run, as the API server would write
			// them: absent, null and empty are often the same object.
			seen := map[string]bool{}
			n, fails := 0, 0
			for _, v := range optionalVariants(full, typ, read) {
				forms := run.forms(v.object)
				if forms == nil {
					continue // not an object the API server serves
				}
				key, err := json.Marshal(forms["typed"])
				if err != nil {
					t.Fatal(err)
				}
				if seen[string(key)] {
					continue
				}
				seen[string(key)] = true
				n++
				var problems []string
				problems = append(problems, run.errors(v.object, v.name)...)
				if v.element != nil {
					key := fmt.Sprint(v.element)
					twin, ok := twins[key]
					if !ok {
						twin = run.series(withoutElement(full, v.element))
						twins[key] = twin
					}
					got := run.series(v.object)
					for fam, want := range twin {
						if missing := seriesset.Minus(labelSetsOf(want), labelSetsOf(got[fam])); len(missing) > 0 {
							problems = append(problems, fmt.Sprintf("%s lost series of other elements: %s", fam, strings.Join(missing, " ")))
						}
					}
				}
				if len(problems) > 0 {
					fails++
					t.Errorf("%s: %s", v.name, strings.Join(problems, "; "))
				}
			}
			t.Logf("%d variants, %d failing", n, fails)
			variants += n
			failures += fails
		})
	}
	t.Logf("all resources: %d variants, %d failing", variants, failures)
}

// variant is the full object with one change.
type variant struct {
	name   string
	object map[string]any
	// element is the path of the list element the change is in, nil when
	// it is in none.
	element []any
}

// optionalVariants returns the variants of full: for each optional field
// that the profile may read (read, nil for all), the field absent, null and
// empty; for each pointer to a struct, the field absent with each field of
// its sibling pointers to structs absent or null.
func optionalVariants(full map[string]any, typ reflect.Type, read *jsonval.Paths) []variant {
	var out []variant
	var walk func(v any, t reflect.Type, path []any, read *jsonval.Paths, element []any)
	walk = func(v any, t reflect.Type, path []any, read *jsonval.Paths, element []any) {
		t = deref(t)
		switch v := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(v) {
				child, kept := read.Child(k)
				if !kept {
					continue
				}
				ft, optional := fieldType(t, k)
				p := append(slices.Clone(path), k)
				if optional {
					for _, mode := range []string{"absent", "null", "empty"} {
						out = append(out, variant{name: fmt.Sprintf("%s %s", pathString(p), mode), object: changed(full, p, mode), element: element})
					}
					if members := oneOf(v, t, read); isStructPointer(ft) && len(members) <= maxOneOf {
						// A one-of: the field left out, each field of
						// its other members left out too.
						for _, s := range members {
							sread, _ := read.Child(s)
							if s == k {
								continue
							}
							base := changed(full, p, "absent")
							for _, q := range leafPaths(v[s], append(slices.Clone(path), s), sread, 2) {
								for _, mode := range []string{"absent", "null"} {
									out = append(out, variant{name: fmt.Sprintf("%s absent, %s %s", pathString(p), pathString(q), mode), object: changed(base, q, mode), element: element})
								}
							}
						}
					}
				}
				walk(v[k], ft, p, child, element)
			}
		case []any:
			var et reflect.Type
			if t != nil && t.Kind() == reflect.Slice {
				et = t.Elem()
			}
			for i, e := range v {
				p := append(slices.Clone(path), i)
				walk(e, et, p, read, p)
			}
		}
	}
	walk(full, typ, nil, read, nil)
	return out
}

// maxOneOf is the most members of a one-of whose pairs are varied: a
// pod's volume sources are too many, the sources a persistent volume's
// families read, a metric's sources, a container's states are not.
const maxOneOf = 12

// oneOf returns the keys of v, of type t, that are pointers to structs
// read is keeps: the members of a one-of.
func oneOf(v map[string]any, t reflect.Type, read *jsonval.Paths) []string {
	var out []string
	for _, k := range sortedKeys(v) {
		ft, _ := fieldType(t, k)
		if _, kept := read.Child(k); kept && isStructPointer(ft) {
			out = append(out, k)
		}
	}
	return out
}

// leafPaths are the paths of the map keys below v, at path, that read
// keeps, down to depth keys.
func leafPaths(v any, path []any, read *jsonval.Paths, depth int) [][]any {
	if depth == 0 {
		return nil
	}
	var out [][]any
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			child, kept := read.Child(k)
			if !kept {
				continue
			}
			p := append(slices.Clone(path), k)
			out = append(out, p)
			out = append(out, leafPaths(v[k], p, child, depth-1)...)
		}
	case []any:
		for i, e := range v {
			out = append(out, leafPaths(e, append(slices.Clone(path), i), read, depth)...)
		}
	}
	return out
}

// changed returns a copy of o with the field at path absent, null or empty.
func changed(o map[string]any, path []any, mode string) map[string]any {
	out := runtime.DeepCopyJSON(o)
	m := valueAt(out, path[:len(path)-1]).(map[string]any)
	k := path[len(path)-1].(string)
	switch mode {
	case "absent":
		delete(m, k)
	case "null":
		m[k] = nil
	case "empty":
		switch m[k].(type) {
		case map[string]any:
			m[k] = map[string]any{}
		case []any:
			m[k] = []any{}
		case string:
			m[k] = ""
		case bool:
			m[k] = false
		default:
			m[k] = int64(0)
		}
	}
	return out
}

// valueAt returns the value at path in v: keys of maps and indexes of
// lists.
func valueAt(v any, path []any) any {
	for _, p := range path {
		switch p := p.(type) {
		case string:
			v = v.(map[string]any)[p]
		case int:
			v = v.([]any)[p]
		}
	}
	return v
}

// withoutElement returns a copy of o without the list element at path.
func withoutElement(o map[string]any, path []any) map[string]any {
	out := runtime.DeepCopyJSON(o)
	parent := valueAt(out, path[:len(path)-2])
	i := path[len(path)-1].(int)
	switch k := path[len(path)-2].(type) {
	case string:
		m := parent.(map[string]any)
		m[k] = slices.Delete(slices.Clone(m[k].([]any)), i, i+1)
	case int:
		l := parent.([]any)
		l[k] = slices.Delete(slices.Clone(l[k].([]any)), i, i+1)
	}
	return out
}

func pathString(path []any) string {
	var b strings.Builder
	for i, p := range path {
		switch p := p.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", p)
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, p)
		}
	}
	return b.String()
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// readPaths are the paths of the object that the families of c read, nil
// when one may read anything.
func readPaths(c *exporter.Compiled) *jsonval.Paths {
	read := &jsonval.Paths{}
	for _, r := range c.Resources {
		for _, f := range r.Families {
			for _, p := range append([]*indexers.Program{f.Each, f.Value, f.LabelsFrom}, f.Labels...) {
				if p != nil && !read.Union(p.ObjectPaths()) {
					return nil
				}
			}
		}
	}
	return read
}

// variantRunner runs variants of objects of one type through the engine
// of a compiled config.
type variantRunner struct {
	t   *testing.T
	c   *exporter.Compiled
	typ reflect.Type
}

func newVariantRunner(t *testing.T, c *exporter.Compiled, typ reflect.Type) *variantRunner {
	return &variantRunner{t: t, c: c, typ: typ}
}

// forms returns o decoded into its API type, as a typed informer delivers
// it, and that object as the API server writes it in JSON, as a dynamic
// informer delivers it (a null where a pointer or a list is nil, an empty
// field left out where the type says omitempty); nil when o does not
// decode: the API server could not serve it.
func (r *variantRunner) forms(o map[string]any) map[string]any {
	data, err := json.Marshal(o)
	if err != nil {
		r.t.Fatal(err)
	}
	typed := reflect.New(r.typ).Interface()
	if json.Unmarshal(data, typed) != nil {
		return nil
	}
	if data, err = json.Marshal(typed); err != nil {
		r.t.Fatal(err)
	}
	var u map[string]any
	if err := json.Unmarshal(data, &u); err != nil {
		r.t.Fatal(err)
	}
	return map[string]any{"typed": typed, "unstructured": &unstructured.Unstructured{Object: u}}
}

// errors returns the evaluation errors and promlint problems of each form
// of o.
func (r *variantRunner) errors(o map[string]any, name string) []string {
	var out []string
	for form, obj := range r.forms(o) {
		text, errs := r.render(obj)
		for fam, msg := range errs {
			out = append(out, fmt.Sprintf("%s (%s): %s", fam, form, msg))
		}
		if _, err := seriesset.ParseExact(strings.NewReader(text)); err != nil {
			out = append(out, fmt.Sprintf("%s (%s): the exposition does not parse: %v", name, form, err))
		}
	}
	slices.Sort(out)
	return out
}

// series returns the series of o, typed, by family.
func (r *variantRunner) series(o map[string]any) map[string][]string {
	text, _ := r.render(r.forms(o)["typed"])
	fams, err := seriesset.ParseExact(strings.NewReader(text))
	if err != nil {
		r.t.Fatal(err)
	}
	out := map[string][]string{}
	for name, f := range fams {
		out[name] = f.Series
	}
	return out
}

func (r *variantRunner) render(obj any) (string, map[string]string) {
	e := exporter.NewEngine(r.c, exporter.EngineOptions{})
	defer e.Close()
	e.Update(0, obj)
	var b bytes.Buffer
	if err := e.WriteFamilies(&b, false); err != nil {
		r.t.Fatal(err)
	}
	return b.String(), e.EvaluationErrors()
}

// labelSetsOf returns the label sets of series (name{labels} value), sorted.
func labelSetsOf(series []string) []string {
	out := make([]string, 0, len(series))
	for _, s := range series {
		out = append(out, s[:strings.LastIndexByte(s, ' ')])
	}
	slices.Sort(out)
	return out
}

// filled returns proto with every field set (see fill) that the config
// may read (see prune), as JSON, shaped.
func filled(t *testing.T, proto runtime.Object, read *jsonval.Paths, config string, shape func(map[string]any)) map[string]any {
	t.Helper()
	v := reflect.New(reflect.TypeOf(proto).Elem())
	fill(v.Elem(), "", 0)
	data, err := json.Marshal(v.Interface())
	if err != nil {
		t.Fatal(err)
	}
	var o map[string]any
	if err := json.Unmarshal(data, &o); err != nil {
		t.Fatal(err)
	}
	// What the profile does not read is left out.
	prune(o, reflect.TypeOf(proto).Elem(), read, config)
	meta := o["metadata"].(map[string]any)
	meta["namespace"], meta["name"], meta["uid"], meta["resourceVersion"] = "ns", "obj", "u1", "42"
	if shape != nil {
		shape(o)
	}
	return o
}

var (
	timeType     = reflect.TypeFor[metav1.Time]()
	microType    = reflect.TypeFor[metav1.MicroTime]()
	durationType = reflect.TypeFor[metav1.Duration]()
	quantityType = reflect.TypeFor[resource.Quantity]()
	intstrType   = reflect.TypeFor[intstr.IntOrString]()
	rawType      = reflect.TypeFor[runtime.RawExtension]()
)

// fill sets every field of v to a value that is not empty: strings to
// their name, numbers to 2, bools to true, times to t0, quantities to 1,
// maps to two entries, lists to two elements.
func fill(v reflect.Value, name string, depth int) {
	if depth > 16 {
		return
	}
	switch v.Type() {
	case timeType:
		v.Set(reflect.ValueOf(t0))
		return
	case microType:
		v.Set(reflect.ValueOf(metav1.NewMicroTime(t0.Time)))
		return
	case durationType:
		v.Set(reflect.ValueOf(metav1.Duration{Duration: time.Minute}))
		return
	case quantityType:
		v.Set(reflect.ValueOf(resource.MustParse("1")))
		return
	case intstrType:
		v.Set(reflect.ValueOf(intstr.FromInt32(2)))
		return
	case rawType:
		v.Set(reflect.ValueOf(runtime.RawExtension{Raw: []byte(`{"a":"b"}`)}))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("v-" + name)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(2)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(2)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(2)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), name, depth+1)
		v.Set(p)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte("x"))
			return
		}
		// Two elements, to tell one's series from the other's.
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(s.Index(i), name+strconv.Itoa(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i := range 2 {
			k := reflect.New(v.Type().Key()).Elem()
			if k.Kind() != reflect.String {
				return
			}
			k.SetString(fmt.Sprintf("k%d", i))
			if v.Type().Key().Name() == "ResourceName" {
				k.SetString([]string{"cpu", "memory"}[i])
			}
			e := reflect.New(v.Type().Elem()).Elem()
			fill(e, name+strconv.Itoa(i), depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			n, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if n == "-" {
				continue
			}
			if n == "" {
				n = name
			}
			fill(v.Field(i), n, depth+1)
		}
	}
}

func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func isStructPointer(t reflect.Type) bool {
	return t != nil && t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct &&
		t.Elem() != timeType && t.Elem() != quantityType
}

// fieldType returns the type of member k of a value of type t and
// whether the API lets it be absent: an entry of a map, a field that is a
// pointer or that the JSON leaves out when empty (omitempty), but for an
// object's metadata, name, namespace and UID, which the API server always
// sets.
func fieldType(t reflect.Type, k string) (reflect.Type, bool) {
	t = deref(t)
	if t == nil {
		return nil, true
	}
	switch t.Kind() {
	case reflect.Map:
		return t.Elem(), true
	case reflect.Struct:
		if t == reflect.TypeFor[metav1.ObjectMeta]() && (k == "name" || k == "namespace" || k == "uid") {
			return reflect.TypeFor[string](), false
		}
		if k == "metadata" {
			return reflect.TypeFor[metav1.ObjectMeta](), false
		}
		for i := range t.NumField() {
			f := t.Field(i)
			n, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if n == "" && f.Anonymous {
				if ft, optional := fieldType(f.Type, k); ft != nil {
					return ft, optional
				}
				continue
			}
			if n == k {
				return f.Type, f.Type.Kind() == reflect.Pointer || slices.Contains(strings.Split(opts, ","), "omitempty") ||
					slices.Contains(strings.Split(opts, ","), "omitzero")
			}
		}
	}
	return nil, false
}

// setAll sets the value at every path that dotted (with * for every
// element of a list, a number for one) names in o, where the path exists.
func setAll(o map[string]any, dotted string, value any) {
	atPath(o, strings.Split(dotted, "."), func(m map[string]any, k string) {
		if _, ok := m[k]; ok {
			m[k] = value
		}
	})
}

// deleteAll removes the key at every path that dotted names in o.
func deleteAll(o map[string]any, dotted string) {
	atPath(o, strings.Split(dotted, "."), func(m map[string]any, k string) { delete(m, k) })
}

func atPath(v any, path []string, do func(m map[string]any, k string)) {
	switch v := v.(type) {
	case map[string]any:
		if len(path) == 1 {
			do(v, path[0])
			return
		}
		atPath(v[path[0]], path[1:], do)
	case []any:
		if path[0] == "*" {
			for _, e := range v {
				atPath(e, path[1:], do)
			}
			return
		}
		if i, err := strconv.Atoi(path[0]); err == nil && i < len(v) {
			atPath(v[i], path[1:], do)
		}
	}
}

// prune removes from v, of type t, what read does not keep, and the
// fields of structs that config never names: no expression can read
// them (an element of a list that an expression reads whole, say, is read
// by the names of its fields).
func prune(v any, t reflect.Type, read *jsonval.Paths, config string) {
	t = deref(t)
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			child, kept := read.Child(k)
			ft, _ := fieldType(t, k)
			if !kept || (t != nil && t.Kind() == reflect.Struct && !strings.Contains(config, k)) {
				delete(v, k)
				continue
			}
			prune(e, ft, child, config)
		}
	case []any:
		var et reflect.Type
		if t != nil && t.Kind() == reflect.Slice {
			et = t.Elem()
		}
		for _, e := range v {
			prune(e, et, read, config)
		}
	}
}
