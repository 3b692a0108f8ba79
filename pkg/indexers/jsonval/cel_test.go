package jsonval

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Expressions evaluated on every fixture; most of them fail on most objects,
// which is part of the test: the failures must be the same too.
var commonExpressions = []string{
	`object`,
	`object.metadata`,
	`object.metadata.name`,
	`object.metadata.namespace`,
	`object.metadata.uid`,
	`object.metadata.generation`,
	`object.metadata.generation + 1`,
	`object.metadata.resourceVersion`,
	`object.metadata.creationTimestamp`,
	`has(object.metadata.creationTimestamp)`,
	`object.metadata.creationTimestamp > '2024-01-01T00:00:00Z'`,
	`timestamp(object.metadata.creationTimestamp) < timestamp('2030-01-01T00:00:00Z')`,
	`has(object.metadata.deletionTimestamp)`,
	`object.metadata.deletionTimestamp`,
	`has(object.metadata.labels)`,
	`object.metadata.labels`,
	`object.metadata.labels['app']`,
	`object.metadata.labels.app == 'web'`,
	`'app' in object.metadata.labels`,
	`size(object.metadata.labels)`,
	`object.metadata.labels == {'app': 'web'}`,
	`object.metadata.labels.exists(k, k.startsWith('kubernetes.io/'))`,
	`object.metadata.labels.all(k, object.metadata.labels[k] != '')`,
	`object.metadata.labels.filter(k, k.contains('-')).size()`,
	`object.metadata.labels.all(k, v, v.size() < 64)`,
	`object.metadata.labels.transformMap(k, v, v + '!')`,
	`object.metadata.?labels.?app.orValue('none')`,
	`object.metadata.annotations`,
	`object.metadata.annotations.exists(k, k.startsWith('example.com/'))`,
	`object.metadata.finalizers`,
	`size(object.metadata.finalizers)`,
	`object.metadata.ownerReferences[0].controller`,
	`object.metadata.ownerReferences.exists(r, r.kind == 'ReplicaSet' && r.controller)`,
	`object.metadata.managedFields[0].fieldsV1`,
	`object.metadata.managedFields.map(m, m.manager)`,
	`object.metadata.managedFields[0].time`,
	`has(object.metadata.nosuchfield)`,
	`object.kind`,
	`has(object.kind)`,
	`has(object.apiVersion)`,
	`has(object.spec)`,
	`has(object.status)`,
	`object.spec`,
	`object.status`,
	`object == object`,
	`object.metadata == object.metadata`,
	`object.spec == object.spec`,
	`object != {}`,
	`[object.metadata.name, object.metadata.namespace]`,
	`{'n': object.metadata.name, 'l': object.metadata.labels}`,
	`type(object) == map`,
	`type(object.metadata.name)`,
	`type(object.metadata.creationTimestamp)`,
	`size(object)`,
	`object.exists(k, k == 'status')`,
	`object.metadata.all(k, k != '')`,
	`object.map(k, k).size()`,
	`'metadata' in object`,
	`1 in object`,
	`object.metadata.labels['app'].size()`,
}

// Expressions that fail on every fixture, identically.
var errorExpressions = []string{
	`object.metadata.nosuchfield`,
	`object.metadata.labels[1]`,
	`object[1]`,
	`object.spec.containers[5]`,
	`object.spec.containers[-1]`,
	`object.spec.containers['a']`,
	`object.spec.containers + 1`,
	`object.spec.containers[0].ports[0].containerPort * 2.0`,
	`(object.spec.initContainers + [1])[5]`,
	`object.metadata.name.nosuchfield`,
	`object.nosuchfield.name`,
	`string(object.metadata.labels)`,
}

