package profiles_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestConfigMaps(t *testing.T) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings", UID: "m1", CreationTimestamp: t0, ResourceVersion: "981",
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"owner": "ops"}},
		Data: map[string]string{"key": "a value no family shows"},
	}
	bare := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "bare", UID: "m2"}}
	got := renderWith(t, "configmaps", "configmaps=[app]", "configmaps=[owner]", cm, bare)
	expectWhole(t, got, `
# HELP kube_configmap_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_configmap_annotations gauge
kube_configmap_annotations{namespace="shop",configmap="settings",annotation_owner="ops"} 1
kube_configmap_annotations{namespace="shop",configmap="bare"} 1
# HELP kube_configmap_labels [STABLE] Kubernetes labels converted to Prometheus labels.
# TYPE kube_configmap_labels gauge
kube_configmap_labels{namespace="shop",configmap="settings",label_app="web"} 1
kube_configmap_labels{namespace="shop",configmap="bare"} 1
# HELP kube_configmap_info [STABLE] Information about configmap.
# TYPE kube_configmap_info gauge
kube_configmap_info{namespace="shop",configmap="settings"} 1
kube_configmap_info{namespace="shop",configmap="bare"} 1
# HELP kube_configmap_created [STABLE] Unix creation timestamp
# TYPE kube_configmap_created gauge
kube_configmap_created{namespace="shop",configmap="settings"} 1.7956008e+09
# HELP kube_configmap_metadata_resource_version Resource version representing a specific version of the configmap.
# TYPE kube_configmap_metadata_resource_version gauge
kube_configmap_metadata_resource_version{namespace="shop",configmap="settings"} 981
`)
}

func TestSecrets(t *testing.T) {
	const value = "s3cr3t-planted-value"
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db", UID: "x1", CreationTimestamp: t0, ResourceVersion: "77",
			Labels: map[string]string{"app": "db"}, Annotations: map[string]string{"owner": "ops",
				"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"password":"` + base64.StdEncoding.EncodeToString([]byte(value)) + `"}}`},
			OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: "db", Controller: ptr(true)}, {Kind: "ConfigMap", Name: "x"}}},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"password": []byte(value)},
		StringData: map[string]string{"token": value},
	}
	bare := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "bare", UID: "x2"}}
	got := renderWith(t, "secrets", "secrets=[app]", "secrets=[*]", s, bare)
	expectWhole(t, got, `
# HELP kube_secret_info [STABLE] Information about secret.
# TYPE kube_secret_info gauge
kube_secret_info{namespace="shop",secret="db"} 1
kube_secret_info{namespace="shop",secret="bare"} 1
# HELP kube_secret_type [STABLE] Type about secret.
# TYPE kube_secret_type gauge
kube_secret_type{namespace="shop",secret="db",type="Opaque"} 1
kube_secret_type{namespace="shop",secret="bare",type=""} 1
# HELP kube_secret_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_secret_annotations gauge
kube_secret_annotations{namespace="shop",secret="db",annotation_owner="ops"} 1
kube_secret_annotations{namespace="shop",secret="bare"} 1
# HELP kube_secret_labels [STABLE] Kubernetes labels converted to Prometheus labels.
# TYPE kube_secret_labels gauge
kube_secret_labels{namespace="shop",secret="db",label_app="db"} 1
kube_secret_labels{namespace="shop",secret="bare"} 1
# HELP kube_secret_created [STABLE] Unix creation timestamp
# TYPE kube_secret_created gauge
kube_secret_created{namespace="shop",secret="db"} 1.7956008e+09
# HELP kube_secret_metadata_resource_version Resource version representing a specific version of secret.
# TYPE kube_secret_metadata_resource_version gauge
kube_secret_metadata_resource_version{namespace="shop",secret="db"} 77
# HELP kube_secret_owner Information about the Secret's owner.
# TYPE kube_secret_owner gauge
kube_secret_owner{namespace="shop",secret="db",owner_kind="Deployment",owner_name="db",owner_is_controller="true"} 1
kube_secret_owner{namespace="shop",secret="db",owner_kind="ConfigMap",owner_name="x",owner_is_controller="false"} 1
kube_secret_owner{namespace="shop",secret="bare",owner_kind="",owner_name="",owner_is_controller=""} 1
`)
	for _, v := range []string{value, base64.StdEncoding.EncodeToString([]byte(value))} {
		if strings.Contains(got, v) {
			t.Errorf("the exposition holds the secret's value %q", v)
		}
	}
}

