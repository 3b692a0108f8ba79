package profiles_test

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodIPsKubeStateMetricsCase is kube-state-metrics' own case of
// kube_pod_ips (internal/store/pod_test.go, the pod with an IPv4, an IPv6
// and an IPv4-mapped IPv6 address), with its expected exposition as
// written there.
func TestPodIPsKubeStateMetricsCase(t *testing.T) {
	start := metav1.Unix(1501569018, 0)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod1", Namespace: "ns1", UID: "abc-123-xxx",
			CreationTimestamp: metav1.Time{Time: time.Unix(1500000000, 0)}},
		Spec: corev1.PodSpec{NodeName: "node1", PriorityClassName: "system-node-critical", HostNetwork: true,
			Containers: []corev1.Container{{Image: "k8s.gcr.io/hyperkube2_spec"}}},
		Status: corev1.PodStatus{HostIP: "1.1.1.1", PodIP: "1.2.3.4",
			PodIPs: []corev1.PodIP{
				{IP: "1.2.3.4"},
				{IP: "fc00:1234:5678:90ab:cdef:cafe:f00d:d00d"},
				{IP: "::ffff:1.2.3.4"},
			},
			StartTime: &start},
	}
	expectFamilies(t, render(t, "pods", pod), `
				# HELP kube_pod_completion_time [STABLE] Completion time in unix timestamp for a pod.
				# HELP kube_pod_created [STABLE] Unix creation timestamp
				# HELP kube_pod_info [STABLE] Information about pod.
				# HELP kube_pod_ips Pod IP addresses
				# HELP kube_pod_owner [STABLE] Information about the Pod's owner.
				# HELP kube_pod_start_time [STABLE] Start time in unix timestamp for a pod.
				# TYPE kube_pod_completion_time gauge
				# TYPE kube_pod_created gauge
				# TYPE kube_pod_info gauge
				# TYPE kube_pod_ips gauge
				# TYPE kube_pod_owner gauge
				# TYPE kube_pod_start_time gauge
				kube_pod_created{namespace="ns1",pod="pod1",uid="abc-123-xxx"} 1.5e+09
				kube_pod_info{created_by_kind="",created_by_name="",host_ip="1.1.1.1",namespace="ns1",node="node1",pod="pod1",pod_ip="1.2.3.4",uid="abc-123-xxx",priority_class="system-node-critical",host_network="true"} 1
				kube_pod_ips{namespace="ns1",pod="pod1",uid="abc-123-xxx",ip="1.2.3.4",ip_family="4"} 1
				kube_pod_ips{namespace="ns1",pod="pod1",uid="abc-123-xxx",ip="fc00:1234:5678:90ab:cdef:cafe:f00d:d00d",ip_family="6"} 1
				kube_pod_ips{namespace="ns1",pod="pod1",uid="abc-123-xxx",ip="::ffff:1.2.3.4",ip_family="4"} 1
				kube_pod_start_time{namespace="ns1",pod="pod1",uid="abc-123-xxx"} 1.501569018e+09
				kube_pod_owner{namespace="ns1",owner_is_controller="",owner_kind="",owner_name="",pod="pod1",uid="abc-123-xxx"} 1
`)
}

// ksmIPFamily is kube-state-metrics' reading of a pod IP in kube_pod_ips
// (createPodIPsFamilyGenerator in internal/store/pod.go), the reference
// the profile is checked against: the family of the address unmapped,
// "" for no series.
func ksmIPFamily(s string) string {
	addr, err := netip.ParseAddr(s)
	if err != nil {
		return ""
	}
	addr = addr.Unmap()
	switch {
	case addr.Is4():
		return "4"
	case addr.Is6():
		return "6"
	}
	return ""
}

