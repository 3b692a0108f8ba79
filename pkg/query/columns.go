package query

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// kindColumns are the columns the API server's table printer gives one
// built-in kind (kubectl get asks the server for them): their
// definitions, the JSON paths of the object their cells read besides
// metadata, and the cells of one object, Name first.
type kindColumns struct {
	columns []metav1.TableColumnDefinition
	fields  [][]string
	cells   func(obj runtime.Object, now time.Time) ([]any, error)
}

// Column definitions as the API server sends them; priority 1 columns are
// printed only by -o wide.
var (
	nameColumn       = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name"}
	ageColumn        = metav1.TableColumnDefinition{Name: "Age", Type: "string"}
	containersColumn = metav1.TableColumnDefinition{Name: "Containers", Type: "string", Priority: 1}
	imagesColumn     = metav1.TableColumnDefinition{Name: "Images", Type: "string", Priority: 1}
	selectorColumn   = metav1.TableColumnDefinition{Name: "Selector", Type: "string", Priority: 1}
)

func column(name, typ string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ}
}

func wideColumn(name string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: "string", Priority: 1}
}

// builtinColumns are the kinds whose default table has columns of its own;
// every other kind prints NAME and AGE.
var builtinColumns = map[schema.GroupKind]*kindColumns{
	{Kind: "Pod"}: {
		columns: []metav1.TableColumnDefinition{nameColumn, column("Ready", "string"), column("Status", "string"), column("Restarts", "string"), ageColumn,
			wideColumn("IP"), wideColumn("Node"), wideColumn("Nominated Node"), wideColumn("Readiness Gates")},
		fields: [][]string{{"spec", "containers"}, {"spec", "initContainers"}, {"spec", "nodeName"}, {"spec", "readinessGates"}, {"status"}},
		cells:  typed(podCells),
	},
	{Group: "apps", Kind: "Deployment"}: {
		columns: []metav1.TableColumnDefinition{nameColumn, column("Ready", "string"), column("Up-to-date", "string"), column("Available", "string"), ageColumn,
			containersColumn, imagesColumn, selectorColumn},
		fields: [][]string{{"spec", "replicas"}, {"spec", "selector"}, {"spec", "template", "spec", "containers"}, {"status"}},
		cells:  typed(deploymentCells),
	},
	{Group: "apps", Kind: "ReplicaSet"}: {
		columns: []metav1.TableColumnDefinition{nameColumn, column("Desired", "integer"), column("Current", "integer"), column("Ready", "integer"), ageColumn,
			containersColumn, imagesColumn, selectorColumn},
		fields: [][]string{{"spec", "replicas"}, {"spec", "selector"}, {"spec", "template", "spec", "containers"}, {"status"}},
		cells:  typed(replicaSetCells),
	},
	{Group: "apps", Kind: "StatefulSet"}: {
		columns: []metav1.TableColumnDefinition{nameColumn, column("Ready", "string"), ageColumn, containersColumn, imagesColumn},
		fields:  [][]string{{"spec", "replicas"}, {"spec", "template", "spec", "containers"}, {"status"}},
		cells:   typed(statefulSetCells),
	},
	{Group: "apps", Kind: "DaemonSet"}: {
		columns: []metav1.TableColumnDefinition{nameColumn, column("Desired", "integer"), column("Current", "integer"), column("Ready", "integer"),
			column("Up-to-date", "integer"), column("Available", "integer"), column("Node Selector", "string"), ageColumn,
			containersColumn, imagesColumn, selectorColumn},
		fields: [][]string{{"spec", "selector"}, {"spec", "template", "spec", "containers"}, {"spec", "template", "spec", "nodeSelector"}, {"status"}},
		cells:  typed(daemonSetCells),
	},
	{Group: "batch", Kind: "Job"}: {
		columns: []metav1.TableColumnDefinition{nameColumn, column("Status", "string"), column("Completions", "string"), column("Duration", "string"), ageColumn,
			containersColumn, imagesColumn, selectorColumn},
		fields: [][]string{{"spec", "completions"}, {"spec", "parallelism"}, {"spec", "selector"}, {"spec", "template", "spec", "containers"}, {"status"}},
		cells:  typed(jobCells),
	},
	{Group: "batch", Kind: "CronJob"}: {
		columns: []metav1.TableColumnDefinition{nameColumn, column("Schedule", "string"), column("Timezone", "string"), column("Suspend", "boolean"),
			column("Active", "integer"), column("Last Schedule", "string"), ageColumn, containersColumn, imagesColumn, selectorColumn},
		fields: [][]string{{"spec", "schedule"}, {"spec", "timeZone"}, {"spec", "suspend"},
			{"spec", "jobTemplate", "spec", "selector"}, {"spec", "jobTemplate", "spec", "template", "spec", "containers"}, {"status"}},
		cells: typed(cronJobCells),
	},
	{Kind: "Service"}: {
		columns: []metav1.TableColumnDefinition{nameColumn, column("Type", "string"), column("Cluster-IP", "string"), column("External-IP", "string"),
			column("Port(s)", "string"), ageColumn, selectorColumn},
		fields: [][]string{{"spec"}, {"status", "loadBalancer"}},
		cells:  typed(serviceCells),
	},
	{Kind: "Node"}: {
		columns: []metav1.TableColumnDefinition{nameColumn, column("Status", "string"), column("Roles", "string"), ageColumn, column("Version", "string"),
			wideColumn("Internal-IP"), wideColumn("External-IP"), wideColumn("OS-Image"), wideColumn("Kernel-Version"), wideColumn("Container-Runtime")},
		fields: [][]string{{"spec", "unschedulable"}, {"status", "conditions"}, {"status", "nodeInfo"}, {"status", "addresses"}},
		cells:  typed(nodeCells),
	},
	{Kind: "Namespace"}: {
		columns: []metav1.TableColumnDefinition{nameColumn, column("Status", "string"), ageColumn},
		fields:  [][]string{{"status", "phase"}},
		cells: typed(func(ns *corev1.Namespace, now time.Time) []any {
			return []any{ns.Name, string(ns.Status.Phase), age(ns.CreationTimestamp, now)}
		}),
	},
	{Kind: "ConfigMap"}: {
		columns: []metav1.TableColumnDefinition{nameColumn, column("Data", "string"), ageColumn},
		fields:  [][]string{{"data"}, {"binaryData"}},
		cells: typed(func(cm *corev1.ConfigMap, now time.Time) []any {
			return []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), age(cm.CreationTimestamp, now)}
		}),
	},
	{Kind: "Secret"}: {
		columns: []metav1.TableColumnDefinition{nameColumn, column("Type", "string"), column("Data", "string"), ageColumn},
		fields:  [][]string{{"type"}, {"data"}},
		cells: typed(func(s *corev1.Secret, now time.Time) []any {
			return []any{s.Name, string(s.Type), int64(len(s.Data)), age(s.CreationTimestamp, now)}
		}),
	},
	{Kind: "PersistentVolume"}: {
		columns: []metav1.TableColumnDefinition{nameColumn, column("Capacity", "string"), column("Access Modes", "string"), column("Reclaim Policy", "string"),
			column("Status", "string"), column("Claim", "string"), column("StorageClass", "string"), column("VolumeAttributesClass", "string"),
			column("Reason", "string"), ageColumn, wideColumn("VolumeMode")},
		fields: [][]string{{"spec", "capacity"}, {"spec", "accessModes"}, {"spec", "persistentVolumeReclaimPolicy"}, {"spec", "claimRef"},
			{"spec", "storageClassName"}, {"spec", "volumeAttributesClassName"}, {"spec", "volumeMode"}, {"status"}},
		cells: typed(pvCells),
	},
	{Group: "networking.k8s.io", Kind: "Ingress"}: {
		columns: []metav1.TableColumnDefinition{nameColumn, column("Class", "string"), column("Hosts", "string"), column("Address", "string"),
			column("Ports", "string"), ageColumn},
		fields: [][]string{{"spec", "ingressClassName"}, {"spec", "rules"}, {"spec", "tls"}, {"status", "loadBalancer"}},
		cells:  typed(ingressCells),
	},
	{Group: "networking.k8s.io", Kind: "IngressClass"}: {
		columns: []metav1.TableColumnDefinition{nameColumn, column("Controller", "string"), column("Parameters", "string"), ageColumn},
		fields:  [][]string{{"spec"}},
		cells:   typed(ingressClassCells),
	},
	{Group: "storage.k8s.io", Kind: "StorageClass"}: {
		columns: []metav1.TableColumnDefinition{nameColumn, column("Provisioner", "string"), column("ReclaimPolicy", "string"),
			column("VolumeBindingMode", "string"), column("AllowVolumeExpansion", "string"), ageColumn},
		fields: [][]string{{"provisioner"}, {"reclaimPolicy"}, {"volumeBindingMode"}, {"allowVolumeExpansion"}},
		cells:  typed(storageClassCells),
	},
	{Kind: "PersistentVolumeClaim"}: {
		columns: []metav1.TableColumnDefinition{nameColumn, column("Status", "string"), column("Volume", "string"), column("Capacity", "string"),
			column("Access Modes", "string"), column("StorageClass", "string"), column("VolumeAttributesClass", "string"), ageColumn, wideColumn("VolumeMode")},
		fields: [][]string{{"spec"}, {"status"}},
		cells:  typed(pvcCells),
	},
}

