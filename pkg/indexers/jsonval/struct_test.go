package jsonval

import (
	"strings"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPathWalk walks paths from views of structs of several types in turn,
// so that each Path's fields are planned again for each type, and checks
// every walk against looking the names up with Find, one by one.
func TestPathWalk(t *testing.T) {
	started := metav1.Unix(1700000000, 0)
	roots := []ref.Val{
		New(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Labels: map[string]string{"app": "web"}},
			Spec:   corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app"}}},
			Status: corev1.PodStatus{StartTime: &started, Phase: corev1.PodRunning}}),
		New(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Spec: corev1.NodeSpec{PodCIDR: "10.0.0.0/24"}}),
		New(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bare"}}),
		types.String("not a struct"),
	}
	paths := [][]string{
		{"metadata", "name"}, {"spec", "nodeName"}, {"spec", "podCIDR"}, {"spec", "containers"}, {"status", "startTime"},
		{"metadata", "labels", "app"}, {"spec", "none"}, {"metadata"}, {"status", "startTime", "seconds"},
		{"spec", "containers", "name"}, {"status", "phase"}, {"spec", "priority"},
	}
	stringMembers := map[string]bool{"metadata.name": true, "spec.nodeName": true, "spec.podCIDR": true, "metadata.labels.app": true, "status.phase": true}
	for _, names := range paths {
		var vals []ref.Val
		for _, n := range names {
			vals = append(vals, types.String(n))
		}
		p := NewPath(vals)
		for round := range 2 {
			for ri, root := range roots {
				got, n, found := p.Walk(root)
				// Find, name by name, while the value is a struct's view.
				want, wantN, wantFound := root, 0, true
				if _, isStruct := root.(*structValue); isStruct {
					for i, name := range vals {
						s, isStruct := want.(*structValue)
						if !isStruct {
							break
						}
						v, ok := s.Find(name)
						if !ok {
							want, wantN, wantFound = nil, i, false
							break
						}
						want, wantN = v, i+1
					}
				}
				switch {
				case found != wantFound || n != wantN:
					t.Errorf("round %d, root %d, path %v: Walk gave n %d, found %t; Find gives %d, %t", round, ri, names, n, found, wantN, wantFound)
				case found && (got == nil || got.Equal(want) != types.True):
					t.Errorf("round %d, root %d, path %v: Walk gave %v, Find %v", round, ri, names, got, want)
				}
				// WalkString gives the string Walk gives at the end of
				// the path, and nothing otherwise; it gives every string
				// member's (not a time's, presented as a string).
				s, ok := p.WalkString(root)
				str, isString := got.(types.String)
				_, fromStruct := root.(*structValue)
				atEnd := found && isString && n == len(vals) && fromStruct
				if ok && (!atEnd || s != string(str)) || !ok && atEnd && stringMembers[strings.Join(names, ".")] {
					t.Errorf("round %d, root %d, path %v: WalkString gave %q, %t; Walk %v (n %d, found %t)", round, ri, names, s, ok, got, n, found)
				}
			}
		}
	}
}
