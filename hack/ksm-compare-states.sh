# States the sample workload lacks, for hack/ksm-compare.sh (SETUP="bash
# hack/ksm-compare-states.sh"): a resource quota with its status, a node
# with roles and taints, a namespace with a label and a condition, a bound
# claim and its volume, terminating replicas, an autoscaler with tolerances,
# and a node, a volume and a claim being deleted.
set -e
k=_output/bin/kubectl
ns=$($k get ns -o name | grep -v "default\|kube-" | head -1 | cut -d/ -f2)
$k -n "$ns" create quota compute --hard=pods=1000,requests.cpu=4,limits.memory=8Gi,count/deployments.apps=20
$k -n "$ns" patch resourcequota compute --subresource=status --type=merge -p '{"status":{"hard":{"pods":"1000","requests.cpu":"4","limits.memory":"8Gi","count/deployments.apps":"20"},"used":{"pods":"5","requests.cpu":"1500m","limits.memory":"512Mi"}}}'
node=$($k get nodes -o name | head -1)
$k label "$node" node-role.kubernetes.io/worker= node-role.kubernetes.io/infra=true
$k taint nodes "${node#node/}" dedicated=db:NoSchedule gpu:NoExecute
$k label ns "$ns" --overwrite team=payments
$k patch ns "$ns" --subresource=status --type=merge -p '{"status":{"conditions":[{"type":"NamespaceDeletionContentFailure","status":"False","reason":"ContentDeleted"}]}}'
# A claim with a storage class, access modes and a request, bound.
$k -n "$ns" apply -f - <<'YAML'
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, labels: {app: db}}
spec:
  storageClassName: standard
  volumeName: pv-data
  accessModes: [ReadWriteOnce, ReadOnlyMany]
  resources: {requests: {storage: 10Gi}}
YAML
$k -n "$ns" patch pvc data --subresource=status --type=merge -p '{"status":{"phase":"Bound","accessModes":["ReadWriteOnce"],"capacity":{"storage":"10Gi"},"conditions":[{"type":"Resizing","status":"False"}]}}'
# The claim's volume, bound to it.
$k apply -f - <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-data, labels: {tier: ssd}}
spec:
  storageClassName: standard
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  claimRef: {namespace: $ns, name: data}
  csi: {driver: csi.example.com, volumeHandle: vol-1}
YAML
$k patch pv pv-data --subresource=status --type=merge -p '{"status":{"phase":"Bound"}}'
# Replicas terminating in a deployment's and a replica set's status.
dep=$($k -n "$ns" get deploy -o name | head -1)
rs=$($k -n "$ns" get rs -o name | head -1)
$k -n "$ns" patch "$dep" --subresource=status --type=merge -p '{"status":{"terminatingReplicas":1}}'
$k -n "$ns" patch "$rs" --subresource=status --type=merge -p '{"status":{"terminatingReplicas":1}}'
# An autoscaler with scaling tolerances.
$k -n "$ns" apply -f - <<YAML
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: tolerant}
spec:
  maxReplicas: 3
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: ${dep#*/}}
  behavior:
    scaleUp: {tolerance: 50m}
    scaleDown: {tolerance: "0.1"}
YAML
# A node, a volume and a claim being deleted, held by a finalizer.
$k apply -f - <<YAML
apiVersion: v1
kind: Node
metadata: {name: leaving, finalizers: [example.com/hold]}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-leaving, finalizers: [example.com/hold]}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /data/leaving, type: DirectoryOrCreate}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: leaving, namespace: $ns, finalizers: [example.com/hold]}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
YAML
$k delete --wait=false node/leaving pv/pv-leaving
$k -n "$ns" delete --wait=false pvc/leaving
