package profiles_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNamespaces(t *testing.T) {
	shop := &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", UID: "n1", CreationTimestamp: t0,
			Labels:      map[string]string{"team": "payments", "kubernetes.io/metadata.name": "shop"},
			Annotations: map[string]string{"owner": "ops", "note": "not allowed"}},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}
	leaving := &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "leaving", UID: "n2", CreationTimestamp: t0},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating, Conditions: []corev1.NamespaceCondition{
			{Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionTrue},
			{Type: corev1.NamespaceFinalizersRemaining, Status: corev1.ConditionUnknown},
		}},
	}
	// No creation time and no phase, as an object written by hand may be.
	bare := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bare", UID: "n3"}}
	got := renderWith(t, "namespaces", "namespaces=[team]", "namespaces=[owner]", shop, leaving, bare)
	expectFamilies(t, got, `
# HELP kube_namespace_created [STABLE] Unix creation timestamp
# TYPE kube_namespace_created gauge
kube_namespace_created{namespace="shop"} 1.7956008e+09
kube_namespace_created{namespace="leaving"} 1.7956008e+09
# HELP kube_namespace_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_namespace_annotations gauge
kube_namespace_annotations{namespace="shop",annotation_owner="ops"} 1
kube_namespace_annotations{namespace="leaving"} 1
kube_namespace_annotations{namespace="bare"} 1
# HELP kube_namespace_labels [STABLE] Kubernetes labels converted to Prometheus labels.
# TYPE kube_namespace_labels gauge
kube_namespace_labels{namespace="shop",label_team="payments"} 1
kube_namespace_labels{namespace="leaving"} 1
kube_namespace_labels{namespace="bare"} 1
# HELP kube_namespace_status_phase [STABLE] kubernetes namespace status phase.
# TYPE kube_namespace_status_phase gauge
kube_namespace_status_phase{namespace="shop",phase="Active"} 1
kube_namespace_status_phase{namespace="shop",phase="Terminating"} 0
kube_namespace_status_phase{namespace="leaving",phase="Active"} 0
kube_namespace_status_phase{namespace="leaving",phase="Terminating"} 1
kube_namespace_status_phase{namespace="bare",phase="Active"} 0
kube_namespace_status_phase{namespace="bare",phase="Terminating"} 0
# HELP kube_namespace_status_condition The condition of a namespace.
# TYPE kube_namespace_status_condition gauge
kube_namespace_status_condition{namespace="leaving",condition="NamespaceDeletionContentFailure",status="true"} 1
kube_namespace_status_condition{namespace="leaving",condition="NamespaceDeletionContentFailure",status="false"} 0
kube_namespace_status_condition{namespace="leaving",condition="NamespaceDeletionContentFailure",status="unknown"} 0
kube_namespace_status_condition{namespace="leaving",condition="NamespaceFinalizersRemaining",status="true"} 0
kube_namespace_status_condition{namespace="leaving",condition="NamespaceFinalizersRemaining",status="false"} 0
kube_namespace_status_condition{namespace="leaving",condition="NamespaceFinalizersRemaining",status="unknown"} 1
`)

	// Without allowlists, the labels and annotations families have no
	// series, as kube-state-metrics' have none.
	expectFamilies(t, render(t, "namespaces", shop), `
# HELP kube_namespace_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_namespace_annotations gauge
# HELP kube_namespace_labels [STABLE] Kubernetes labels converted to Prometheus labels.
# TYPE kube_namespace_labels gauge
`)
}

