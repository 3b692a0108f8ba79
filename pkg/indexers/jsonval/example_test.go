package jsonval_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/cel-go/cel"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

func Example() {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:              "web-0",
			CreationTimestamp: metav1.NewTime(time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)),
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app",
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
			},
			LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
				HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(8080)},
			}},
		}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}

	env, err := cel.NewEnv(cel.Variable("object", cel.DynType))
	if err != nil {
		panic(err)
	}
	for _, expr := range []string{
		`object.status.phase == "Pending"`,
		`object.metadata.creationTimestamp`,
		`object.spec.containers.map(c, [c.resources.requests.cpu, c.livenessProbe.httpGet.port])`,
		`has(object.spec.nodeName)`,
		`object.spec.containers[0].resources`,
	} {
		ast, iss := env.Compile(expr)
		if iss.Err() != nil {
			panic(iss.Err())
		}
		prg, err := env.Program(ast)
		if err != nil {
			panic(err)
		}
		out, _, err := prg.Eval(map[string]any{"object": jsonval.New(pod)})
		if err != nil {
			panic(err)
		}
		native, err := jsonval.ToNative(out)
		if err != nil {
			panic(err)
		}
		text, _ := json.Marshal(native)
		fmt.Printf("%s: %s\n", expr, text)
	}
	// Output:
	// object.status.phase == "Pending": true
	// object.metadata.creationTimestamp: "2025-03-14T15:09:26Z"
	// object.spec.containers.map(c, [c.resources.requests.cpu, c.livenessProbe.httpGet.port]): [["250m",8080]]
	// has(object.spec.nodeName): false
	// object.spec.containers[0].resources: {"requests":{"cpu":"250m"}}
}
