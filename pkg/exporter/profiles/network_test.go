package profiles_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestServices(t *testing.T) {
	lb := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "s1", CreationTimestamp: t0, DeletionTimestamp: &t0,
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"owner": "ops"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.0.0.10", LoadBalancerIP: "1.2.3.4",
			ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal, ExternalIPs: []string{"5.6.7.8", "5.6.7.9"}},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
			{IP: "1.2.3.4"}, {Hostname: "lb.example.com"}}}},
	}
	ext := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db", UID: "s2"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"},
	}
	got := renderWith(t, "services", "services=[app]", "services=[owner]", lb, ext)
	expectWhole(t, got, `
# HELP kube_service_info [STABLE] Information about service.
# TYPE kube_service_info gauge
kube_service_info{namespace="shop",service="web",uid="s1",cluster_ip="10.0.0.10",external_name="",load_balancer_ip="1.2.3.4",external_traffic_policy="Local"} 1
kube_service_info{namespace="shop",service="db",uid="s2",cluster_ip="",external_name="db.example.com",load_balancer_ip="",external_traffic_policy=""} 1
# HELP kube_service_created [STABLE] Unix creation timestamp
# TYPE kube_service_created gauge
kube_service_created{namespace="shop",service="web",uid="s1"} 1.7956008e+09
# HELP kube_service_spec_type [STABLE] Type about service.
# TYPE kube_service_spec_type gauge
kube_service_spec_type{namespace="shop",service="web",uid="s1",type="LoadBalancer"} 1
kube_service_spec_type{namespace="shop",service="db",uid="s2",type="ExternalName"} 1
# HELP kube_service_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_service_annotations gauge
kube_service_annotations{namespace="shop",service="web",uid="s1",annotation_owner="ops"} 1
kube_service_annotations{namespace="shop",service="db",uid="s2"} 1
# HELP kube_service_labels [STABLE] Kubernetes labels converted to Prometheus labels.
# TYPE kube_service_labels gauge
kube_service_labels{namespace="shop",service="web",uid="s1",label_app="web"} 1
kube_service_labels{namespace="shop",service="db",uid="s2"} 1
# HELP kube_service_spec_external_ip [STABLE] Service external ips. One series for each ip
# TYPE kube_service_spec_external_ip gauge
kube_service_spec_external_ip{namespace="shop",service="web",uid="s1",external_ip="5.6.7.8"} 1
kube_service_spec_external_ip{namespace="shop",service="web",uid="s1",external_ip="5.6.7.9"} 1
# HELP kube_service_status_load_balancer_ingress [STABLE] Service load balancer ingress status
# TYPE kube_service_status_load_balancer_ingress gauge
kube_service_status_load_balancer_ingress{namespace="shop",service="web",uid="s1",ip="1.2.3.4",hostname=""} 1
kube_service_status_load_balancer_ingress{namespace="shop",service="web",uid="s1",ip="",hostname="lb.example.com"} 1
# HELP kube_service_deletion_timestamp Unix deletion timestamp
# TYPE kube_service_deletion_timestamp gauge
kube_service_deletion_timestamp{namespace="shop",service="web",uid="s1"} 1.7956008e+09
`)
}

