# States the sample workload lacks, for hack/ksm-compare.sh (SETUP="bash
# hack/ksm-compare-states.sh"): a resource quota with its status, a node
# with roles and taints, a namespace with a label and a condition, a bound
# claim.
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
