// Command kubectl-informer is the kubectl plugin "kubectl informer": queries
// and Prometheus metrics computed by CEL from client-go informer caches.
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(app.Execute(app.NewRootCommand(streams), streams))
}