func TestEndpointSlices(t *testing.T) {
	tcp := corev1.ProtocolTCP
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-abc", UID: "e1", CreationTimestamp: t0,
			Labels: map[string]string{"kubernetes.io/service-name": "web"}, Annotations: map[string]string{"owner": "ops"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.1.0.1", "10.1.0.2"}, Hostname: ptr("web-0"), NodeName: ptr("n1"), Zone: ptr("z1"),
				Conditions: discoveryv1.EndpointConditions{Ready: ptr(true), Serving: ptr(true), Terminating: ptr(false)},
				TargetRef:  &corev1.ObjectReference{Kind: "Pod", Name: "web-0", Namespace: "shop"},
				Hints:      &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "z1"}, {Name: "z2"}}}},
			// No conditions set: the condition labels are "".
			{Addresses: []string{"10.1.0.3"}},
			// Hints but no address: no hint series.
			{Hints: &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "z3"}}}},
		},
		Ports: []discoveryv1.EndpointPort{{Name: ptr("http"), Protocol: &tcp, Port: ptr(int32(8080))}, {}},
	}
	got := renderWith(t, "endpointslices", "endpointslices=[kubernetes.io/service-name]", "endpointslices=[owner]", s)
	expectWhole(t, got, `
# HELP kube_endpointslice_info Information about endpointslice.
# TYPE kube_endpointslice_info gauge
kube_endpointslice_info{endpointslice="web-abc",namespace="shop",addresstype="IPv4"} 1
# HELP kube_endpointslice_created Unix creation timestamp
# TYPE kube_endpointslice_created gauge
kube_endpointslice_created{endpointslice="web-abc",namespace="shop"} 1.7956008e+09
# HELP kube_endpointslice_endpoints_hints Topology routing hints attached to endpoints
# TYPE kube_endpointslice_endpoints_hints gauge
kube_endpointslice_endpoints_hints{endpointslice="web-abc",namespace="shop",address="10.1.0.1",for_zone="z1"} 1
kube_endpointslice_endpoints_hints{endpointslice="web-abc",namespace="shop",address="10.1.0.1",for_zone="z2"} 1
# HELP kube_endpointslice_endpoints Endpoints attached to the endpointslice.
# TYPE kube_endpointslice_endpoints gauge
kube_endpointslice_endpoints{address="10.1.0.1",endpoint_nodename="n1",endpoint_zone="z1",endpointslice="web-abc",hostname="web-0",namespace="shop",ready="true",serving="true",targetref_kind="Pod",targetref_name="web-0",targetref_namespace="shop",terminating="false"} 1
kube_endpointslice_endpoints{address="10.1.0.2",endpoint_nodename="n1",endpoint_zone="z1",endpointslice="web-abc",hostname="web-0",namespace="shop",ready="true",serving="true",targetref_kind="Pod",targetref_name="web-0",targetref_namespace="shop",terminating="false"} 1
kube_endpointslice_endpoints{address="10.1.0.3",endpoint_nodename="",endpoint_zone="",endpointslice="web-abc",hostname="",namespace="shop",ready="",serving="",targetref_kind="",targetref_name="",targetref_namespace="",terminating=""} 1
# HELP kube_endpointslice_ports Ports attached to the endpointslice.
# TYPE kube_endpointslice_ports gauge
kube_endpointslice_ports{endpointslice="web-abc",namespace="shop",port_name="",port_number="",port_protocol=""} 1
kube_endpointslice_ports{endpointslice="web-abc",namespace="shop",port_name="http",port_number="8080",port_protocol="TCP"} 1
# HELP kube_endpointslice_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_endpointslice_annotations gauge
kube_endpointslice_annotations{endpointslice="web-abc",namespace="shop",annotation_owner="ops"} 1
# HELP kube_endpointslice_labels Kubernetes labels converted to Prometheus labels.
# TYPE kube_endpointslice_labels gauge
kube_endpointslice_labels{endpointslice="web-abc",namespace="shop",label_kubernetes_io_service_name="web"} 1
`)
}

func TestIngresses(t *testing.T) {
	prefix, exact := networkingv1.PathTypePrefix, networkingv1.PathTypeExact
	web := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "i1", CreationTimestamp: t0, ResourceVersion: "4711",
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"kubernetes.io/ingress.class": "nginx"}},
		Spec: networkingv1.IngressSpec{IngressClassName: ptr("traefik"),
			Rules: []networkingv1.IngressRule{{Host: "shop.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
				{Path: "/", PathType: &prefix, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}},
				{Path: "/api", PathType: &exact, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "api", Port: networkingv1.ServiceBackendPort{Name: "http"}}}},
				{Path: "/static", Backend: networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{APIGroup: ptr("storage.example.com"), Kind: "Bucket", Name: "assets"}}},
			}}}}, {Host: "no-http.example.com"}},
			TLS: []networkingv1.IngressTLS{{Hosts: []string{"shop.example.com", "www.example.com"}, SecretName: "shop-tls"}}},
	}
	// Neither annotation nor class name: "_default".
	bare := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "bare", UID: "i2", ResourceVersion: "12"},
		Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web"}}}}
	named := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "named", UID: "i3"},
		Spec: networkingv1.IngressSpec{IngressClassName: ptr("traefik")}}
	got := renderWith(t, "ingresses", "ingresses=[app]", "", web, bare, named)
	expectWhole(t, got, `
# HELP kube_ingress_info [STABLE] Information about ingress.
# TYPE kube_ingress_info gauge
kube_ingress_info{namespace="shop",ingress="web",ingressclass="nginx"} 1
kube_ingress_info{namespace="shop",ingress="bare",ingressclass="_default"} 1
kube_ingress_info{namespace="shop",ingress="named",ingressclass="traefik"} 1
# HELP kube_ingress_labels [STABLE] Kubernetes labels converted to Prometheus labels.
# TYPE kube_ingress_labels gauge
kube_ingress_labels{namespace="shop",ingress="web",label_app="web"} 1
kube_ingress_labels{namespace="shop",ingress="bare"} 1
kube_ingress_labels{namespace="shop",ingress="named"} 1
# HELP kube_ingress_created [STABLE] Unix creation timestamp
# TYPE kube_ingress_created gauge
kube_ingress_created{namespace="shop",ingress="web"} 1.7956008e+09
# HELP kube_ingress_metadata_resource_version Resource version representing a specific version of ingress.
# TYPE kube_ingress_metadata_resource_version gauge
kube_ingress_metadata_resource_version{namespace="shop",ingress="web"} 4711
kube_ingress_metadata_resource_version{namespace="shop",ingress="bare"} 12
# HELP kube_ingress_path [STABLE] Ingress host, paths and backend service information.
# TYPE kube_ingress_path gauge
kube_ingress_path{host="shop.example.com",ingress="web",namespace="shop",path="/",path_type="Prefix",service_name="web",service_port="80"} 1
kube_ingress_path{host="shop.example.com",ingress="web",namespace="shop",path="/api",path_type="Exact",service_name="api",service_port="0"} 1
kube_ingress_path{host="shop.example.com",ingress="web",namespace="shop",path="/static",path_type="",resource_api_group="storage.example.com",resource_kind="Bucket",resource_name="assets"} 1
# HELP kube_ingress_tls [STABLE] Ingress TLS host and secret information.
# TYPE kube_ingress_tls gauge
kube_ingress_tls{namespace="shop",ingress="web",tls_host="shop.example.com",secret="shop-tls"} 1
kube_ingress_tls{namespace="shop",ingress="web",tls_host="www.example.com",secret="shop-tls"} 1
`)
}