func TestStorageClasses(t *testing.T) {
	retain, wait := corev1.PersistentVolumeReclaimRetain, storagev1.VolumeBindingWaitForFirstConsumer
	fast := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: "fast", UID: "c1", CreationTimestamp: t0,
			Labels: map[string]string{"tier": "ssd"}, Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner: "ebs.csi.aws.com", ReclaimPolicy: &retain, VolumeBindingMode: &wait,
	}
	// The API's defaults when neither is stated.
	plain := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "plain", UID: "c2"}, Provisioner: "example.com/nfs"}
	got := renderWith(t, "storageclasses", "storageclasses=[tier]", "storageclasses=[storageclass.kubernetes.io/is-default-class]", fast, plain)
	expectWhole(t, got, `
# HELP kube_storageclass_info [STABLE] Information about storageclass.
# TYPE kube_storageclass_info gauge
kube_storageclass_info{storageclass="fast",provisioner="ebs.csi.aws.com",reclaim_policy="Retain",volume_binding_mode="WaitForFirstConsumer"} 1
kube_storageclass_info{storageclass="plain",provisioner="example.com/nfs",reclaim_policy="Delete",volume_binding_mode="Immediate"} 1
# HELP kube_storageclass_created [STABLE] Unix creation timestamp
# TYPE kube_storageclass_created gauge
kube_storageclass_created{storageclass="fast"} 1.7956008e+09
# HELP kube_storageclass_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_storageclass_annotations gauge
kube_storageclass_annotations{storageclass="fast",annotation_storageclass_kubernetes_io_is_default_class="true"} 1
kube_storageclass_annotations{storageclass="plain"} 1
# HELP kube_storageclass_labels [STABLE] Kubernetes labels converted to Prometheus labels.
# TYPE kube_storageclass_labels gauge
kube_storageclass_labels{storageclass="fast",label_tier="ssd"} 1
kube_storageclass_labels{storageclass="plain"} 1
`)
}

func TestVolumeAttachments(t *testing.T) {
	pv := "pv-1"
	attached := &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: "csi-123", UID: "a1", CreationTimestamp: t0, Labels: map[string]string{"team": "db", "app.kubernetes.io/name": "x"}},
		Spec:       storagev1.VolumeAttachmentSpec{Attacher: "ebs.csi.aws.com", NodeName: "n1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}},
		Status:     storagev1.VolumeAttachmentStatus{Attached: true, AttachmentMetadata: map[string]string{"devicePath": "/dev/xvdba"}},
	}
	// An inline volume, not attached yet.
	inline := &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: "csi-456", UID: "a2"},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "ebs.csi.aws.com", NodeName: "n2",
			Source: storagev1.VolumeAttachmentSource{InlineVolumeSpec: &corev1.PersistentVolumeSpec{}}},
	}
	// Labels are every label, whatever the allowlist says, and attachment
	// metadata keys become snake_case label names, as in kube-state-metrics.
	got := renderWith(t, "volumeattachments", "", "", attached, inline)
	expectWhole(t, got, `
# HELP kube_volumeattachment_labels Kubernetes labels converted to Prometheus labels.
# TYPE kube_volumeattachment_labels gauge
kube_volumeattachment_labels{volumeattachment="csi-123",label_team="db",label_app_kubernetes_io_name="x"} 1
kube_volumeattachment_labels{volumeattachment="csi-456"} 1
# HELP kube_volumeattachment_info Information about volumeattachment.
# TYPE kube_volumeattachment_info gauge
kube_volumeattachment_info{volumeattachment="csi-123",attacher="ebs.csi.aws.com",node="n1"} 1
kube_volumeattachment_info{volumeattachment="csi-456",attacher="ebs.csi.aws.com",node="n2"} 1
# HELP kube_volumeattachment_created Unix creation timestamp
# TYPE kube_volumeattachment_created gauge
kube_volumeattachment_created{volumeattachment="csi-123"} 1.7956008e+09
# HELP kube_volumeattachment_spec_source_persistentvolume PersistentVolume source reference.
# TYPE kube_volumeattachment_spec_source_persistentvolume gauge
kube_volumeattachment_spec_source_persistentvolume{volumeattachment="csi-123",volumename="pv-1"} 1
# HELP kube_volumeattachment_status_attached Information about volumeattachment.
# TYPE kube_volumeattachment_status_attached gauge
kube_volumeattachment_status_attached{volumeattachment="csi-123"} 1
kube_volumeattachment_status_attached{volumeattachment="csi-456"} 0
# HELP kube_volumeattachment_status_attachment_metadata volumeattachment metadata.
# TYPE kube_volumeattachment_status_attachment_metadata gauge
kube_volumeattachment_status_attachment_metadata{volumeattachment="csi-123",metadata_device_path="/dev/xvdba"} 1
kube_volumeattachment_status_attachment_metadata{volumeattachment="csi-456"} 1
`)
}

