// The spawner of hack/bench: see package spawn.
package main

import (
	"fmt"
	"os"

	"github.com/kubectl-informer/kubectl-informer/hack/bench/spawn"
)

func main() {
	if err := spawn.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "spawner: %v\n", err)
		os.Exit(1)
	}
}