func TestNetworkPolicies(t *testing.T) {
	deny := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "deny", UID: "p1", CreationTimestamp: t0,
			Labels: map[string]string{"team": "sec"}, Annotations: map[string]string{"owner": "ops"}},
		Spec: networkingv1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{}, {}}, Egress: []networkingv1.NetworkPolicyEgressRule{{}}},
	}
	// No creation time: Go's zero time, as kube-state-metrics reads it.
	bare := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "bare", UID: "p2"}}
	got := renderWith(t, "networkpolicies", "networkpolicies=[team]", "networkpolicies=[owner]", deny, bare)
	expectWhole(t, got, `
# HELP kube_networkpolicy_created Unix creation timestamp of network policy
# TYPE kube_networkpolicy_created gauge
kube_networkpolicy_created{namespace="shop",networkpolicy="deny"} 1.7956008e+09
kube_networkpolicy_created{namespace="shop",networkpolicy="bare"} -6.21355968e+10
# HELP kube_networkpolicy_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_networkpolicy_annotations gauge
kube_networkpolicy_annotations{namespace="shop",networkpolicy="deny",annotation_owner="ops"} 1
kube_networkpolicy_annotations{namespace="shop",networkpolicy="bare"} 1
# HELP kube_networkpolicy_labels Kubernetes labels converted to Prometheus labels.
# TYPE kube_networkpolicy_labels gauge
kube_networkpolicy_labels{namespace="shop",networkpolicy="deny",label_team="sec"} 1
kube_networkpolicy_labels{namespace="shop",networkpolicy="bare"} 1
# HELP kube_networkpolicy_spec_ingress_rules Number of ingress rules on the networkpolicy
# TYPE kube_networkpolicy_spec_ingress_rules gauge
kube_networkpolicy_spec_ingress_rules{namespace="shop",networkpolicy="deny"} 2
kube_networkpolicy_spec_ingress_rules{namespace="shop",networkpolicy="bare"} 0
# HELP kube_networkpolicy_spec_egress_rules Number of egress rules on the networkpolicy
# TYPE kube_networkpolicy_spec_egress_rules gauge
kube_networkpolicy_spec_egress_rules{namespace="shop",networkpolicy="deny"} 1
kube_networkpolicy_spec_egress_rules{namespace="shop",networkpolicy="bare"} 0
`)
}