func TestNodes(t *testing.T) {
	q := resource.MustParse
	full := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "u1", CreationTimestamp: t0, DeletionTimestamp: &t0,
			Labels: map[string]string{"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/worker": "true",
				"topology.kubernetes.io/zone": "a"},
			Annotations: map[string]string{"owner": "ops"}},
		Spec: corev1.NodeSpec{PodCIDR: "10.0.1.0/24", PodCIDRs: []string{"10.0.1.0/24", "fd00::/64"}, ProviderID: "aws:///i-1",
			Unschedulable: true,
			Taints: []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule},
				{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoExecute}}},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{"cpu": q("4"), "memory": q("16Gi"), "pods": q("110"), "ephemeral-storage": q("100Gi"),
				"hugepages-2Mi": q("4Mi"), "example.com/gpu": q("2"), "attachable-volumes-aws-ebs": q("39"), "kubernetes.io/batch": q("1")},
			Allocatable: corev1.ResourceList{"cpu": q("3920m"), "memory": q("15Gi"), "pods": q("110")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue},
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionUnknown}},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeHostName, Address: "n1"},
				{Type: corev1.NodeInternalIP, Address: "10.0.0.2"}},
			NodeInfo: corev1.NodeSystemInfo{KernelVersion: "6.1", OSImage: "Debian", ContainerRuntimeVersion: "containerd://2.1.0",
				KubeletVersion: "v1.36.3", SystemUUID: "uuid-1"},
		},
	}
	bare := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "bare", UID: "u2"}}
	got := renderWith(t, "nodes", "nodes=[topology.kubernetes.io/zone]", "nodes=[owner]", full, bare)
	expectFamilies(t, got, `
# HELP kube_node_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_node_annotations gauge
kube_node_annotations{node="n1",annotation_owner="ops"} 1
kube_node_annotations{node="bare"} 1
# HELP kube_node_created [STABLE] Unix creation timestamp
# TYPE kube_node_created gauge
kube_node_created{node="n1"} 1.7956008e+09
# HELP kube_node_deletion_timestamp Unix deletion timestamp
# TYPE kube_node_deletion_timestamp gauge
kube_node_deletion_timestamp{node="n1"} 1.7956008e+09
# HELP kube_node_info [STABLE] Information about a cluster node.
# TYPE kube_node_info gauge
kube_node_info{node="n1",kernel_version="6.1",os_image="Debian",container_runtime_version="containerd://2.1.0",kubelet_version="v1.36.3",kubeproxy_version="deprecated",provider_id="aws:///i-1",pod_cidr="10.0.1.0/24",system_uuid="uuid-1",internal_ip="10.0.0.2"} 1
kube_node_info{node="bare",kernel_version="",os_image="",container_runtime_version="",kubelet_version="",kubeproxy_version="deprecated",provider_id="",pod_cidr="",system_uuid="",internal_ip=""} 1
# HELP kube_node_labels [STABLE] Kubernetes labels converted to Prometheus labels.
# TYPE kube_node_labels gauge
kube_node_labels{node="n1",label_topology_kubernetes_io_zone="a"} 1
kube_node_labels{node="bare"} 1
# HELP kube_node_role The role of a cluster node.
# TYPE kube_node_role gauge
kube_node_role{node="n1",role="control-plane"} 1
kube_node_role{node="n1",role="worker"} 1
# HELP kube_node_spec_pod_cidrs The pod CIDRs of a cluster node.
# TYPE kube_node_spec_pod_cidrs gauge
kube_node_spec_pod_cidrs{node="n1",pod_cidr="10.0.1.0/24"} 1
kube_node_spec_pod_cidrs{node="n1",pod_cidr="fd00::/64"} 1
# HELP kube_node_spec_taint [STABLE] The taint of a cluster node.
# TYPE kube_node_spec_taint gauge
kube_node_spec_taint{node="n1",key="dedicated",value="db",effect="NoSchedule"} 1
kube_node_spec_taint{node="n1",key="node.kubernetes.io/unreachable",value="",effect="NoExecute"} 1
# HELP kube_node_spec_unschedulable [STABLE] Whether a node can schedule new pods.
# TYPE kube_node_spec_unschedulable gauge
kube_node_spec_unschedulable{node="n1"} 1
kube_node_spec_unschedulable{node="bare"} 0
# HELP kube_node_status_allocatable [STABLE] The allocatable for different resources of a node that are available for scheduling.
# TYPE kube_node_status_allocatable gauge
kube_node_status_allocatable{node="n1",resource="cpu",unit="core"} 3.92
kube_node_status_allocatable{node="n1",resource="memory",unit="byte"} 1.610612736e+10
kube_node_status_allocatable{node="n1",resource="pods",unit="integer"} 110
# HELP kube_node_status_capacity [STABLE] The capacity for different resources of a node.
# TYPE kube_node_status_capacity gauge
kube_node_status_capacity{node="n1",resource="cpu",unit="core"} 4
kube_node_status_capacity{node="n1",resource="memory",unit="byte"} 1.7179869184e+10
kube_node_status_capacity{node="n1",resource="pods",unit="integer"} 110
kube_node_status_capacity{node="n1",resource="ephemeral_storage",unit="byte"} 1.073741824e+11
kube_node_status_capacity{node="n1",resource="hugepages_2Mi",unit="byte"} 4.194304e+06
kube_node_status_capacity{node="n1",resource="example_com_gpu",unit="integer"} 2
kube_node_status_capacity{node="n1",resource="attachable_volumes_aws_ebs",unit="byte"} 39
# HELP kube_node_status_condition [STABLE] The condition of a cluster node.
# TYPE kube_node_status_condition gauge
kube_node_status_condition{node="n1",condition="Ready",status="true"} 1
kube_node_status_condition{node="n1",condition="Ready",status="false"} 0
kube_node_status_condition{node="n1",condition="Ready",status="unknown"} 0
kube_node_status_condition{node="n1",condition="MemoryPressure",status="true"} 0
kube_node_status_condition{node="n1",condition="MemoryPressure",status="false"} 0
kube_node_status_condition{node="n1",condition="MemoryPressure",status="unknown"} 1
# HELP kube_node_status_addresses Node address information.
# TYPE kube_node_status_addresses gauge
kube_node_status_addresses{node="n1",type="InternalIP",address="10.0.0.1"} 1
kube_node_status_addresses{node="n1",type="Hostname",address="n1"} 1
kube_node_status_addresses{node="n1",type="InternalIP",address="10.0.0.2"} 1
`)
}