func TestLimitRanges(t *testing.T) {
	lr := &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "limits", UID: "l1", CreationTimestamp: t0},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
			{Type: corev1.LimitTypeContainer,
				Min:                  corev1.ResourceList{"cpu": resource.MustParse("50m")},
				Max:                  corev1.ResourceList{"memory": resource.MustParse("1Gi")},
				Default:              corev1.ResourceList{"cpu": resource.MustParse("500m")},
				DefaultRequest:       corev1.ResourceList{"cpu": resource.MustParse("250m")},
				MaxLimitRequestRatio: corev1.ResourceList{"cpu": resource.MustParse("4")}},
			// Too large for thousandths in an int64: the value in units.
			{Type: corev1.LimitTypePersistentVolumeClaim, Max: corev1.ResourceList{"storage": resource.MustParse("10Pi")}},
		}},
	}
	bare := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "bare", UID: "l2"}}
	got := renderWith(t, "limitranges", "", "", lr, bare)
	expectWhole(t, got, `
# HELP kube_limitrange [STABLE] Information about limit range.
# TYPE kube_limitrange gauge
kube_limitrange{namespace="shop",limitrange="limits",resource="cpu",type="Container",constraint="min"} 0.05
kube_limitrange{namespace="shop",limitrange="limits",resource="memory",type="Container",constraint="max"} 1.073741824e+09
kube_limitrange{namespace="shop",limitrange="limits",resource="cpu",type="Container",constraint="default"} 0.5
kube_limitrange{namespace="shop",limitrange="limits",resource="cpu",type="Container",constraint="defaultRequest"} 0.25
kube_limitrange{namespace="shop",limitrange="limits",resource="cpu",type="Container",constraint="maxLimitRequestRatio"} 4
kube_limitrange{namespace="shop",limitrange="limits",resource="storage",type="PersistentVolumeClaim",constraint="max"} 1.125899906842624e+16
# HELP kube_limitrange_created [STABLE] Unix creation timestamp
# TYPE kube_limitrange_created gauge
kube_limitrange_created{namespace="shop",limitrange="limits"} 1.7956008e+09
`)
}

func TestLeases(t *testing.T) {
	renew := metav1.NewMicroTime(t0.Add(1500 * 1e6))
	held := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: "n1", UID: "le1",
			OwnerReferences: []metav1.OwnerReference{{Kind: "Node", Name: "n1"}}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("n1"), RenewTime: &renew},
	}
	free := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "free", UID: "le2"}}
	got := renderWith(t, "leases", "", "", held, free)
	expectWhole(t, got, `
# HELP kube_lease_owner Information about the Lease's owner.
# TYPE kube_lease_owner gauge
kube_lease_owner{lease="n1",owner_kind="Node",owner_name="n1",namespace="kube-node-lease",lease_holder="n1"} 1
kube_lease_owner{lease="free",owner_kind="",owner_name="",namespace="kube-system",lease_holder=""} 1
# HELP kube_lease_renew_time Kube lease renew time.
# TYPE kube_lease_renew_time gauge
kube_lease_renew_time{lease="n1",namespace="kube-node-lease"} 1.795600801e+09
`)
}