// Expressions for particular fixtures. They run on every fixture as well.
var typedExpressions = []string{
	// Pods.
	`object.status.phase == 'Pending'`,
	`object.status.phase`,
	`object.spec.containers.exists(c, c.ports.exists(p, p.containerPort == 80))`,
	`object.spec.containers.exists(c, has(c.ports) && c.ports.exists(p, p.containerPort == 80))`,
	`object.spec.containers.map(c, c.name)`,
	`object.spec.containers.map(c, c.image).filter(i, i.endsWith('1.2.3'))`,
	`object.spec.containers[0].resources.requests.cpu`,
	`object.spec.containers[0].resources.requests.cpu == '100m'`,
	`object.spec.containers[0].resources.limits['memory']`,
	`object.spec.containers[0].resources`,
	`object.spec.containers[0].resources == {'requests': {'cpu': '100m', 'memory': '128Mi'}, 'limits': {'cpu': '1', 'memory': '512Mi'}}`,
	`object.spec.containers.all(c, has(c.resources.limits))`,
	`object.spec.containers[0].livenessProbe.httpGet.port == 8080`,
	`object.spec.containers[0].livenessProbe.httpGet.port`,
	`object.spec.containers[0].readinessProbe.httpGet.port == 'http'`,
	`type(object.spec.containers[0].livenessProbe.httpGet.port)`,
	`type(object.spec.containers[0].readinessProbe.httpGet.port)`,
	`object.spec.containers[0].ports[0].containerPort + 1`,
	`object.spec.containers[0].ports[0].containerPort == 80.0`,
	`object.spec.containers[0].ports[0].containerPort == 80u`,
	`object.spec.containers[0].ports == [{'name': 'http', 'containerPort': 80, 'protocol': 'TCP'}, {'name': 'metrics', 'containerPort': 9090, 'protocol': 'TCP'}]`,
	`object.spec.containers[0].ports[0] in object.spec.containers[0].ports`,
	`{'name': 'http', 'containerPort': 80, 'protocol': 'TCP'} in object.spec.containers[0].ports`,
	`object.spec.containers[0] in object.spec.containers`,
	`object.spec.containers[0].securityContext`,
	`object.spec.containers[0].securityContext.runAsNonRoot`,
	`object.spec.containers[0].env.exists(e, has(e.valueFrom) && e.valueFrom.fieldRef.fieldPath == 'metadata.name')`,
	`object.spec.containers[0].env[0]`,
	`object.spec.containers.exists_one(c, c.name == 'app')`,
	`object.spec.containers.all(i, c, i < 2 && c.name != '')`,
	`size(object.spec.containers + object.spec.initContainers)`,
	`(object.spec.containers + object.spec.initContainers).map(c, c.name)`,
	`object.spec.terminationGracePeriodSeconds`,
	`object.spec.tolerations.filter(t, has(t.tolerationSeconds)).map(t, t.tolerationSeconds)`,
	`object.spec.tolerations[0]`,
	`has(object.spec.nodeName)`,
	`object.spec.nodeName`,
	`object.spec.volumes.exists(v, has(v.emptyDir) && v.emptyDir.sizeLimit == '1Gi')`,
	`object.spec.volumes[1].configMap.defaultMode`,
	`object.spec.securityContext`,
	`size(object.spec.securityContext)`,
	`object.spec.enableServiceLinks`,
	`object.spec.priority`,
	`object.spec.nodeSelector`,
	`object.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')`,
	`object.status.conditions.filter(c, c.type == 'PodScheduled')[0].lastTransitionTime`,
	`object.status.conditions.map(c, c.lastTransitionTime)`,
	`object.status.conditions.map(c, c.type)`,
	`object.status.containerStatuses[0].state`,
	`object.status.containerStatuses[0].state.running.startedAt`,
	`object.status.containerStatuses[0].lastState.terminated.exitCode`,
	`object.status.containerStatuses[0].restartCount > 2`,
	`object.status.containerStatuses[0].ready`,
	`object.status.podIPs.map(p, p.ip)`,
	`object.status.startTime`,
	`object.status.qosClass`,
	`object.items.map(p, p.metadata.name)`,
	`object.items[0].spec.containers[0].name`,
	// Nodes.
	`object.status.capacity.cpu`,
	`object.status.capacity`,
	`object.status.allocatable['memory']`,
	`object.status.allocatable`,
	`object.spec.taints.exists(t, t.effect == 'NoSchedule')`,
	`object.spec.taints[0].timeAdded`,
	`object.spec.taints[1]`,
	`object.metadata.labels['kubernetes.io/hostname']`,
	`object.metadata.labels['node-role.kubernetes.io/worker']`,
	`object.status.nodeInfo.kubeletVersion`,
	`object.status.addresses.filter(a, a.type == 'InternalIP')[0].address`,
	`has(object.spec.unschedulable)`,
	`object.status.daemonEndpoints.kubeletEndpoint.Port`,
	`object.status.images[0].sizeBytes`,
	`object.status.conditions[0].lastHeartbeatTime`,
	`object.status.conditions[1]`,
	// Deployments.
	`object.spec.replicas`,
	`object.spec.strategy.rollingUpdate.maxSurge`,
	`object.spec.strategy.rollingUpdate.maxUnavailable`,
	`object.spec.strategy.rollingUpdate`,
	`object.spec.selector`,
	`object.spec.selector.matchExpressions[0].values`,
	`object.spec.template.metadata`,
	`has(object.spec.template.metadata.creationTimestamp)`,
	`object.spec.template.spec.containers[0].image`,
	`object.status.availableReplicas < object.spec.replicas`,
	`has(object.spec.paused)`,
	`object.status.conditions[0]`,
	// Services.
	`object.spec.ports.map(p, p.targetPort)`,
	`object.spec.ports.exists(p, p.targetPort == 'http')`,
	`object.spec.ports.exists(p, p.targetPort == 9090)`,
	`object.spec.clusterIPs`,
	`object.spec.type`,
	`object.spec.selector`,
	`object.spec.ipFamilyPolicy`,
	`object.status.loadBalancer`,
	`size(object.status.loadBalancer)`,
	// ConfigMaps and Secrets.
	`object.binaryData`,
	`object.binaryData['blob']`,
	`object.binaryData.empty`,
	`object.data`,
	`object.data['config.yaml']`,
	`object.data['tls.crt']`,
	`size(object.data)`,
	`object.immutable`,
	`object.type`,
	`object.stringData`,
	// Events and leases.
	`object.eventTime`,
	`object.series`,
	`object.deprecatedFirstTimestamp`,
	`has(object.deprecatedFirstTimestamp)`,
	`object.regarding`,
	`object.spec.renewTime`,
	`object.spec.leaseDurationSeconds`,
	// CustomResourceDefinitions.
	`object.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.replicas`,
	`object.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.replicas.minimum`,
	`type(object.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.replicas.maximum)`,
	`object.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.mode.enum`,
	`object.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.extra`,
	`object.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.extra.default.a[1]`,
	`object.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.port`,
	`object.spec.versions[0].subresources`,
	`object.spec.names`,
	// ControllerRevisions.
	`object.data.spec.template.spec.containers[0].image`,
	`object.data.ratio`,
	`object.data.n`,
	`object.revision`,
}