// typed adapts the cells of a typed object to any runtime.Object: the
// typed object itself, or an unstructured one converted to it.
func typed[T any, PT interface {
	*T
	runtime.Object
}](cells func(PT, time.Time) []any) func(runtime.Object, time.Time) ([]any, error) {
	return func(obj runtime.Object, now time.Time) ([]any, error) {
		if t, ok := obj.(PT); ok {
			return cells(t, now), nil
		}
		u, ok := obj.(runtime.Unstructured)
		if !ok {
			return nil, fmt.Errorf("cannot print a %T as a %T", obj, PT(nil))
		}
		t := PT(new(T))
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), t); err != nil {
			return nil, fmt.Errorf("converting %s for printing: %w", indexers.ObjectName(obj), err)
		}
		return cells(t, now), nil
	}
}

// age is a timestamp as the AGE column prints it.
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func isRestartable(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// podCells computes READY, STATUS and RESTARTS by the API server's rules:
// the first init container not done gives Init:REASON or Init:N/M, then
// the last container with a waiting or terminated reason gives STATUS,
// "Completed" becomes Running or NotReady while containers still run, and
// a deleted pod is Terminating (Unknown when its node was lost).
func podCells(pod *corev1.Pod, now time.Time) []any {
	restarts, sidecarRestarts := 0, 0
	total := len(pod.Spec.Containers)
	ready := 0
	var lastRestart, lastSidecarRestart metav1.Time

	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}

	initContainers := make(map[string]*corev1.Container, len(pod.Spec.InitContainers))
	for i := range pod.Spec.InitContainers {
		initContainers[pod.Spec.InitContainers[i].Name] = &pod.Spec.InitContainers[i]
		if isRestartable(&pod.Spec.InitContainers[i]) {
			total++
		}
	}
	later := func(last *metav1.Time, s corev1.ContainerStatus) {
		if t := s.LastTerminationState.Terminated; t != nil && last.Before(&t.FinishedAt) {
			*last = t.FinishedAt
		}
	}

	initializing := false
	for i, c := range pod.Status.InitContainerStatuses {
		restarts += int(c.RestartCount)
		later(&lastRestart, c)
		sidecar := isRestartable(initContainers[c.Name])
		if sidecar {
			sidecarRestarts += int(c.RestartCount)
			later(&lastSidecarRestart, c)
		}
		switch {
		case c.State.Terminated != nil && c.State.Terminated.ExitCode == 0:
			continue
		case sidecar && c.Started != nil && *c.Started:
			if c.Ready {
				ready++
			}
			continue
		case c.State.Terminated != nil:
			switch t := c.State.Terminated; {
			case t.Reason != "":
				reason = "Init:" + t.Reason
			case t.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", t.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
			}
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + c.State.Waiting.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}

	if !initializing || podInitialized(pod.Status.Conditions) {
		restarts, lastRestart = sidecarRestarts, lastSidecarRestart
		hasRunning := false
		errorReason := ""
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			c := pod.Status.ContainerStatuses[i]
			restarts += int(c.RestartCount)
			later(&lastRestart, c)
			switch {
			case c.State.Waiting != nil && c.State.Waiting.Reason != "":
				reason = c.State.Waiting.Reason
			case c.State.Terminated != nil:
				switch t := c.State.Terminated; {
				case t.Reason != "":
					reason = t.Reason
				case t.Signal != 0:
					reason = fmt.Sprintf("Signal:%d", t.Signal)
				default:
					reason = fmt.Sprintf("ExitCode:%d", t.ExitCode)
				}
				if c.State.Terminated.ExitCode != 0 {
					errorReason = reason
				}
			case c.Ready && c.State.Running != nil:
				hasRunning = true
				ready++
			}
		}
		if reason == "Completed" {
			switch {
			case hasRunning && podReady(pod.Status.Conditions):
				reason = "Running"
			case errorReason != "":
				reason = errorReason
			case hasRunning:
				reason = "NotReady"
			}
		}
	}

	terminal := pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded
	switch {
	case pod.DeletionTimestamp != nil && pod.Status.Reason == "NodeLost":
		reason = "Unknown"
	case pod.DeletionTimestamp != nil && !terminal:
		reason = "Terminating"
	}

	restartCell := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartCell = fmt.Sprintf("%d (%s ago)", restarts, age(lastRestart, now))
	}

	ip := ""
	if len(pod.Status.PodIPs) > 0 {
		ip = pod.Status.PodIPs[0].IP
	}
	gates := None
	if len(pod.Spec.ReadinessGates) > 0 {
		trueConditions := 0
		for _, gate := range pod.Spec.ReadinessGates {
			for _, c := range pod.Status.Conditions {
				if c.Type == gate.ConditionType {
					if c.Status == corev1.ConditionTrue {
						trueConditions++
					}
					break
				}
			}
		}
		gates = fmt.Sprintf("%d/%d", trueConditions, len(pod.Spec.ReadinessGates))
	}
	return []any{pod.Name, fmt.Sprintf("%d/%d", ready, total), reason, restartCell, age(pod.CreationTimestamp, now),
		orNone(ip), orNone(pod.Spec.NodeName), orNone(pod.Status.NominatedNodeName), gates}
}