func TestIngressClasses(t *testing.T) {
	nginx := &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", UID: "c1", CreationTimestamp: t0,
			Labels: map[string]string{"team": "edge"}, Annotations: map[string]string{"ingressclass.kubernetes.io/is-default-class": "true"}},
		Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"},
	}
	bare := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "bare", UID: "c2"}}
	got := renderWith(t, "ingressclasses", "ingressclasses=[team]", "ingressclasses=[*]", nginx, bare)
	expectWhole(t, got, `
# HELP kube_ingressclass_info Information about ingressclass.
# TYPE kube_ingressclass_info gauge
kube_ingressclass_info{ingressclass="nginx",controller="k8s.io/ingress-nginx"} 1
kube_ingressclass_info{ingressclass="bare",controller=""} 1
# HELP kube_ingressclass_created Unix creation timestamp
# TYPE kube_ingressclass_created gauge
kube_ingressclass_created{ingressclass="nginx"} 1.7956008e+09
# HELP kube_ingressclass_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_ingressclass_annotations gauge
kube_ingressclass_annotations{ingressclass="nginx",annotation_ingressclass_kubernetes_io_is_default_class="true"} 1
kube_ingressclass_annotations{ingressclass="bare"} 1
# HELP kube_ingressclass_labels Kubernetes labels converted to Prometheus labels.
# TYPE kube_ingressclass_labels gauge
kube_ingressclass_labels{ingressclass="nginx",label_team="edge"} 1
kube_ingressclass_labels{ingressclass="bare"} 1
`)
}

//nolint:staticcheck // SA1019: kube-state-metrics still reports v1 Endpoints, deprecated since Kubernetes 1.33.
func TestEndpoints(t *testing.T) {
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	ep := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "e1", CreationTimestamp: t0,
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"owner": "ops"}},
		Subsets: []corev1.EndpointSubset{{
			Addresses:         []corev1.EndpointAddress{{IP: "10.0.0.1"}, {IP: "10.0.0.2"}},
			NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.0.0.3"}},
			Ports:             []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: tcp}, {Name: "dns", Port: 53, Protocol: udp}},
		}},
	}
	// No subsets: no address or port series.
	bare := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "bare", UID: "e2"}}
	got := renderWith(t, "endpoints", "endpoints=[app]", "endpoints=[owner]", ep, bare)
	expectWhole(t, got, `
# HELP kube_endpoint_info [STABLE] Information about endpoint.
# TYPE kube_endpoint_info gauge
kube_endpoint_info{namespace="shop",endpoint="web"} 1
kube_endpoint_info{namespace="shop",endpoint="bare"} 1
# HELP kube_endpoint_created [STABLE] Unix creation timestamp
# TYPE kube_endpoint_created gauge
kube_endpoint_created{namespace="shop",endpoint="web"} 1.7956008e+09
# HELP kube_endpoint_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_endpoint_annotations gauge
kube_endpoint_annotations{namespace="shop",endpoint="web",annotation_owner="ops"} 1
kube_endpoint_annotations{namespace="shop",endpoint="bare"} 1
# HELP kube_endpoint_labels [STABLE] Kubernetes labels converted to Prometheus labels.
# TYPE kube_endpoint_labels gauge
kube_endpoint_labels{namespace="shop",endpoint="web",label_app="web"} 1
kube_endpoint_labels{namespace="shop",endpoint="bare"} 1
# HELP kube_endpoint_address [STABLE] Information about Endpoint available and non available addresses.
# TYPE kube_endpoint_address gauge
kube_endpoint_address{namespace="shop",endpoint="web",port_protocol="TCP",port_number="8080",port_name="http",ip="10.0.0.1",ready="true"} 1
kube_endpoint_address{namespace="shop",endpoint="web",port_protocol="TCP",port_number="8080",port_name="http",ip="10.0.0.2",ready="true"} 1
kube_endpoint_address{namespace="shop",endpoint="web",port_protocol="TCP",port_number="8080",port_name="http",ip="10.0.0.3",ready="false"} 1
kube_endpoint_address{namespace="shop",endpoint="web",port_protocol="UDP",port_number="53",port_name="dns",ip="10.0.0.1",ready="true"} 1
kube_endpoint_address{namespace="shop",endpoint="web",port_protocol="UDP",port_number="53",port_name="dns",ip="10.0.0.2",ready="true"} 1
kube_endpoint_address{namespace="shop",endpoint="web",port_protocol="UDP",port_number="53",port_name="dns",ip="10.0.0.3",ready="false"} 1
# HELP kube_endpoint_ports [STABLE] (Deprecated since v2.14.0) Information about the Endpoint ports.
# TYPE kube_endpoint_ports gauge
kube_endpoint_ports{namespace="shop",endpoint="web",port_name="http",port_protocol="TCP",port_number="8080"} 1
kube_endpoint_ports{namespace="shop",endpoint="web",port_name="dns",port_protocol="UDP",port_number="53"} 1
`)
}
