// Package getprint holds kubectl get's output flags and printers (the
// -o formats, tables with their options, and custom columns), from
// k8s.io/kubectl/pkg/cmd/get at the version go.mod requires, without its
// command-line bindings.
//
// It is a copy because importing k8s.io/kubectl/pkg/cmd/get runs that
// package's initialization, which loads kubectl's message translations
// and renders its help text: about 27 ms at every start of the plugin,
// more than the rest of its initialization together. The code is
// otherwise unchanged: testdata/kubectl.patch records every edit, and
// TestCopiedFromUpstream fails when the kubectl of go.mod differs from
// the copy in anything else, naming the file and what to do.
package getprint
