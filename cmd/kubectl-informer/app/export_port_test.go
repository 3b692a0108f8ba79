package app

import (
	"net"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestExportDefaultPort checks that the exporter does not listen by default
// on a port of Prometheus itself or of kube-state-metrics, which it runs
// beside: the Prometheus server's 9090 would make both fail to start on
// one host.
func TestExportDefaultPort(t *testing.T) {
	flag := NewExportCommand(genericiooptions.NewTestIOStreamsDiscard()).Flags().Lookup("web.listen-address")
	if flag == nil {
		t.Fatal("no --web.listen-address flag")
	}
	if flag.DefValue != "[:10149]" {
		t.Fatalf("--web.listen-address defaults to %s, want [:10149]", flag.DefValue)
	}
	_, port, err := net.SplitHostPort(defaultListenAddress)
	if err != nil {
		t.Fatal(err)
	}
	for _, taken := range []string{"9090", "9091", "9093", "9094", "8080", "8081"} {
		if port == taken {
			t.Errorf("the default port %s is taken by Prometheus or kube-state-metrics", port)
		}
	}
}