func podInitialized(conditions []corev1.PodCondition) bool {
	for _, c := range conditions {
		if c.Type == corev1.PodInitialized {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podReady(conditions []corev1.PodCondition) bool {
	for _, c := range conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return None
	}
	return s
}

// containerCells are the CONTAINERS and IMAGES cells of a pod template.
func containerCells(containers []corev1.Container) (names, images string) {
	n := make([]string, len(containers))
	i := make([]string, len(containers))
	for x, c := range containers {
		n[x], i[x] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(i, ",")
}

func deploymentCells(d *appsv1.Deployment, now time.Time) []any {
	selector := "<invalid>"
	if s, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil {
		selector = s.String()
	}
	names, images := containerCells(d.Spec.Template.Spec.Containers)
	return []any{d.Name, fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, deref(d.Spec.Replicas)), int64(d.Status.UpdatedReplicas),
		int64(d.Status.AvailableReplicas), age(d.CreationTimestamp, now), names, images, selector}
}

func replicaSetCells(rs *appsv1.ReplicaSet, now time.Time) []any {
	names, images := containerCells(rs.Spec.Template.Spec.Containers)
	return []any{rs.Name, int64(deref(rs.Spec.Replicas)), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas), age(rs.CreationTimestamp, now),
		names, images, metav1.FormatLabelSelector(rs.Spec.Selector)}
}

func statefulSetCells(s *appsv1.StatefulSet, now time.Time) []any {
	names, images := containerCells(s.Spec.Template.Spec.Containers)
	return []any{s.Name, fmt.Sprintf("%d/%d", s.Status.ReadyReplicas, deref(s.Spec.Replicas)), age(s.CreationTimestamp, now), names, images}
}

func daemonSetCells(ds *appsv1.DaemonSet, now time.Time) []any {
	names, images := containerCells(ds.Spec.Template.Spec.Containers)
	st := ds.Status
	return []any{ds.Name, int64(st.DesiredNumberScheduled), int64(st.CurrentNumberScheduled), int64(st.NumberReady), int64(st.UpdatedNumberScheduled),
		int64(st.NumberAvailable), labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector), age(ds.CreationTimestamp, now),
		names, images, metav1.FormatLabelSelector(ds.Spec.Selector)}
}

