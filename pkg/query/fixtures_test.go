package query

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/internal/fixture"
)

// The shared fixtures, under the short names the engine's tests use.
var (
	now         = fixture.Now
	fixedNow    = fixture.FixedNow
	ago         = fixture.Ago
	podTypeMeta = fixture.PodTypeMeta
	pod         = fixture.Pod
	testPods    = fixture.Pods
	byNode      = fixture.ByNode
	byPhase     = fixture.ByPhase
	podIndexers = fixture.PodIndexers
	newIndexer  = fixture.NewIndexer
	podIndexer  = fixture.PodIndexer
	nodeName    = ValueFunc(fixture.NodeName)
	phase       = ValueFunc(fixture.Phase)
	name        = ValueFunc(fixture.Name)
	restarts    = ValueFunc(fixture.Restarts)
	images      = ValueFunc(fixture.Images)
	deployment  = fixture.Deployment
	widget      = fixture.Widget
	partial     = fixture.Partial
)

func podValue(f func(p *corev1.Pod) (any, error)) ValueFunc { return fixture.PodValue(f) }

func phaseIs(want corev1.PodPhase) PredicateFunc { return fixture.PhaseIs(want) }

func keys(res *Result) []string {
	out := []string{}
	for _, it := range res.Items {
		out = append(out, indexers.ObjectName(it.Object))
	}
	return out
}

func warningStrings(res *Result) []string {
	var out []string
	for _, w := range res.Warnings {
		out = append(out, w.String())
	}
	return out
}

// created is the creation timestamp as CEL reads it from the JSON: a
// string, RFC 3339.
var created = podValue(func(p *corev1.Pod) (any, error) { return p.CreationTimestamp.UTC().Format(time.RFC3339), nil })
