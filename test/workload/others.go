package workload

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// SecretValue is the value of the secret Spec.Others creates in each
// namespace (under the key "password"): no exporter output and no log line
// may hold it.
const SecretValue = "workload-planted-secret-value-7f3a"

// StorageClassName is the storage class Spec.Others creates.
const StorageClassName = "standard"

// ServiceName is the load balancer service Spec.Others creates in each
// namespace, with the endpoint slice, ingress backend and config map of the
// same name.
const ServiceName = "web"

// nothings is what the admission webhooks and policies of Spec.Others
// match: a resource no API server serves, so they never act.
var nothings = []string{"nothings"}

// loadOthers creates the per-namespace objects of Spec.Others in
// namespace i; count counts each object created or existing.
func (s Spec) loadOthers(ctx context.Context, cs kubernetes.Interface, i int, count func(error) error) error {
	ns := s.NamespaceName(i)
	core := cs.CoreV1()
	node, err := core.Nodes().Get(ctx, s.NodeName(0), metav1.GetOptions{})
	if err != nil {
		return err
	}
	labels := map[string]string{"app": ServiceName}
	lb := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: ServiceName, Labels: labels},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: labels,
			Ports:                 []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}},
			ExternalIPs:           []string{"192.0.2.10"},
			ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
			{IP: "192.0.2.1"}, {Hostname: "lb.example.com"}}}},
	}
	steps := []func() error{
		func() error {
			return createWithStatus(ctx, core.Services(ns), lb,
				func(got, want *corev1.Service) { got.Status = want.Status })
		},
		func() error {
			// A service being deleted, held by a finalizer.
			_, err := core.Services(ns).Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "leaving", Finalizers: []string{finalizer}},
				Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 80}}},
			}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			return core.Services(ns).Delete(ctx, "leaving", metav1.DeleteOptions{})
		},
		func() error {
			tcp := corev1.ProtocolTCP
			_, err := cs.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
				ObjectMeta:  metav1.ObjectMeta{Name: ServiceName + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: ServiceName}},
				AddressType: discoveryv1.AddressTypeIPv4,
				Endpoints: []discoveryv1.Endpoint{{
					Addresses:  []string{"10.1.0.1"},
					Conditions: discoveryv1.EndpointConditions{Ready: ptr(true), Serving: ptr(true), Terminating: ptr(false)},
					Hostname:   ptr("web-0"), NodeName: ptr(node.Name), Zone: ptr(s.Zones[0]),
					TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "web-0"},
					Hints:     &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: s.Zones[0]}}},
				}},
				Ports: []discoveryv1.EndpointPort{{Name: ptr("http"), Protocol: &tcp, Port: ptr(int32(8080))}},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			// The service's Endpoints, as the endpoints controller would
			// write them beside its endpoint slice: kube-state-metrics still
			// reports v1 Endpoints, deprecated since Kubernetes 1.33.
			//nolint:staticcheck // SA1019: as said
			_, err := core.Endpoints(ns).Create(ctx, &corev1.Endpoints{
				ObjectMeta: metav1.ObjectMeta{Name: ServiceName, Labels: labels},
				Subsets: []corev1.EndpointSubset{{
					Addresses:         []corev1.EndpointAddress{{IP: "10.1.0.1", NodeName: ptr(node.Name)}},
					NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.1.0.9"}},
					Ports:             []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}},
				}},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := core.ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{
				ObjectMeta:                   metav1.ObjectMeta{Name: ServiceName, Labels: labels},
				AutomountServiceAccountToken: ptr(false),
				Secrets:                      []corev1.ObjectReference{{Name: "db-credentials"}},
				ImagePullSecrets:             []corev1.LocalObjectReference{{Name: "registry"}},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := core.ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: ServiceName, Labels: labels},
				Data:       map[string]string{"listen": ":8080"},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := core.Secrets(ns).Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: "db-credentials", Labels: labels},
				Type:       corev1.SecretTypeOpaque,
				Data:       map[string][]byte{"password": []byte(SecretValue)},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			prefix, specific := networkingv1.PathTypePrefix, networkingv1.PathTypeImplementationSpecific
			_, err := cs.NetworkingV1().Ingresses(ns).Create(ctx, &networkingv1.Ingress{
				ObjectMeta: metav1.ObjectMeta{Name: ServiceName, Labels: labels},
				Spec: networkingv1.IngressSpec{IngressClassName: ptr("nginx"),
					Rules: []networkingv1.IngressRule{{Host: ns + ".example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
						Paths: []networkingv1.HTTPIngressPath{
							{Path: "/", PathType: &prefix, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
								Name: ServiceName, Port: networkingv1.ServiceBackendPort{Number: 80}}}},
							{Path: "/static", PathType: &specific, Backend: networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{
								APIGroup: ptr("storage.example.com"), Kind: "Bucket", Name: "assets"}}},
						}}}}},
					TLS: []networkingv1.IngressTLS{{Hosts: []string{ns + ".example.com"}, SecretName: ServiceName + "-tls"}}},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, &networkingv1.NetworkPolicy{
				ObjectMeta: metav1.ObjectMeta{Name: "default", Labels: labels},
				Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
					Ingress: []networkingv1.NetworkPolicyIngressRule{{}}, Egress: []networkingv1.NetworkPolicyEgressRule{{}, {}}},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			q := resource.MustParse
			_, err := core.LimitRanges(ns).Create(ctx, &corev1.LimitRange{
				ObjectMeta: metav1.ObjectMeta{Name: "limits"},
				Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
					Min:                  corev1.ResourceList{corev1.ResourceCPU: q("50m")},
					Max:                  corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("1Gi")},
					Default:              corev1.ResourceList{corev1.ResourceCPU: q("500m")},
					DefaultRequest:       corev1.ResourceList{corev1.ResourceCPU: q("250m")},
					MaxLimitRequestRatio: corev1.ResourceList{corev1.ResourceCPU: q("4")}}}},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			renew := metav1.NewMicroTime(s.Now)
			_, err := cs.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: "leader",
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr(ServiceName + "-0"), LeaseDurationSeconds: ptr(int32(15)), RenewTime: &renew},
			}, metav1.CreateOptions{})
			return err
		},
	}
	for _, step := range steps {
		if err := count(step()); err != nil {
			return err
		}
	}
	return nil
}