// TestPodIPsEveryForm checks kube_pod_ips on the forms an address may be
// written in, each against kube-state-metrics' own reading of it: IPv4,
// IPv6, IPv4-mapped IPv6 in its dotted and hex forms and any case,
// IPv4-compatible and other IPv6 addresses that end in an IPv4 address
// or hold ffff groups, zones, and strings that do not parse.
func TestPodIPsEveryForm(t *testing.T) {
	forms := []string{
		"1.2.3.4", "0.0.0.0", "255.255.255.255", "10.0.0.5",
		"fd00::5", "FC00::1", "::", "::1", "2001:db8::1",
		"::ffff:1.2.3.4", "::FFFF:1.2.3.4", "::ffff:102:304", "::FFFF:0102:0304",
		"0:0:0:0:0:ffff:1.2.3.4", "0000:0000:0000:0000:0000:ffff:0102:0304", "0::ffff:1.2.3.4",
		"::0:ffff:1.2.3.4", "0:0:0:0:0:FfFf:1.2.3.4", "fe80::1%ffff", "::ffff:1.2.3.4%ffff",
		"::ffff:0.0.0.0", "::ffff:255.255.255.255", "::ffff:ffff:ffff", "::ffff:0:0",
		"::1.2.3.4", "::ffff:0:1.2.3.4", "64:ff9b::1.2.3.4", "::fffe:1.2.3.4", "ffff::1.2.3.4",
		"2001:db8::ffff:1.2.3.4", "::ffff", "::ffff:ffff", "ffff:ffff::", "1::ffff:1.2.3.4",
		"fe80::1%eth0", "fe80::1%%", "fe80::1%eth0%x", "::ffff:1.2.3.4%eth0", "::ffff:102:304%0",
		"fe80::1%", "::ffff:1.2.3.4%", "1.2.3.4%eth0", "%eth0", "%",
		"", "bogus", "01.2.3.4", "1.2.3", "1.2.3.4.5", "1.2.3.256", "::ffff:1.2.3.256", "::ffff:01.2.3.4",
		":::", "1:2:3:4:5:6:7:8:9", "::ffff:1.2.3.4:5", "::fffff:1.2.3.4", "::ffff:1.2.3.4.5",
		"1.2.3.4/24", "[::1]", " 1.2.3.4", "1.2.3.4 ", "::ffff:0:0:1.2.3.4", "::ffff::1.2.3.4",
	}
	// A few readings, as kube-state-metrics' test cases and Go's netip
	// documentation give them, so that the reference itself is checked.
	for s, want := range map[string]string{"::ffff:1.2.3.4": "4", "::ffff:102:304": "4", "fe80::1%eth0": "6", "::1.2.3.4": "6", "01.2.3.4": "", "bogus": ""} {
		if got := ksmIPFamily(s); got != want {
			t.Fatalf("the reference reads %q as family %q, want %q", s, got, want)
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u"}, Spec: corev1.PodSpec{Containers: oneContainer}}
	var want strings.Builder
	want.WriteString("# HELP kube_pod_ips Pod IP addresses\n# TYPE kube_pod_ips gauge\n")
	for _, s := range forms {
		pod.Status.PodIPs = append(pod.Status.PodIPs, corev1.PodIP{IP: s})
		if f := ksmIPFamily(s); f != "" {
			fmt.Fprintf(&want, "kube_pod_ips{namespace=\"ns\",pod=\"p\",uid=\"u\",ip=%q,ip_family=%q} 1\n", s, f)
		}
	}
	expectFamilies(t, render(t, "pods", pod), want.String())
	// One form per pod, so that a difference names it.
	for _, s := range forms {
		one := pod.DeepCopy()
		one.Status.PodIPs = []corev1.PodIP{{IP: s}}
		var w strings.Builder
		w.WriteString("# HELP kube_pod_ips Pod IP addresses\n# TYPE kube_pod_ips gauge\n")
		if f := ksmIPFamily(s); f != "" {
			fmt.Fprintf(&w, "kube_pod_ips{namespace=\"ns\",pod=\"p\",uid=\"u\",ip=%q,ip_family=%q} 1\n", s, f)
		}
		t.Run(fmt.Sprintf("%q", s), func(t *testing.T) { expectFamilies(t, render(t, "pods", one), w.String()) })
	}
}