func TestCertificateSigningRequests(t *testing.T) {
	cert := []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n") // 59 bytes
	issued := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "csr-1", UID: "r1", CreationTimestamp: t0,
			Labels: map[string]string{"app": "x"}, Annotations: map[string]string{"owner": "ops"}},
		Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: "kubernetes.io/kube-apiserver-client"},
		Status: certificatesv1.CertificateSigningRequestStatus{Certificate: cert, Conditions: []certificatesv1.CertificateSigningRequestCondition{
			{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}},
	}
	denied := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "csr-2", UID: "r2"},
		Spec:       certificatesv1.CertificateSigningRequestSpec{SignerName: "example.com/signer"},
		Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{
			{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue}, {Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue}}},
	}
	got := renderWith(t, "certificatesigningrequests", "certificatesigningrequests=[app]", "certificatesigningrequests=[owner]", issued, denied)
	expectWhole(t, got, `
# HELP kube_certificatesigningrequest_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_certificatesigningrequest_annotations gauge
kube_certificatesigningrequest_annotations{certificatesigningrequest="csr-1",signer_name="kubernetes.io/kube-apiserver-client",annotation_owner="ops"} 1
kube_certificatesigningrequest_annotations{certificatesigningrequest="csr-2",signer_name="example.com/signer"} 1
# HELP kube_certificatesigningrequest_labels [STABLE] Kubernetes labels converted to Prometheus labels.
# TYPE kube_certificatesigningrequest_labels gauge
kube_certificatesigningrequest_labels{certificatesigningrequest="csr-1",signer_name="kubernetes.io/kube-apiserver-client",label_app="x"} 1
kube_certificatesigningrequest_labels{certificatesigningrequest="csr-2",signer_name="example.com/signer"} 1
# HELP kube_certificatesigningrequest_created [STABLE] Unix creation timestamp
# TYPE kube_certificatesigningrequest_created gauge
kube_certificatesigningrequest_created{certificatesigningrequest="csr-1",signer_name="kubernetes.io/kube-apiserver-client"} 1.7956008e+09
# HELP kube_certificatesigningrequest_condition [STABLE] The number of each certificatesigningrequest condition
# TYPE kube_certificatesigningrequest_condition gauge
kube_certificatesigningrequest_condition{certificatesigningrequest="csr-1",signer_name="kubernetes.io/kube-apiserver-client",condition="approved"} 1
kube_certificatesigningrequest_condition{certificatesigningrequest="csr-1",signer_name="kubernetes.io/kube-apiserver-client",condition="denied"} 0
kube_certificatesigningrequest_condition{certificatesigningrequest="csr-1",signer_name="kubernetes.io/kube-apiserver-client",condition="failed"} 0
kube_certificatesigningrequest_condition{certificatesigningrequest="csr-2",signer_name="example.com/signer",condition="approved"} 0
kube_certificatesigningrequest_condition{certificatesigningrequest="csr-2",signer_name="example.com/signer",condition="denied"} 1
kube_certificatesigningrequest_condition{certificatesigningrequest="csr-2",signer_name="example.com/signer",condition="failed"} 1
# HELP kube_certificatesigningrequest_cert_length [STABLE] Length of the issued cert
# TYPE kube_certificatesigningrequest_cert_length gauge
kube_certificatesigningrequest_cert_length{certificatesigningrequest="csr-1",signer_name="kubernetes.io/kube-apiserver-client"} 59
kube_certificatesigningrequest_cert_length{certificatesigningrequest="csr-2",signer_name="example.com/signer"} 0
`)
	// Every length of padding.
	for n := 55; n <= 58; n++ {
		c := issued.DeepCopy()
		c.Status.Certificate = make([]byte, n)
		got := renderWith(t, "certificatesigningrequests", "", "", c)
		want := fmt.Sprintf(`kube_certificatesigningrequest_cert_length{certificatesigningrequest="csr-1",signer_name="kubernetes.io/kube-apiserver-client"} %d`, n)
		if !strings.Contains(got, want+"\n") {
			t.Errorf("certificate of %d bytes: no %q in\n%s", n, want, got)
		}
	}
}

