package exporter

import (
	"bytes"
	"testing"
)

// TestDescribe checks the table of --check: families in the config's order,
// computed labels sorted, then the constant ones with their value; a
// resource without metrics.
func TestDescribe(t *testing.T) {
	data := testConfig + `- resource: configmaps
  indexes:
    byOwner: object.metadata.?ownerReferences.orValue([]).map(o, o.name)
`
	c, err := Compile("c.yaml", []byte(data), testConfigEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Describe(&b, c); err != nil {
		t.Fatal(err)
	}
	want := `RESOURCE     METRIC                              TYPE      AGGREGATE   LABELS
pods         kube_pod_info                       info      <none>      namespace,node,pod,cluster="prod",region="eu"
pods         kube_pod_container_restarts_total   counter   <none>      container,pod,cluster="prod",region="eu"
pods         kube_pods_by_phase                  gauge     count       phase,cluster="prod",region="eu"
pods         kube_pod_restarts_max               gauge     max         namespace,cluster="prod",region="eu"
nodes        kube_node_pods                      gauge     <none>      node,cluster="prod",region="eu"
configmaps   <none>                              <none>    <none>      <none>
`
	if b.String() != want {
		t.Errorf("Describe:\n%s\nwant:\n%s", b.String(), want)
	}
}
