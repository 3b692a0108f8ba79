// Command kubectl-informer is the kubectl plugin "kubectl informer": queries
// and Prometheus metrics computed by CEL from client-go informer caches.
package main

import (
	"os"
	"path/filepath"
	// The IANA time zone database, embedded: CronJobs' spec.timeZone (and
	// CRON_TZ in a schedule) resolves where the host has no
	// /usr/share/zoneinfo, as in a minimal container image. Go reads the
	// host's database first and the embedded one only when that has no
	// such zone.
	_ "time/tzdata"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(app.Execute(app.NewCommandFor(filepath.Base(os.Args[0]), streams), streams))
}