func celEnv(t testing.TB) *cel.Env {
	t.Helper()
	env, err := cel.NewEnv(
		cel.Variable("object", cel.DynType),
		cel.OptionalTypes(),
		ext.TwoVarComprehensions(),
		ext.Strings(),
	)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func program(t testing.TB, env *cel.Env, expr string) cel.Program {
	t.Helper()
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		t.Fatalf("compile %q: %v", expr, iss.Err())
	}
	prg, err := env.Program(ast)
	if err != nil {
		t.Fatalf("program %q: %v", expr, err)
	}
	return prg
}

// unstructuredOf returns obj as a dynamic informer holds it: its JSON decoded
// into maps.
func unstructuredOf(t testing.TB, obj any) any {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := utiljson.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// outcome is an evaluation result in comparable form.
type outcome struct {
	Type  string
	Value any
	Err   string
}

func evaluate(prg cel.Program, object any) outcome {
	val, _, err := prg.Eval(map[string]any{"object": object})
	if err != nil {
		return outcome{Err: err.Error()}
	}
	return outcomeOf(val)
}

func outcomeOf(val ref.Val) outcome {
	native, err := ToNative(val)
	if err != nil {
		return outcome{Err: "ToNative: " + err.Error()}
	}
	return outcome{Type: val.Type().TypeName(), Value: native}
}

// TestSameAsUnstructured evaluates every expression on every fixture twice,
// on the lazy view and on the JSON-decoded object, and requires the same value
// or the same error.
func TestSameAsUnstructured(t *testing.T) {
	env := celEnv(t)
	exprs := append(append(append([]string{}, commonExpressions...), typedExpressions...), errorExpressions...)
	prgs := make([]cel.Program, len(exprs))
	for i, expr := range exprs {
		prgs[i] = program(t, env, expr)
	}
	succeeded := make([]bool, len(exprs))
	for _, fx := range fixtures() {
		t.Run(fx.name, func(t *testing.T) {
			lazy := New(fx.obj)
			plain := unstructuredOf(t, fx.obj)
			for i, expr := range exprs {
				got, want := evaluate(prgs[i], lazy), evaluate(prgs[i], plain)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s\n  lazy:         %#v\n  unstructured: %#v", expr, got, want)
				}
				if want.Err == "" {
					succeeded[i] = true
				}
			}
		})
	}
	// Guard against expressions that test nothing but error paths.
	for i, expr := range exprs {
		if i >= len(exprs)-len(errorExpressions) {
			if succeeded[i] {
				t.Errorf("%s succeeds on some fixture", expr)
			}
			continue
		}
		if !succeeded[i] {
			t.Errorf("%s fails on every fixture", expr)
		}
	}
}