// loadClusterOthers creates the cluster-scoped objects of Spec.Others;
// count counts each object created or existing.
func (s Spec) loadClusterOthers(ctx context.Context, cs kubernetes.Interface, count func(error) error) error {
	adm := cs.AdmissionregistrationV1()
	ns := s.NamespaceName(0)
	rules := []admissionv1.RuleWithOperations{{Operations: []admissionv1.OperationType{admissionv1.Create},
		Rule: admissionv1.Rule{APIGroups: []string{"example.com"}, APIVersions: []string{"v1"}, Resources: nothings}}}
	constraints := &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: rules[0]}}}
	hook := admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: ns, Name: "admission", Port: ptr(int32(443))}}
	none, ignore, fail := admissionv1.SideEffectClassNone, admissionv1.Ignore, admissionv1.Fail
	allow := admissionv1.AllowAction
	steps := []func() error{
		func() error {
			retain, wait := corev1.PersistentVolumeReclaimRetain, storagev1.VolumeBindingWaitForFirstConsumer
			_, err := cs.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
				ObjectMeta:  metav1.ObjectMeta{Name: StorageClassName, Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
				Provisioner: "csi.example.com", ReclaimPolicy: &retain, VolumeBindingMode: &wait,
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			va := &storagev1.VolumeAttachment{
				ObjectMeta: metav1.ObjectMeta{Name: "csi-" + ns},
				Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: s.NodeName(0),
					Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr("pv-" + ns)}},
				Status: storagev1.VolumeAttachmentStatus{Attached: true, AttachmentMetadata: map[string]string{"devicePath": "/dev/xvdba"}},
			}
			return createWithStatus(ctx, cs.StorageV1().VolumeAttachments(), va,
				func(got, want *storagev1.VolumeAttachment) { got.Status = want.Status })
		},
		func() error { return s.createCSR(ctx, cs) },
		func() error {
			_, err := cs.NetworkingV1().IngressClasses().Create(ctx, &networkingv1.IngressClass{
				ObjectMeta: metav1.ObjectMeta{Name: "nginx", Labels: map[string]string{"app.kubernetes.io/name": "ingress-nginx"}},
				Spec:       networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := adm.MutatingWebhookConfigurations().Create(ctx, &admissionv1.MutatingWebhookConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: "workload-defaults"},
				Webhooks: []admissionv1.MutatingWebhook{{Name: "defaults.example.com", ClientConfig: hook, Rules: rules,
					SideEffects: &none, FailurePolicy: &ignore, AdmissionReviewVersions: []string{"v1"}}},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := adm.ValidatingWebhookConfigurations().Create(ctx, &admissionv1.ValidatingWebhookConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: "workload-checks"},
				Webhooks: []admissionv1.ValidatingWebhook{{Name: "checks.example.com", ClientConfig: hook, Rules: rules,
					SideEffects: &none, FailurePolicy: &ignore, AdmissionReviewVersions: []string{"v1"}}},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := adm.ValidatingAdmissionPolicies().Create(ctx, &admissionv1.ValidatingAdmissionPolicy{
				ObjectMeta: metav1.ObjectMeta{Name: "workload-replicas"},
				Spec: admissionv1.ValidatingAdmissionPolicySpec{FailurePolicy: &fail, MatchConstraints: constraints,
					ParamKind:   &admissionv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
					Validations: []admissionv1.Validation{{Expression: "true"}}},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := adm.ValidatingAdmissionPolicyBindings().Create(ctx, &admissionv1.ValidatingAdmissionPolicyBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "workload-replicas"},
				Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "workload-replicas",
					ParamRef:          &admissionv1.ParamRef{Name: ServiceName, Namespace: ns, ParameterNotFoundAction: &allow},
					ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny, admissionv1.Audit}},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := adm.MutatingAdmissionPolicies().Create(ctx, &admissionv1.MutatingAdmissionPolicy{
				ObjectMeta: metav1.ObjectMeta{Name: "workload-labels"},
				Spec: admissionv1.MutatingAdmissionPolicySpec{FailurePolicy: &fail, MatchConstraints: constraints,
					ParamKind:          &admissionv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
					ReinvocationPolicy: admissionv1.NeverReinvocationPolicy,
					Mutations: []admissionv1.Mutation{{PatchType: admissionv1.PatchTypeJSONPatch,
						JSONPatch: &admissionv1.JSONPatch{Expression: `[JSONPatch{op: "test", path: "/metadata/name", value: object.metadata.name}]`}}}},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := adm.MutatingAdmissionPolicyBindings().Create(ctx, &admissionv1.MutatingAdmissionPolicyBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "workload-labels"},
				Spec: admissionv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "workload-labels",
					ParamRef: &admissionv1.ParamRef{Name: ServiceName, Namespace: ns, ParameterNotFoundAction: &allow}},
			}, metav1.CreateOptions{})
			return err
		},
	}
	for _, step := range steps {
		if err := count(step()); err != nil {
			return err
		}
	}
	return nil
}

// createCSR creates a certificate signing request for a custom signer,
// approves it and writes the issued certificate, as an approver and a
// signer would.
func (s Spec) createCSR(ctx context.Context, cs kubernetes.Interface) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	subject := pkix.Name{CommonName: "workload-client", Organization: []string{"workload"}}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject}, key)
	if err != nil {
		return err
	}
	csrs := cs.CertificatesV1().CertificateSigningRequests()
	csr, err := csrs.Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "workload-client"},
		Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: "example.com/workload",
			Request: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			Usages:  []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "WorkloadApproved", Message: "approved by the workload"})
	if csr, err = csrs.UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("approving: %w", err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: subject,
		NotBefore: s.Now.Add(-time.Hour), NotAfter: s.Now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	cert, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return err
	}
	csr.Status.Certificate = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert})
	if _, err := csrs.UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("issuing: %w", err)
	}
	return nil
}