func TestWebhookConfigurations(t *testing.T) {
	mutating := &admissionv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "inject", UID: "w1", CreationTimestamp: t0, ResourceVersion: "300"},
		Webhooks: []admissionv1.MutatingWebhook{
			{Name: "inject.example.com", ClientConfig: admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: "system", Name: "injector"}}},
			{Name: "url.example.com", ClientConfig: admissionv1.WebhookClientConfig{URL: ptr("https://hooks.example.com")}},
		},
	}
	validating := &admissionv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "check", UID: "w2", CreationTimestamp: t0, ResourceVersion: "301"},
		Webhooks: []admissionv1.ValidatingWebhook{
			{Name: "check.example.com", ClientConfig: admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: "system", Name: "checker"}}},
		},
	}
	expectWhole(t, renderWith(t, "mutatingwebhookconfigurations", "", "", mutating), `
# HELP kube_mutatingwebhookconfiguration_info Information about the MutatingWebhookConfiguration.
# TYPE kube_mutatingwebhookconfiguration_info gauge
kube_mutatingwebhookconfiguration_info{mutatingwebhookconfiguration="inject",namespace=""} 1
# HELP kube_mutatingwebhookconfiguration_created Unix creation timestamp.
# TYPE kube_mutatingwebhookconfiguration_created gauge
kube_mutatingwebhookconfiguration_created{mutatingwebhookconfiguration="inject",namespace=""} 1795600800
# HELP kube_mutatingwebhookconfiguration_metadata_resource_version Resource version representing a specific version of the MutatingWebhookConfiguration.
# TYPE kube_mutatingwebhookconfiguration_metadata_resource_version gauge
kube_mutatingwebhookconfiguration_metadata_resource_version{mutatingwebhookconfiguration="inject",namespace=""} 300
# HELP kube_mutatingwebhookconfiguration_webhook_clientconfig_service Service used by the apiserver to connect to a mutating webhook.
# TYPE kube_mutatingwebhookconfiguration_webhook_clientconfig_service gauge
kube_mutatingwebhookconfiguration_webhook_clientconfig_service{mutatingwebhookconfiguration="inject",namespace="",service_name="",service_namespace="",webhook_name="url.example.com"} 1
kube_mutatingwebhookconfiguration_webhook_clientconfig_service{mutatingwebhookconfiguration="inject",namespace="",service_name="injector",service_namespace="system",webhook_name="inject.example.com"} 1
`)
	expectWhole(t, renderWith(t, "validatingwebhookconfigurations", "", "", validating), `
# HELP kube_validatingwebhookconfiguration_info Information about the ValidatingWebhookConfiguration.
# TYPE kube_validatingwebhookconfiguration_info gauge
kube_validatingwebhookconfiguration_info{namespace="",validatingwebhookconfiguration="check"} 1
# HELP kube_validatingwebhookconfiguration_created Unix creation timestamp.
# TYPE kube_validatingwebhookconfiguration_created gauge
kube_validatingwebhookconfiguration_created{namespace="",validatingwebhookconfiguration="check"} 1795600800
# HELP kube_validatingwebhookconfiguration_metadata_resource_version Resource version representing a specific version of the ValidatingWebhookConfiguration.
# TYPE kube_validatingwebhookconfiguration_metadata_resource_version gauge
kube_validatingwebhookconfiguration_metadata_resource_version{namespace="",validatingwebhookconfiguration="check"} 301
# HELP kube_validatingwebhookconfiguration_webhook_clientconfig_service Service used by the apiserver to connect to a validating webhook.
# TYPE kube_validatingwebhookconfiguration_webhook_clientconfig_service gauge
kube_validatingwebhookconfiguration_webhook_clientconfig_service{namespace="",service_name="checker",service_namespace="system",validatingwebhookconfiguration="check",webhook_name="check.example.com"} 1
`)
}

