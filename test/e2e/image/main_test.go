// Package image_test runs what make image builds: it unpacks the OCI image
// layout's host platform into a directory, as a container runtime would,
// and runs the binary and the image's entrypoint from it against a real
// kube-apiserver. The layout is IMAGE_LAYOUT (make test-e2e builds it for
// the host's platform only and sets it), else _output/image.
package image_test

import (
	"os"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

var cluster *framework.Cluster

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m, &cluster))
}
