package exporter

import (
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// TestAdmitsLastApplied: the caches keep kubectl apply's annotation only
// when an annotations allowlist admits it for some resource.
func TestAdmitsLastApplied(t *testing.T) {
	for _, tc := range []struct {
		allow map[string][]string
		want  bool
	}{
		{nil, false},
		{map[string][]string{"pods": {"owner"}}, false},
		{map[string][]string{"*": {"*"}}, true},
		{map[string][]string{"pods": {"kubectl.kubernetes.io/*"}}, true},
		{map[string][]string{"deployments": {"owner", "kubectl.kubernetes.io/last-applied-configuration"}}, true},
	} {
		if got := admitsLastApplied(tc.allow); got != tc.want {
			t.Errorf("admitsLastApplied(%v) = %v, want %v", tc.allow, got, tc.want)
		}
	}
}

// TestFieldsOfEveryProgram: the caches keep every field a family reads,
// in its labels, value, each and labelsFrom map alike.
func TestFieldsOfEveryProgram(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile("c.yaml", []byte(`apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: volumeattachments
  metrics:
  - name: attachment_metadata
    type: gauge
    help: A test family.
    labels:
      node: object.spec.nodeName
    labelsFrom:
      map: object.status.attachmentMetadata
      prefix: metadata
  - name: attached
    type: gauge
    help: A test family.
    value: object.status.attached
  - name: each_source
    type: gauge
    help: A test family.
    each: '[object.spec.source]'
    labels:
      pv: each.persistentVolumeName
`), env)
	if err != nil {
		t.Fatal(err)
	}
	got := fieldsOf(c.Resources[0])
	if got == nil {
		t.Fatal("fieldsOf = nil (whole objects), want the fields the families read")
	}
	for _, want := range []string{"spec.nodeName", "status.attachmentMetadata", "status.attached", "spec.source"} {
		p := &jsonval.Paths{}
		p.Add(strings.Split(want, "."))
		if !got.Covers(p) {
			t.Errorf("fieldsOf = %s, which does not keep %s", got, want)
		}
	}
}

// TestJumpHash: every key lands in a bucket in range; growing the buckets
// by one moves a key to the new bucket or not at all; and buckets are
// about equally full.
func TestJumpHash(t *testing.T) {
	const keys = 30000
	for n := 1; n <= 10; n++ {
		count := make([]int, n)
		for k := range uint64(keys) {
			key := k * 0x9E3779B97F4A7C15 // spread the keys over 64 bits
			b := jumpHash(key, n)
			if b < 0 || b >= n {
				t.Fatalf("jumpHash(%d, %d) = %d, out of range", key, n, b)
			}
			count[b]++
			if next := jumpHash(key, n+1); next != b && next != n {
				t.Errorf("jumpHash(%d, %d) = %d but jumpHash(%d, %d) = %d: the key moved between old buckets", key, n, b, key, n+1, next)
			}
		}
		for b, c := range count {
			if want := keys / n; c < want*9/10 || c > want*11/10 {
				t.Errorf("%d buckets: bucket %d holds %d keys, want about %d", n, b, c, want)
			}
		}
	}
}