func TestAdmissionPolicies(t *testing.T) {
	fail, deny := admissionv1.Fail, admissionv1.DenyAction
	vap := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "replicas", UID: "v1", CreationTimestamp: t0},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{FailurePolicy: &fail,
			ParamKind: &admissionv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}},
	}
	vapb := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "replicas-prod", UID: "v2", CreationTimestamp: t0},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "replicas",
			ParamRef:          &admissionv1.ParamRef{Name: "limits", Namespace: "prod", ParameterNotFoundAction: &deny},
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny, admissionv1.Audit}},
	}
	bareBinding := &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "bare", UID: "v3"},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "replicas"}}
	never := admissionv1.NeverReinvocationPolicy
	mp := &admissionv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "sidecar", UID: "m1", CreationTimestamp: t0},
		Spec:       admissionv1.MutatingAdmissionPolicySpec{FailurePolicy: &fail, ReinvocationPolicy: never},
	}
	mpb := &admissionv1.MutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "sidecar-all", UID: "m2", CreationTimestamp: t0},
		Spec: admissionv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "sidecar",
			ParamRef: &admissionv1.ParamRef{Name: "defaults"}},
	}
	expectWhole(t, renderWith(t, "validatingadmissionpolicies", "", "", vap), `
# HELP kube_validatingadmissionpolicy_info Information about the ValidatingAdmissionPolicy.
# TYPE kube_validatingadmissionpolicy_info gauge
kube_validatingadmissionpolicy_info{failure_policy="Fail",namespace="",param_api_version="v1",param_kind="ConfigMap",validatingadmissionpolicy="replicas"} 1
# HELP kube_validatingadmissionpolicy_created Unix creation timestamp.
# TYPE kube_validatingadmissionpolicy_created gauge
kube_validatingadmissionpolicy_created{namespace="",validatingadmissionpolicy="replicas"} 1795600800
`)
	expectWhole(t, renderWith(t, "validatingadmissionpolicybindings", "", "", vapb, bareBinding), `
# HELP kube_validatingadmissionpolicybinding_info Information about the ValidatingAdmissionPolicyBinding.
# TYPE kube_validatingadmissionpolicybinding_info gauge
kube_validatingadmissionpolicybinding_info{namespace="",param_name="",param_namespace="",param_not_found_action="",policy_name="replicas",validatingadmissionpolicybinding="bare"} 1
kube_validatingadmissionpolicybinding_info{namespace="",param_name="limits",param_namespace="prod",param_not_found_action="Deny",policy_name="replicas",validatingadmissionpolicybinding="replicas-prod"} 1
# HELP kube_validatingadmissionpolicybinding_created Unix creation timestamp.
# TYPE kube_validatingadmissionpolicybinding_created gauge
kube_validatingadmissionpolicybinding_created{namespace="",validatingadmissionpolicybinding="replicas-prod"} 1795600800
# HELP kube_validatingadmissionpolicybinding_validation_action Validation actions for the ValidatingAdmissionPolicyBinding.
# TYPE kube_validatingadmissionpolicybinding_validation_action gauge
kube_validatingadmissionpolicybinding_validation_action{action="Audit",namespace="",validatingadmissionpolicybinding="replicas-prod"} 1
kube_validatingadmissionpolicybinding_validation_action{action="Deny",namespace="",validatingadmissionpolicybinding="replicas-prod"} 1
`)
	expectWhole(t, renderWith(t, "mutatingadmissionpolicies", "", "", mp), `
# HELP kube_mutatingadmissionpolicy_info Information about the MutatingAdmissionPolicy.
# TYPE kube_mutatingadmissionpolicy_info gauge
kube_mutatingadmissionpolicy_info{failure_policy="Fail",mutatingadmissionpolicy="sidecar",namespace="",param_api_version="",param_kind="",reinvocation_policy="Never"} 1
# HELP kube_mutatingadmissionpolicy_created Unix creation timestamp.
# TYPE kube_mutatingadmissionpolicy_created gauge
kube_mutatingadmissionpolicy_created{mutatingadmissionpolicy="sidecar",namespace=""} 1795600800
`)
	expectWhole(t, renderWith(t, "mutatingadmissionpolicybindings", "", "", mpb), `
# HELP kube_mutatingadmissionpolicybinding_info Information about the MutatingAdmissionPolicyBinding.
# TYPE kube_mutatingadmissionpolicybinding_info gauge
kube_mutatingadmissionpolicybinding_info{mutatingadmissionpolicybinding="sidecar-all",namespace="",param_name="defaults",param_namespace="",param_not_found_action="",policy_name="sidecar"} 1
# HELP kube_mutatingadmissionpolicybinding_created Unix creation timestamp.
# TYPE kube_mutatingadmissionpolicybinding_created gauge
kube_mutatingadmissionpolicybinding_created{mutatingadmissionpolicybinding="sidecar-all",namespace=""} 1795600800
`)
}
