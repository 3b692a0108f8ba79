// Command image builds kubectl-informer's multi-platform container image as
// an OCI image layout, pushes it to a registry, and pushes the Helm chart
// as an OCI artifact, all without a container daemon or the helm binary.
//
//	go run ./hack/image build --out _output/image --version v1.2.3 --commit abc1234 --revision <sha> \
//	    --source-date-epoch 1700000000 --ldflags "$(LDFLAGS)" [--platforms linux/amd64,linux/arm64]
//	go run ./hack/image push --layout _output/image --version v1.2.3 --registry ghcr.io/kubectl-informer
//	go run ./hack/image chart-push --chart charts/kubectl-informer --registry ghcr.io/kubectl-informer/charts \
//	    --source-date-epoch 1700000000 [--chart-version 1.2.3 --app-version v1.2.3]
//
// make image, make image-push and make chart-push run it with the
// Makefile's VERSION, COMMIT and LDFLAGS.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "image: %v\n", err)
		stop()
		os.Exit(1)
	}
}

const usage = "usage: image build|push|chart-push [flags] (image COMMAND -h lists a command's flags)"

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("no command: %s", usage)
	}
	fs := flag.NewFlagSet("image "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cmd func(context.Context, io.Writer, io.Writer) error
	switch args[0] {
	case "build":
		var o buildOptions
		o.flags(fs)
		cmd = o.run
	case "push":
		var o pushOptions
		o.flags(fs)
		cmd = o.run
	case "chart-push":
		var o chartOptions
		o.flags(fs)
		cmd = o.run
	default:
		return fmt.Errorf("unknown command %q: %s", args[0], usage)
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return cmd(ctx, stdout, stderr)
}