func TestResourceQuotas(t *testing.T) {
	q := resource.MustParse
	full := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "compute", UID: "r1", CreationTimestamp: t0,
			Labels: map[string]string{"team": "payments"}, Annotations: map[string]string{"owner": "ops"}},
		Status: corev1.ResourceQuotaStatus{
			Hard: corev1.ResourceList{"requests.cpu": q("4"), "limits.memory": q("8Gi"), "count/pods": q("10")},
			Used: corev1.ResourceList{"requests.cpu": q("1500m"), "limits.memory": q("512Mi")},
		},
	}
	// Status not written yet, as before the quota controller's first pass.
	fresh := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "fresh", UID: "r2"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"pods": q("5")}}}
	got := renderWith(t, "resourcequotas", "resourcequotas=[team]", "resourcequotas=[owner]", full, fresh)
	expectFamilies(t, got, `
# HELP kube_resourcequota_created [STABLE] Unix creation timestamp
# TYPE kube_resourcequota_created gauge
kube_resourcequota_created{namespace="shop",resourcequota="compute"} 1.7956008e+09
# HELP kube_resourcequota [STABLE] Information about resource quota.
# TYPE kube_resourcequota gauge
kube_resourcequota{namespace="shop",resourcequota="compute",resource="requests.cpu",type="hard"} 4
kube_resourcequota{namespace="shop",resourcequota="compute",resource="limits.memory",type="hard"} 8.589934592e+09
kube_resourcequota{namespace="shop",resourcequota="compute",resource="count/pods",type="hard"} 10
kube_resourcequota{namespace="shop",resourcequota="compute",resource="requests.cpu",type="used"} 1.5
kube_resourcequota{namespace="shop",resourcequota="compute",resource="limits.memory",type="used"} 5.36870912e+08
# HELP kube_resourcequota_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_resourcequota_annotations gauge
kube_resourcequota_annotations{namespace="shop",resourcequota="compute",annotation_owner="ops"} 1
kube_resourcequota_annotations{namespace="shop",resourcequota="fresh"} 1
# HELP kube_resourcequota_labels [STABLE] Kubernetes labels converted to Prometheus labels.
# TYPE kube_resourcequota_labels gauge
kube_resourcequota_labels{namespace="shop",resourcequota="compute",label_team="payments"} 1
kube_resourcequota_labels{namespace="shop",resourcequota="fresh"} 1
`)
}