// jobCondition reports whether the first condition of type t is true.
func jobCondition(conditions []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	for _, c := range conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func jobCells(job *batchv1.Job, now time.Time) []any {
	var completions string
	switch parallelism := deref(job.Spec.Parallelism); {
	case job.Spec.Completions != nil:
		completions = fmt.Sprintf("%d/%d", job.Status.Succeeded, *job.Spec.Completions)
	case parallelism > 1:
		completions = fmt.Sprintf("%d/1 of %d", job.Status.Succeeded, parallelism)
	default:
		completions = fmt.Sprintf("%d/1", job.Status.Succeeded)
	}
	var took string
	switch {
	case job.Status.StartTime == nil:
	case job.Status.CompletionTime == nil:
		took = duration.HumanDuration(now.Sub(job.Status.StartTime.Time))
	default:
		took = duration.HumanDuration(job.Status.CompletionTime.Sub(job.Status.StartTime.Time))
	}
	conds := job.Status.Conditions
	var status string
	switch {
	case jobCondition(conds, batchv1.JobComplete):
		status = "Complete"
	case jobCondition(conds, batchv1.JobFailed):
		status = "Failed"
	case job.DeletionTimestamp != nil:
		status = "Terminating"
	case jobCondition(conds, batchv1.JobSuspended):
		status = "Suspended"
	case jobCondition(conds, batchv1.JobFailureTarget):
		status = "FailureTarget"
	case jobCondition(conds, batchv1.JobSuccessCriteriaMet):
		status = "SuccessCriteriaMet"
	default:
		status = "Running"
	}
	names, images := containerCells(job.Spec.Template.Spec.Containers)
	return []any{job.Name, status, completions, took, age(job.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(job.Spec.Selector)}
}

func cronJobCells(cj *batchv1.CronJob, now time.Time) []any {
	last := None
	if cj.Status.LastScheduleTime != nil {
		last = age(*cj.Status.LastScheduleTime, now)
	}
	suspend := "<unset>"
	if cj.Spec.Suspend != nil {
		suspend = "False"
		if *cj.Spec.Suspend {
			suspend = "True"
		}
	}
	tmpl := cj.Spec.JobTemplate.Spec
	names, images := containerCells(tmpl.Template.Spec.Containers)
	return []any{cj.Name, cj.Spec.Schedule, orNone(deref(cj.Spec.TimeZone)), suspend, int64(len(cj.Status.Active)), last,
		age(cj.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(tmpl.Selector)}
}

func serviceCells(svc *corev1.Service, now time.Time) []any {
	clusterIP := None
	if len(svc.Spec.ClusterIPs) > 0 {
		clusterIP = svc.Spec.ClusterIPs[0]
	}
	ports := make([]string, len(svc.Spec.Ports))
	for i, p := range svc.Spec.Ports {
		ports[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.NodePort > 0 {
			ports[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		}
	}
	return []any{svc.Name, string(svc.Spec.Type), clusterIP, externalIP(svc), orNone(strings.Join(ports, ",")), age(svc.CreationTimestamp, now),
		labels.FormatLabels(svc.Spec.Selector)}
}

// externalIP is the EXTERNAL-IP of a service as the API server prints it
// for -o wide (the server always builds the wide row, so a load
// balancer's addresses are never clipped).
func externalIP(svc *corev1.Service) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(svc.Spec.ExternalIPs, ",")
		}
		return None
	case corev1.ServiceTypeLoadBalancer:
		ingress := svc.Status.LoadBalancer.Ingress
		lb := loadBalancerAddresses(len(ingress), func(i int) (string, string) { return ingress[i].IP, ingress[i].Hostname })
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(append(lb, svc.Spec.ExternalIPs...), ",")
		}
		if len(lb) > 0 {
			return strings.Join(lb, ",")
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

// loadBalancerAddresses returns the addresses of the n ingress points of
// a load balancer, whose IP and hostname at returns, as the API server's
// printers list them for services and ingresses: the IP, else the
// hostname, of each, sorted, each once.
func loadBalancerAddresses(n int, at func(i int) (ip, hostname string)) []string {
	var out []string
	for i := range n {
		switch ip, hostname := at(i); {
		case ip != "":
			out = append(out, ip)
		case hostname != "":
			out = append(out, hostname)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func nodeCells(node *corev1.Node, now time.Time) []any {
	var status []string
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			status = []string{"Ready"}
			if c.Status != corev1.ConditionTrue {
				status = []string{"NotReady"}
			}
			// later conditions of the same type win, as in a map
		}
	}
	if len(status) == 0 {
		status = []string{"Unknown"}
	}
	if node.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}
	var roles []string
	for k, v := range node.Labels {
		switch {
		case strings.HasPrefix(k, "node-role.kubernetes.io/"):
			if role := strings.TrimPrefix(k, "node-role.kubernetes.io/"); role != "" {
				roles = append(roles, role)
			}
		case k == "kubernetes.io/role" && v != "":
			roles = append(roles, v)
		}
	}
	slices.Sort(roles)
	roles = slices.Compact(roles)

	info := node.Status.NodeInfo
	kernel := info.KernelVersion
	if kernel == "" {
		kernel = "<unknown>"
	}
	if info.Architecture != "" {
		kernel += " (" + info.Architecture + ")"
	}
	unknown := func(s string) string {
		if s == "" {
			return "<unknown>"
		}
		return s
	}
	address := func(t corev1.NodeAddressType) string {
		for _, a := range node.Status.Addresses {
			if a.Type == t {
				return a.Address
			}
		}
		return None
	}
	return []any{node.Name, strings.Join(status, ","), orNone(strings.Join(roles, ",")), age(node.CreationTimestamp, now), info.KubeletVersion,
		address(corev1.NodeInternalIP), address(corev1.NodeExternalIP), unknown(info.OSImage), kernel, unknown(info.ContainerRuntimeVersion)}
}

func pvcCells(pvc *corev1.PersistentVolumeClaim, now time.Time) []any {
	phase := string(pvc.Status.Phase)
	if pvc.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	var capacity, modes string
	if pvc.Spec.VolumeName != "" {
		modes = accessModes(pvc.Status.AccessModes)
		storage := pvc.Status.Capacity[corev1.ResourceStorage]
		capacity = storage.String()
	}
	class, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]
	if !ok {
		class = deref(pvc.Spec.StorageClassName)
	}
	attributesClass := "<unset>"
	if pvc.Spec.VolumeAttributesClassName != nil {
		attributesClass = *pvc.Spec.VolumeAttributesClassName
	}
	volumeMode := "<unset>"
	if pvc.Spec.VolumeMode != nil {
		volumeMode = string(*pvc.Spec.VolumeMode)
	}
	return []any{pvc.Name, phase, pvc.Spec.VolumeName, capacity, modes, class, attributesClass, age(pvc.CreationTimestamp, now), volumeMode}
}

// PrintedFields returns the JSON paths, besides metadata, that the default
// table of gk reads (or, when columns are given, those columns' JSON
// paths); nil when it needs whole objects.
func PrintedFields(gk schema.GroupKind, columns []PrinterColumn) *jsonval.Paths {
	out := &jsonval.Paths{}
	if len(columns) > 0 {
		for _, c := range columns {
			path, ok := jsonPathFields(c.JSONPath)
			if !ok {
				return nil
			}
			out.Add(path)
		}
		return out
	}
	if kc, ok := builtinColumns[gk]; ok {
		for _, f := range kc.fields {
			out.Add(f)
		}
	}
	return out
}

// accessModes writes access modes as the API server's printers do: their
// short names in a fixed order, each once.
func accessModes(modes []corev1.PersistentVolumeAccessMode) string {
	var short []string
	for _, m := range []struct {
		mode corev1.PersistentVolumeAccessMode
		name string
	}{{corev1.ReadWriteOnce, "RWO"}, {corev1.ReadOnlyMany, "ROX"}, {corev1.ReadWriteMany, "RWX"}, {corev1.ReadWriteOncePod, "RWOP"}} {
		if slices.Contains(modes, m.mode) {
			short = append(short, m.name)
		}
	}
	return strings.Join(short, ",")
}

func pvCells(pv *corev1.PersistentVolume, now time.Time) []any {
	claim := ""
	if ref := pv.Spec.ClaimRef; ref != nil {
		claim = ref.Namespace + "/" + ref.Name
	}
	phase := string(pv.Status.Phase)
	if pv.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	class, ok := pv.Annotations[corev1.BetaStorageClassAnnotation]
	if !ok {
		class = pv.Spec.StorageClassName
	}
	attributesClass := "<unset>"
	if pv.Spec.VolumeAttributesClassName != nil {
		attributesClass = *pv.Spec.VolumeAttributesClassName
	}
	volumeMode := "<unset>"
	if pv.Spec.VolumeMode != nil {
		volumeMode = string(*pv.Spec.VolumeMode)
	}
	storage := pv.Spec.Capacity[corev1.ResourceStorage]
	return []any{pv.Name, storage.String(), accessModes(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy), phase, claim,
		class, attributesClass, pv.Status.Reason, age(pv.CreationTimestamp, now), volumeMode}
}

func ingressCells(in *networkingv1.Ingress, now time.Time) []any {
	class := None
	if in.Spec.IngressClassName != nil {
		class = *in.Spec.IngressClassName
	}
	// The hosts of the first rules that name one, up to three; when a
	// rule follows the third, how many rules there are beyond three; "*"
	// when no rule names a host.
	const most = 3
	var hosts []string
	more := false
	for _, r := range in.Spec.Rules {
		if len(hosts) == most {
			more = true
		}
		if !more && r.Host != "" {
			hosts = append(hosts, r.Host)
		}
	}
	host := "*"
	switch {
	case more:
		host = fmt.Sprintf("%s + %d more...", strings.Join(hosts, ","), len(in.Spec.Rules)-most)
	case len(hosts) > 0:
		host = strings.Join(hosts, ",")
	}
	lbs := in.Status.LoadBalancer.Ingress
	address := loadBalancerAddresses(len(lbs), func(i int) (string, string) { return lbs[i].IP, lbs[i].Hostname })
	ports := "80"
	if len(in.Spec.TLS) > 0 {
		ports = "80, 443"
	}
	return []any{in.Name, class, host, strings.Join(address, ","), ports, age(in.CreationTimestamp, now)}
}

func ingressClassCells(ic *networkingv1.IngressClass, now time.Time) []any {
	parameters := None
	if p := ic.Spec.Parameters; p != nil {
		parameters = p.Kind
		if p.APIGroup != nil {
			parameters += "." + *p.APIGroup
		}
		parameters += "/" + p.Name
	}
	name := ic.Name
	if ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
		name += " (default)"
	}
	return []any{name, ic.Spec.Controller, parameters, age(ic.CreationTimestamp, now)}
}

func storageClassCells(sc *storagev1.StorageClass, now time.Time) []any {
	name := sc.Name
	if sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" ||
		sc.Annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true" {
		name += " (default)"
	}
	reclaim := string(corev1.PersistentVolumeReclaimDelete)
	if sc.ReclaimPolicy != nil {
		reclaim = string(*sc.ReclaimPolicy)
	}
	binding := string(storagev1.VolumeBindingImmediate)
	if sc.VolumeBindingMode != nil {
		binding = string(*sc.VolumeBindingMode)
	}
	return []any{name, sc.Provisioner, reclaim, binding, deref(sc.AllowVolumeExpansion), age(sc.CreationTimestamp, now)}
}
