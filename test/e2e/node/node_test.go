package node

import (
	"bytes"
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestImageRunsOnNode runs the project's image on the node: the pod's
// container reaches the API server through the kubernetes Service (kube-proxy)
// with its ServiceAccount's token, and its log is read through the kubelet.
func TestImageRunsOnNode(t *testing.T) {
	ctx := context.Background()
	node, err := cluster.Client.CoreV1().Nodes().Get(ctx, framework.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !nodeReady(node) {
		t.Fatalf("node %s is not Ready: %+v", node.Name, node.Status.Conditions)
	}
	ns := cluster.NewNamespace(t, "image")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "version", Namespace: ns},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name:    "version",
				Image:   framework.ProjectImage,
				Command: []string{"/kubectl-informer", "version"},
			}},
		},
	}
	if _, err := cluster.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *corev1.Pod
	framework.Eventually(t, "the pod has ended", func() bool {
		got, err = cluster.Client.CoreV1().Pods(ns).Get(ctx, "version", metav1.GetOptions{})
		return err == nil && (got.Status.Phase == corev1.PodSucceeded || got.Status.Phase == corev1.PodFailed)
	})
	logs, err := cluster.Client.CoreV1().Pods(ns).GetLogs("version", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("the pod ended %s; its log:\n%s", got.Status.Phase, logs)
	}
	if got.Spec.NodeName != framework.NodeName || got.Status.PodIP == "" {
		t.Errorf("the pod ran on %q with address %q, want the node %s and an address from its bridge", got.Spec.NodeName, got.Status.PodIP, framework.NodeName)
	}
	if !bytes.Contains(logs, []byte("Server Version: v1.36")) || !strings.HasPrefix(string(logs), "kubectl-informer ") {
		t.Errorf("the image's version command did not reach the API server from the pod; its log:\n%s", logs)
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
