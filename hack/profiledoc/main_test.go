package main

import (
	"bytes"
	"os"
	"testing"
)

// TestDocIsCurrent fails when docs/kube-state-metrics-profile.md is not
// what the profile's files give: run go run ./hack/profiledoc >
// docs/kube-state-metrics-profile.md after changing them.
func TestDocIsCurrent(t *testing.T) {
	var want bytes.Buffer
	if err := write(&want); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../docs/kube-state-metrics-profile.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatal("docs/kube-state-metrics-profile.md is out of date: run go run ./hack/profiledoc > docs/kube-state-metrics-profile.md")
	}
}
