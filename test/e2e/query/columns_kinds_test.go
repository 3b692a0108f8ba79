package query_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// createKindObjects adds to createColumnObjects' namespace ns objects of
// the other kinds whose tables have columns of their own, or NAME and
// CREATED AT, each in the states their cells print differently; the
// cluster-scoped ones are named after ns, labelled columns=NS and removed
// at the end.
func createKindObjects(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	c := cluster.Client
	lbl := map[string]string{"columns": ns}
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Labels: lbl} }
	clusterMeta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: ns + "-" + name, Labels: lbl} }
	quantity := func(s string) *resource.Quantity { q := resource.MustParse(s); return &q }

	// Replication controllers.
	for i, replicas := range []int32{2, 0} {
		rc := &corev1.ReplicationController{ObjectMeta: meta(fmt.Sprintf("legacy-%d", i)), Spec: corev1.ReplicationControllerSpec{
			Replicas: ptr(replicas), Selector: map[string]string{"app": "legacy", "rc": fmt.Sprint(i)},
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "legacy", "rc": fmt.Sprint(i)}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}, {Name: "log", Image: "busybox"}}}},
		}}
		created, err := c.CoreV1().ReplicationControllers(ns).Create(ctx, rc, metav1.CreateOptions{})
		check(t, "creating a replication controller", err)
		created.Status = corev1.ReplicationControllerStatus{Replicas: replicas, ReadyReplicas: replicas / 2}
		_, err = c.CoreV1().ReplicationControllers(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
		check(t, "updating a replication controller's status", err)
	}

	// Resource quotas: requests and limits, and one without status.
	hard := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10"), corev1.ResourceRequestsCPU: resource.MustParse("2"),
		corev1.ResourceLimitsMemory: resource.MustParse("2Gi"), corev1.ResourceLimitsCPU: resource.MustParse("4")}
	q, err := c.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{ObjectMeta: meta("compute"), Spec: corev1.ResourceQuotaSpec{Hard: hard}}, metav1.CreateOptions{})
	check(t, "creating a resource quota", err)
	q.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("3"),
		corev1.ResourceRequestsCPU: resource.MustParse("500m"), corev1.ResourceLimitsMemory: resource.MustParse("512Mi")}}
	_, err = c.CoreV1().ResourceQuotas(ns).UpdateStatus(ctx, q, metav1.UpdateOptions{})
	check(t, "updating a resource quota's status", err)
	_, err = c.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{ObjectMeta: meta("new"), Spec: corev1.ResourceQuotaSpec{Hard: hard}}, metav1.CreateOptions{})
	check(t, "creating a resource quota", err)

	// Disruption budgets: a number, a percentage.
	for _, pdb := range []*policyv1.PodDisruptionBudget{
		{ObjectMeta: meta("min"), Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr(intstr.FromInt32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}},
		{ObjectMeta: meta("max"), Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr(intstr.FromString("25%")),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}},
	} {
		created, err := c.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{})
		check(t, "creating a disruption budget", err)
		if pdb.Name == "min" {
			created.Status = policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, CurrentHealthy: 3, DesiredHealthy: 2, ExpectedPods: 3}
			_, err = c.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
			check(t, "updating a disruption budget's status", err)
		}
	}

	// Autoscalers: every kind of metric, more than two, and none.
	target := autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	metrics := []autoscalingv2.MetricSpec{
		{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(int32(60))}}},
		{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "qps"},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("1k")}}},
		{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "queue"},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: quantity("30")}}},
	}
	for _, hpa := range []*autoscalingv2.HorizontalPodAutoscaler{
		{ObjectMeta: meta("many"), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: target, MinReplicas: ptr(int32(2)), MaxReplicas: 10, Metrics: metrics}},
		{ObjectMeta: meta("two"), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: target, MaxReplicas: 4, Metrics: []autoscalingv2.MetricSpec{
			{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{Name: corev1.ResourceMemory,
				Container: "app", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("512Mi")}}},
			{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{DescribedObject: target,
				Metric: autoscalingv2.MetricIdentifier{Name: "hits"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("100")}}},
		}}},
	} {
		created, err := c.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, hpa, metav1.CreateOptions{})
		check(t, "creating an autoscaler", err)
		if hpa.Name == "many" {
			created.Status = autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3, DesiredReplicas: 3, CurrentMetrics: []autoscalingv2.MetricStatus{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU,
					Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr(int32(42)), AverageValue: quantity("420m")}}},
			}}
			_, err = c.AutoscalingV2().HorizontalPodAutoscalers(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
			check(t, "updating an autoscaler's status", err)
		}
	}

	// Roles and bindings: subjects of each kind, and none.
	rules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}}
	_, err = c.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: meta("reader"), Rules: rules}, metav1.CreateOptions{})
	check(t, "creating a role", err)
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}, {Kind: rbacv1.GroupKind, Name: "devs"}, {Kind: rbacv1.UserKind, Name: "bob"},
		{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "builder"}, {Kind: rbacv1.ServiceAccountKind, Namespace: "other", Name: "deployer"}}
	for _, rb := range []*rbacv1.RoleBinding{
		{ObjectMeta: meta("readers"), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"}, Subjects: subjects},
		{ObjectMeta: meta("nobody"), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}},
	} {
		_, err := c.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{})
		check(t, "creating a role binding", err)
	}
	cr, err := c.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: clusterMeta("reader"), Rules: rules}, metav1.CreateOptions{})
	check(t, "creating a cluster role", err)
	t.Cleanup(func() { _ = c.RbacV1().ClusterRoles().Delete(context.Background(), cr.Name, metav1.DeleteOptions{}) })
	crb, err := c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: clusterMeta("readers"),
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cr.Name}, Subjects: subjects}, metav1.CreateOptions{})
	check(t, "creating a cluster role binding", err)
	t.Cleanup(func() {
		_ = c.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
	})

	// Limit ranges print NAME and CREATED AT.
	_, err = c.CoreV1().LimitRanges(ns).Create(ctx, &corev1.LimitRange{ObjectMeta: meta("defaults"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer, Default: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}}}, metav1.CreateOptions{})
	check(t, "creating a limit range", err)

	// Leases, held and free.
	for _, l := range []*coordinationv1.Lease{
		{ObjectMeta: meta("held"), Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("node-a"), LeaseDurationSeconds: ptr(int32(40))}},
		{ObjectMeta: meta("free")},
	} {
		_, err := c.CoordinationV1().Leases(ns).Create(ctx, l, metav1.CreateOptions{})
		check(t, "creating a lease", err)
	}

	// Endpoints and endpoint slices: ports by number and by name, more
	// addresses than the cell shows, and none.
	//nolint:staticcheck // kubectl still prints them
	_, err = c.CoreV1().Endpoints(ns).Create(ctx, &corev1.Endpoints{ObjectMeta: meta("web"), Subsets: []corev1.EndpointSubset{
		{Addresses: []corev1.EndpointAddress{{IP: "10.1.0.1"}, {IP: "10.1.0.2"}}, Ports: []corev1.EndpointPort{{Name: "http", Port: 80}, {Name: "https", Port: 443}}},
		{Addresses: []corev1.EndpointAddress{{IP: "10.1.0.3"}}},
	}}, metav1.CreateOptions{})
	check(t, "creating endpoints", err)
	_, err = c.CoreV1().Endpoints(ns).Create(ctx, &corev1.Endpoints{ObjectMeta: meta("none")}, metav1.CreateOptions{}) //nolint:staticcheck // as above
	check(t, "creating endpoints", err)
	addresses := func(ips ...string) []discoveryv1.Endpoint {
		var out []discoveryv1.Endpoint
		for _, ip := range ips {
			out = append(out, discoveryv1.Endpoint{Addresses: []string{ip}})
		}
		return out
	}
	for _, es := range []*discoveryv1.EndpointSlice{
		{ObjectMeta: meta("web-1"), AddressType: discoveryv1.AddressTypeIPv4,
			Ports:     []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(80))}, {Name: ptr("metrics")}, {}, {Name: ptr("admin"), Port: ptr(int32(9090))}},
			Endpoints: addresses("10.1.0.1", "10.1.0.2", "10.1.0.3", "10.1.0.4", "10.1.0.5")},
		{ObjectMeta: meta("web-2"), AddressType: discoveryv1.AddressTypeIPv6, Endpoints: addresses("fd00::1")},
		{ObjectMeta: meta("empty"), AddressType: discoveryv1.AddressTypeFQDN},
	} {
		_, err := c.DiscoveryV1().EndpointSlices(ns).Create(ctx, es, metav1.CreateOptions{})
		check(t, "creating an endpoint slice", err)
	}

	// Network policies: every pod, and a selector.
	for _, np := range []*networkingv1.NetworkPolicy{
		{ObjectMeta: meta("deny-all")},
		{ObjectMeta: meta("web"), Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"front"}}}}}},
	} {
		_, err := c.NetworkingV1().NetworkPolicies(ns).Create(ctx, np, metav1.CreateOptions{})
		check(t, "creating a network policy", err)
	}

	// Priority classes, with and without a preemption policy.
	for _, pc := range []*schedulingv1.PriorityClass{
		{ObjectMeta: clusterMeta("batch"), Value: -5, PreemptionPolicy: ptr(corev1.PreemptNever), Description: "batch work"},
		{ObjectMeta: clusterMeta("high"), Value: 100000},
	} {
		_, err := c.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{})
		check(t, "creating a priority class", err)
		t.Cleanup(func() {
			_ = c.SchedulingV1().PriorityClasses().Delete(context.Background(), pc.Name, metav1.DeleteOptions{})
		})
	}

	// Certificate signing requests: pending with a duration, approved,
	// denied.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	check(t, "generating a key", err)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "columns"}}, key)
	check(t, "writing a certificate request", err)
	request := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	for _, state := range []certificatesv1.RequestConditionType{"", certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
		csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: clusterMeta("csr-" + string(state)), Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: request, SignerName: "example.com/signer", Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}}}
		if state == "" {
			csr.Name, csr.Spec.ExpirationSeconds = ns+"-csr-pending", ptr(int32(7200))
		}
		created, err := c.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{})
		check(t, "creating a certificate signing request", err)
		t.Cleanup(func() {
			_ = c.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), created.Name, metav1.DeleteOptions{})
		})
		if state != "" {
			created.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: state, Status: corev1.ConditionTrue, Reason: "Test"}}
			_, err = c.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, created.Name, created, metav1.UpdateOptions{})
			check(t, "approving or denying a certificate signing request", err)
		}
	}
}