func TestPersistentVolumeClaims(t *testing.T) {
	block, class := corev1.PersistentVolumeBlock, "fast"
	full := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "data", UID: "c1", CreationTimestamp: t0, DeletionTimestamp: &t0,
			Labels: map[string]string{"app": "db"}, Annotations: map[string]string{"owner": "ops"}},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &class, VolumeName: "pv-1", VolumeMode: &block,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{"storage": resource.MustParse("1.5Gi")}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Conditions: []corev1.PersistentVolumeClaimCondition{
			{Type: corev1.PersistentVolumeClaimResizing, Status: corev1.ConditionFalse}}},
	}
	// The beta annotation wins over the field; no phase, no request.
	beta := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "beta", UID: "c2",
			Annotations: map[string]string{"volume.beta.kubernetes.io/storage-class": "old"}},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &class},
	}
	got := renderWith(t, "persistentvolumeclaims", "persistentvolumeclaims=[app]", "persistentvolumeclaims=[owner]", full, beta)
	expectFamilies(t, got, `
# HELP kube_persistentvolumeclaim_labels [STABLE] Kubernetes labels converted to Prometheus labels.
# TYPE kube_persistentvolumeclaim_labels gauge
kube_persistentvolumeclaim_labels{namespace="shop",persistentvolumeclaim="data",label_app="db"} 1
kube_persistentvolumeclaim_labels{namespace="shop",persistentvolumeclaim="beta"} 1
# HELP kube_persistentvolumeclaim_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_persistentvolumeclaim_annotations gauge
kube_persistentvolumeclaim_annotations{namespace="shop",persistentvolumeclaim="data",annotation_owner="ops"} 1
kube_persistentvolumeclaim_annotations{namespace="shop",persistentvolumeclaim="beta"} 1
# HELP kube_persistentvolumeclaim_info [STABLE] Information about persistent volume claim.
# TYPE kube_persistentvolumeclaim_info gauge
kube_persistentvolumeclaim_info{namespace="shop",persistentvolumeclaim="data",storageclass="fast",volumename="pv-1",volumemode="Block"} 1
kube_persistentvolumeclaim_info{namespace="shop",persistentvolumeclaim="beta",storageclass="old",volumename="",volumemode=""} 1
# HELP kube_persistentvolumeclaim_status_phase [STABLE] The phase the persistent volume claim is currently in.
# TYPE kube_persistentvolumeclaim_status_phase gauge
kube_persistentvolumeclaim_status_phase{namespace="shop",persistentvolumeclaim="data",phase="Lost"} 0
kube_persistentvolumeclaim_status_phase{namespace="shop",persistentvolumeclaim="data",phase="Bound"} 1
kube_persistentvolumeclaim_status_phase{namespace="shop",persistentvolumeclaim="data",phase="Pending"} 0
# HELP kube_persistentvolumeclaim_resource_requests_storage_bytes [STABLE] The capacity of storage requested by the persistent volume claim.
# TYPE kube_persistentvolumeclaim_resource_requests_storage_bytes gauge
kube_persistentvolumeclaim_resource_requests_storage_bytes{namespace="shop",persistentvolumeclaim="data"} 1.610612736e+09
# HELP kube_persistentvolumeclaim_access_mode [STABLE] The access mode(s) specified by the persistent volume claim.
# TYPE kube_persistentvolumeclaim_access_mode gauge
kube_persistentvolumeclaim_access_mode{namespace="shop",persistentvolumeclaim="data",access_mode="ReadWriteOnce"} 1
kube_persistentvolumeclaim_access_mode{namespace="shop",persistentvolumeclaim="data",access_mode="ReadOnlyMany"} 1
# HELP kube_persistentvolumeclaim_status_condition Information about status of different conditions of persistent volume claim.
# TYPE kube_persistentvolumeclaim_status_condition gauge
kube_persistentvolumeclaim_status_condition{namespace="shop",persistentvolumeclaim="data",condition="Resizing",status="true"} 0
kube_persistentvolumeclaim_status_condition{namespace="shop",persistentvolumeclaim="data",condition="Resizing",status="false"} 1
kube_persistentvolumeclaim_status_condition{namespace="shop",persistentvolumeclaim="data",condition="Resizing",status="unknown"} 0
# HELP kube_persistentvolumeclaim_created Unix creation timestamp
# TYPE kube_persistentvolumeclaim_created gauge
kube_persistentvolumeclaim_created{namespace="shop",persistentvolumeclaim="data"} 1.7956008e+09
# HELP kube_persistentvolumeclaim_deletion_timestamp Unix deletion timestamp
# TYPE kube_persistentvolumeclaim_deletion_timestamp gauge
kube_persistentvolumeclaim_deletion_timestamp{namespace="shop",persistentvolumeclaim="data"} 1.7956008e+09
`)
}

func TestPersistentVolumes(t *testing.T) {
	block, lun, initiator := corev1.PersistentVolumeBlock, int32(3), "iqn.client"
	csi := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-csi", UID: "v1", CreationTimestamp: t0, DeletionTimestamp: &t0,
			Labels: map[string]string{"tier": "ssd"}, Annotations: map[string]string{"owner": "ops"}},
		Spec: corev1.PersistentVolumeSpec{
			StorageClassName: "fast", VolumeMode: &block, PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			Capacity:               corev1.ResourceList{"storage": resource.MustParse("10Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadWriteOncePod},
			ClaimRef:               &corev1.ObjectReference{Namespace: "shop", Name: "data"},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-1"}},
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
	}
	fc := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-fc", UID: "v2", CreationTimestamp: t0},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
			FC: &corev1.FCVolumeSource{Lun: &lun, TargetWWNs: []string{"a1", "a2"}, WWIDs: []string{"w1", "w2"}}}},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeReleased},
	}
	// No phase and no capacity: no phase series, capacity 0.
	iscsi := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-iscsi", UID: "v3"},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
			ISCSI: &corev1.ISCSIPersistentVolumeSource{TargetPortal: "10.0.0.1:3260", IQN: "iqn.target", Lun: 0, InitiatorName: &initiator}}},
	}
	got := renderWith(t, "persistentvolumes", "persistentvolumes=[tier]", "persistentvolumes=[owner]", csi, fc, iscsi)
	expectWhole(t, got, `
# HELP kube_persistentvolume_claim_ref [STABLE] Information about the Persistent Volume Claim Reference.
# TYPE kube_persistentvolume_claim_ref gauge
kube_persistentvolume_claim_ref{persistentvolume="pv-csi",name="data",claim_namespace="shop"} 1
# HELP kube_persistentvolume_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_persistentvolume_annotations gauge
kube_persistentvolume_annotations{persistentvolume="pv-csi",annotation_owner="ops"} 1
kube_persistentvolume_annotations{persistentvolume="pv-fc"} 1
kube_persistentvolume_annotations{persistentvolume="pv-iscsi"} 1
# HELP kube_persistentvolume_labels [STABLE] Kubernetes labels converted to Prometheus labels.
# TYPE kube_persistentvolume_labels gauge
kube_persistentvolume_labels{persistentvolume="pv-csi",label_tier="ssd"} 1
kube_persistentvolume_labels{persistentvolume="pv-fc"} 1
kube_persistentvolume_labels{persistentvolume="pv-iscsi"} 1
# HELP kube_persistentvolume_status_phase [STABLE] The phase indicates if a volume is available, bound to a claim, or released by a claim.
# TYPE kube_persistentvolume_status_phase gauge
kube_persistentvolume_status_phase{persistentvolume="pv-csi",phase="Pending"} 0
kube_persistentvolume_status_phase{persistentvolume="pv-csi",phase="Available"} 0
kube_persistentvolume_status_phase{persistentvolume="pv-csi",phase="Bound"} 1
kube_persistentvolume_status_phase{persistentvolume="pv-csi",phase="Released"} 0
kube_persistentvolume_status_phase{persistentvolume="pv-csi",phase="Failed"} 0
kube_persistentvolume_status_phase{persistentvolume="pv-fc",phase="Pending"} 0
kube_persistentvolume_status_phase{persistentvolume="pv-fc",phase="Available"} 0
kube_persistentvolume_status_phase{persistentvolume="pv-fc",phase="Bound"} 0
kube_persistentvolume_status_phase{persistentvolume="pv-fc",phase="Released"} 1
kube_persistentvolume_status_phase{persistentvolume="pv-fc",phase="Failed"} 0
# HELP kube_persistentvolume_info [STABLE] Information about persistentvolume.
# TYPE kube_persistentvolume_info gauge
kube_persistentvolume_info{persistentvolume="pv-csi",storageclass="fast",gce_persistent_disk_name="",ebs_volume_id="",azure_disk_name="",fc_wwids="",fc_lun="",fc_target_wwns="",iscsi_target_portal="",iscsi_iqn="",iscsi_lun="",iscsi_initiator_name="",nfs_server="",nfs_path="",csi_driver="ebs.csi.aws.com",csi_volume_handle="vol-1",local_path="",local_fs="",host_path="",host_path_type="",reclaim_policy="Delete"} 1
kube_persistentvolume_info{persistentvolume="pv-fc",storageclass="",gce_persistent_disk_name="",ebs_volume_id="",azure_disk_name="",fc_wwids="w1,w2",fc_lun="3",fc_target_wwns="a1,a2",iscsi_target_portal="",iscsi_iqn="",iscsi_lun="",iscsi_initiator_name="",nfs_server="",nfs_path="",csi_driver="",csi_volume_handle="",local_path="",local_fs="",host_path="",host_path_type="",reclaim_policy=""} 1
kube_persistentvolume_info{persistentvolume="pv-iscsi",storageclass="",gce_persistent_disk_name="",ebs_volume_id="",azure_disk_name="",fc_wwids="",fc_lun="",fc_target_wwns="",iscsi_target_portal="10.0.0.1:3260",iscsi_iqn="iqn.target",iscsi_lun="0",iscsi_initiator_name="iqn.client",nfs_server="",nfs_path="",csi_driver="",csi_volume_handle="",local_path="",local_fs="",host_path="",host_path_type="",reclaim_policy=""} 1
# HELP kube_persistentvolume_capacity_bytes [STABLE] Persistentvolume capacity in bytes.
# TYPE kube_persistentvolume_capacity_bytes gauge
kube_persistentvolume_capacity_bytes{persistentvolume="pv-csi"} 1.073741824e+10
kube_persistentvolume_capacity_bytes{persistentvolume="pv-fc"} 0
kube_persistentvolume_capacity_bytes{persistentvolume="pv-iscsi"} 0
# HELP kube_persistentvolume_created Unix creation timestamp
# TYPE kube_persistentvolume_created gauge
kube_persistentvolume_created{persistentvolume="pv-csi"} 1.7956008e+09
kube_persistentvolume_created{persistentvolume="pv-fc"} 1.7956008e+09
# HELP kube_persistentvolume_deletion_timestamp Unix deletion timestamp
# TYPE kube_persistentvolume_deletion_timestamp gauge
kube_persistentvolume_deletion_timestamp{persistentvolume="pv-csi"} 1.7956008e+09
# HELP kube_persistentvolume_volume_mode Volume Mode information for the PersistentVolume.
# TYPE kube_persistentvolume_volume_mode gauge
kube_persistentvolume_volume_mode{persistentvolume="pv-csi",volumemode="Block"} 1
kube_persistentvolume_volume_mode{persistentvolume="pv-fc",volumemode="Filesystem"} 1
kube_persistentvolume_volume_mode{persistentvolume="pv-iscsi",volumemode="Filesystem"} 1
# HELP kube_persistentvolume_access_mode The access mode(s) specified by the persistent volume.
# TYPE kube_persistentvolume_access_mode gauge
kube_persistentvolume_access_mode{persistentvolume="pv-csi",access_mode="ReadWriteOnce"} 1
kube_persistentvolume_access_mode{persistentvolume="pv-csi",access_mode="ReadWriteOncePod"} 1
`)
}
