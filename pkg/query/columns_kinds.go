package query

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/sets"
)

// The columns of the kinds below are the API server's for the same kinds.
// The server computes every cell, -o wide's included, and kubectl hides
// the columns of priority 1; so do these.
func init() {
	for gk, kc := range map[schema.GroupKind]*kindColumns{
		{Kind: "ReplicationController"}: {
			columns: []metav1.TableColumnDefinition{nameColumn, column("Desired", "integer"), column("Current", "integer"), column("Ready", "integer"), ageColumn,
				containersColumn, imagesColumn, selectorColumn},
			fields: [][]string{{"spec", "replicas"}, {"spec", "selector"}, {"spec", "template", "spec", "containers"}, {"status"}},
			cells:  typed(replicationControllerCells),
		},
		{Kind: "ResourceQuota"}: {
			columns: []metav1.TableColumnDefinition{nameColumn, column("Request", "string"), column("Limit", "string"), ageColumn},
			fields:  [][]string{{"status"}},
			cells:   typed(resourceQuotaCells),
		},
		{Group: "policy", Kind: "PodDisruptionBudget"}: {
			columns: []metav1.TableColumnDefinition{nameColumn, column("Min Available", "string"), column("Max Unavailable", "string"),
				column("Allowed Disruptions", "integer"), ageColumn},
			fields: [][]string{{"spec", "minAvailable"}, {"spec", "maxUnavailable"}, {"status", "disruptionsAllowed"}},
			cells:  typed(podDisruptionBudgetCells),
		},
		{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: {
			columns: []metav1.TableColumnDefinition{nameColumn, column("Reference", "string"), column("Targets", "string"), column("MinPods", "string"),
				column("MaxPods", "string"), column("Replicas", "string"), ageColumn},
			fields: [][]string{{"spec"}, {"status", "currentMetrics"}, {"status", "currentReplicas"}},
			cells:  typed(horizontalPodAutoscalerCells),
		},
		{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}: {
			columns: bindingColumns,
			fields:  [][]string{{"roleRef"}, {"subjects"}},
			cells: typed(func(b *rbacv1.RoleBinding, now time.Time) []any {
				return bindingCells(b.ObjectMeta, b.RoleRef, b.Subjects, now)
			}),
		},
		{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: {
			columns: bindingColumns,
			fields:  [][]string{{"roleRef"}, {"subjects"}},
			cells: typed(func(b *rbacv1.ClusterRoleBinding, now time.Time) []any {
				return bindingCells(b.ObjectMeta, b.RoleRef, b.Subjects, now)
			}),
		},
		{Group: "coordination.k8s.io", Kind: "Lease"}: {
			columns: []metav1.TableColumnDefinition{nameColumn, column("Holder", "string"), ageColumn},
			fields:  [][]string{{"spec", "holderIdentity"}},
			cells: typed(func(l *coordinationv1.Lease, now time.Time) []any {
				return []any{l.Name, deref(l.Spec.HolderIdentity), age(l.CreationTimestamp, now)}
			}),
		},
		{Kind: "Endpoints"}: {
			columns: []metav1.TableColumnDefinition{nameColumn, column("Endpoints", "string"), ageColumn},
			fields:  [][]string{{"subsets"}},
			cells:   typed(endpointsCells),
		},
		{Group: "discovery.k8s.io", Kind: "EndpointSlice"}: {
			columns: []metav1.TableColumnDefinition{nameColumn, column("AddressType", "string"), column("Ports", "string"), column("Endpoints", "string"), ageColumn},
			fields:  [][]string{{"addressType"}, {"ports"}, {"endpoints"}},
			cells:   typed(endpointSliceCells),
		},
		{Group: "networking.k8s.io", Kind: "NetworkPolicy"}: {
			columns: []metav1.TableColumnDefinition{nameColumn, column("Pod-Selector", "string"), ageColumn},
			fields:  [][]string{{"spec", "podSelector"}},
			cells: typed(func(np *networkingv1.NetworkPolicy, now time.Time) []any {
				return []any{np.Name, metav1.FormatLabelSelector(&np.Spec.PodSelector), age(np.CreationTimestamp, now)}
			}),
		},
		{Group: "scheduling.k8s.io", Kind: "PriorityClass"}: {
			columns: []metav1.TableColumnDefinition{nameColumn, column("Value", "integer"), column("Global-Default", "boolean"), ageColumn,
				column("PreemptionPolicy", "string")},
			fields: [][]string{{"value"}, {"globalDefault"}, {"preemptionPolicy"}},
			cells: typed(func(pc *schedulingv1.PriorityClass, now time.Time) []any {
				return []any{pc.Name, int64(pc.Value), pc.GlobalDefault, age(pc.CreationTimestamp, now), string(deref(pc.PreemptionPolicy))}
			}),
		},
		{Kind: "Event"}: {
			columns: eventColumns,
			fields:  eventFields("involvedObject", "message", "source", "firstTimestamp", "lastTimestamp", "count", "reportingComponent"),
			cells: typed(func(e *corev1.Event, now time.Time) []any {
				return eventCells(e.ObjectMeta, event{e.Type, e.Reason, e.InvolvedObject, e.Message, e.Source, e.FirstTimestamp, e.LastTimestamp,
					e.Count, e.EventTime, e.Series, e.ReportingController, e.ReportingInstance}, now)
			}),
		},
		{Group: "events.k8s.io", Kind: "Event"}: {
			columns: eventColumns,
			fields: eventFields("regarding", "note", "deprecatedSource", "deprecatedFirstTimestamp", "deprecatedLastTimestamp",
				"deprecatedCount", "reportingController"),
			cells: typed(func(e *eventsv1.Event, now time.Time) []any {
				var series *corev1.EventSeries
				if e.Series != nil {
					series = &corev1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
				}
				return eventCells(e.ObjectMeta, event{e.Type, e.Reason, e.Regarding, e.Note, e.DeprecatedSource, e.DeprecatedFirstTimestamp,
					e.DeprecatedLastTimestamp, e.DeprecatedCount, e.EventTime, series, e.ReportingController, e.ReportingInstance}, now)
			}),
		},
		{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}: {
			columns: []metav1.TableColumnDefinition{nameColumn, ageColumn, column("SignerName", "string"), column("Requestor", "string"),
				column("RequestedDuration", "string"), column("Condition", "string")},
			fields: [][]string{{"spec", "signerName"}, {"spec", "username"}, {"spec", "expirationSeconds"}, {"status", "conditions"}, {"status", "certificate"}},
			cells:  typed(certificateSigningRequestCells),
		},
	} {
		builtinColumns[gk] = kc
	}
}

// createdAtKinds are the built-in kinds the API server has no printer
// for: its default table is NAME and CREATED AT, the creation time in
// RFC 3339, for them, as for CustomResourceDefinitions.
var createdAtKinds = sets.New(
	schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "Role"},
	schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"},
	schema.GroupKind{Kind: "LimitRange"},
	schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"},
)

// eventColumns are the columns of both APIs' events: the API server
// prints an events.k8s.io Event as the core Event it converts it to.
var eventColumns = []metav1.TableColumnDefinition{column("Last Seen", "string"), column("Type", "string"), column("Reason", "string"),
	column("Object", "string"), wideColumn("Subobject"), wideColumn("Source"), column("Message", "string"), wideColumn("First Seen"),
	wideColumn("Count"), {Name: "Name", Type: "string", Format: "name", Priority: 1}}

// eventFields are the fields the columns of events read: those named, in
// the API's spelling, and those both APIs spell alike.
func eventFields(names ...string) [][]string {
	out := [][]string{{"type"}, {"reason"}, {"eventTime"}, {"series"}, {"reportingInstance"}}
	for _, n := range names {
		out = append(out, []string{n})
	}
	return out
}

// event is what the columns of an event print, in the core API's terms.
type event struct {
	typ, reason                            string
	object                                 corev1.ObjectReference
	message                                string
	source                                 corev1.EventSource
	first, last                            metav1.Time
	count                                  int32
	eventTime                              metav1.MicroTime
	series                                 *corev1.EventSeries
	reportingController, reportingInstance string
}

// eventCells are an event's cells: LAST SEEN is the age of its last
// occurrence (of its series' last, or its first when it has no last),
// OBJECT the object's kind in lower case and name, SOURCE the component
// and host that reported it.
func eventCells(meta metav1.ObjectMeta, e event, now time.Time) []any {
	first := age(e.first, now)
	if e.first.IsZero() {
		first = microAge(e.eventTime, now)
	}
	last := age(e.last, now)
	if e.last.IsZero() {
		last = first
	}
	count := e.count
	switch {
	case e.series != nil:
		last, count = microAge(e.series.LastObservedTime, now), e.series.Count
	case count == 0:
		count = 1 // a singleton event of the events.k8s.io API
	}
	target := strings.ToLower(e.object.Kind)
	if e.object.Name != "" {
		target += "/" + e.object.Name
	}
	component, host := e.source.Component, e.source.Host
	if component == "" {
		component = e.reportingController
	}
	if host == "" {
		host = e.reportingInstance
	}
	source := component
	if host != "" {
		source += ", " + host
	}
	return []any{last, e.typ, e.reason, target, e.object.FieldPath, source, strings.TrimSpace(e.message), first, int64(count), meta.Name}
}

// microAge is a MicroTime as the API server's printers print an age.
func microAge(t metav1.MicroTime, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

var createdAtColumn = metav1.TableColumnDefinition{Name: "Created At", Type: "date"}

// nameAndCreatedAt are the cells of the API server's default table.
func nameAndCreatedAt(obj runtime.Object, _ time.Time) ([]any, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("cannot print a %T: it has no metadata", obj)
	}
	return []any{m.GetName(), m.GetCreationTimestamp().UTC().Format(time.RFC3339)}, nil
}

var bindingColumns = []metav1.TableColumnDefinition{nameColumn, column("Role", "string"), ageColumn,
	wideColumn("Users"), wideColumn("Groups"), wideColumn("ServiceAccounts")}

// bindingCells are a role binding's cells: its role as Kind/name, and its
// subjects by kind, service accounts as namespace/name.
func bindingCells(meta metav1.ObjectMeta, ref rbacv1.RoleRef, subjects []rbacv1.Subject, now time.Time) []any {
	var users, groups, sas []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			sas = append(sas, s.Namespace+"/"+s.Name)
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		}
	}
	return []any{meta.Name, ref.Kind + "/" + ref.Name, age(meta.CreationTimestamp, now),
		strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", ")}
}

func replicationControllerCells(rc *corev1.ReplicationController, now time.Time) []any {
	var containers []corev1.Container
	if rc.Spec.Template != nil {
		containers = rc.Spec.Template.Spec.Containers
	}
	names, images := containerCells(containers)
	return []any{rc.Name, int64(deref(rc.Spec.Replicas)), int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas), age(rc.CreationTimestamp, now),
		names, images, labels.FormatLabels(rc.Spec.Selector)}
}

// resourceQuotaCells lists each hard limit as "name: used/hard", sorted by
// name, limits.* under LIMIT and the rest under REQUEST.
func resourceQuotaCells(q *corev1.ResourceQuota, now time.Time) []any {
	names := make([]string, 0, len(q.Status.Hard))
	for n := range q.Status.Hard {
		names = append(names, string(n))
	}
	slices.Sort(names)
	var request, limit []string
	for _, n := range names {
		used, hard := q.Status.Used[corev1.ResourceName(n)], q.Status.Hard[corev1.ResourceName(n)]
		cell := fmt.Sprintf("%s: %s/%s", n, used.String(), hard.String())
		if first, _, dotted := strings.Cut(n, "."); dotted && first == "limits" {
			limit = append(limit, cell)
		} else {
			request = append(request, cell)
		}
	}
	return []any{q.Name, strings.Join(request, ", "), strings.Join(limit, ", "), age(q.CreationTimestamp, now)}
}

func podDisruptionBudgetCells(pdb *policyv1.PodDisruptionBudget, now time.Time) []any {
	minAvailable, maxUnavailable := "N/A", "N/A"
	if v := pdb.Spec.MinAvailable; v != nil {
		minAvailable = v.String()
	}
	if v := pdb.Spec.MaxUnavailable; v != nil {
		maxUnavailable = v.String()
	}
	return []any{pdb.Name, minAvailable, maxUnavailable, int64(pdb.Status.DisruptionsAllowed), age(pdb.CreationTimestamp, now)}
}

func horizontalPodAutoscalerCells(hpa *autoscalingv2.HorizontalPodAutoscaler, now time.Time) []any {
	minPods := "<unset>"
	if hpa.Spec.MinReplicas != nil {
		minPods = strconv.Itoa(int(*hpa.Spec.MinReplicas))
	}
	ref := hpa.Spec.ScaleTargetRef.Kind + "/" + hpa.Spec.ScaleTargetRef.Name
	return []any{hpa.Name, ref, hpaTargets(hpa.Spec.Metrics, hpa.Status.CurrentMetrics), minPods,
		int64(hpa.Spec.MaxReplicas), int64(hpa.Status.CurrentReplicas), age(hpa.CreationTimestamp, now)}
}

// hpaTargets is the TARGETS cell: "current/target" of the first two
// metrics, the current value of the metric at the same position of the
// status, and "+ N more..." for the others.
func hpaTargets(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return None
	}
	status := func(i int) *autoscalingv2.MetricStatus {
		if i < len(statuses) {
			return &statuses[i]
		}
		return nil
	}
	var list []string
	for i, spec := range specs {
		st := status(i)
		unknown := "<unknown>"
		switch spec.Type {
		case autoscalingv2.ExternalMetricSourceType:
			cur := unknown
			if t := spec.External.Target; t.AverageValue != nil {
				if st != nil && st.External != nil && st.External.Current.AverageValue != nil {
					cur = st.External.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s/%s (avg)", cur, t.AverageValue.String()))
			} else {
				if st != nil && st.External != nil {
					cur = st.External.Current.Value.String()
				}
				list = append(list, fmt.Sprintf("%s/%s", cur, t.Value.String()))
			}
		case autoscalingv2.PodsMetricSourceType:
			cur := unknown
			if st != nil && st.Pods != nil {
				cur = st.Pods.Current.AverageValue.String()
			}
			list = append(list, fmt.Sprintf("%s/%s", cur, spec.Pods.Target.AverageValue.String()))
		case autoscalingv2.ObjectMetricSourceType:
			cur := unknown
			if t := spec.Object.Target; t.AverageValue != nil {
				if st != nil && st.Object != nil && st.Object.Current.AverageValue != nil {
					cur = st.Object.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s/%s (avg)", cur, t.AverageValue.String()))
			} else {
				if st != nil && st.Object != nil {
					cur = st.Object.Current.Value.String()
				}
				list = append(list, fmt.Sprintf("%s/%s", cur, t.Value.String()))
			}
		case autoscalingv2.ResourceMetricSourceType:
			var current *autoscalingv2.MetricValueStatus
			if st != nil && st.Resource != nil {
				current = &st.Resource.Current
			}
			list = append(list, resourceTarget(string(spec.Resource.Name), spec.Resource.Target, current))
		case autoscalingv2.ContainerResourceMetricSourceType:
			var current *autoscalingv2.MetricValueStatus
			if st != nil && st.ContainerResource != nil {
				current = &st.ContainerResource.Current
			}
			list = append(list, resourceTarget(string(spec.ContainerResource.Name), spec.ContainerResource.Target, current))
		default:
			list = append(list, "<unknown type>")
		}
	}
	const shown = 2
	if len(list) > shown {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:shown], ", "), len(list)-shown)
	}
	return strings.Join(list, ", ")
}

// resourceTarget is a resource metric's target: an average value, or a
// utilization in percent.
func resourceTarget(name string, target autoscalingv2.MetricTarget, current *autoscalingv2.MetricValueStatus) string {
	cur := "<unknown>"
	if target.AverageValue != nil {
		if current != nil {
			cur = current.AverageValue.String()
		}
		return fmt.Sprintf("%s: %s/%s", name, cur, target.AverageValue.String())
	}
	if current != nil && current.AverageUtilization != nil {
		cur = fmt.Sprintf("%d%%", *current.AverageUtilization)
	}
	want := "<auto>"
	if target.AverageUtilization != nil {
		want = fmt.Sprintf("%d%%", *target.AverageUtilization)
	}
	return fmt.Sprintf("%s: %s/%s", name, cur, want)
}

func endpointSliceCells(es *discoveryv1.EndpointSlice, now time.Time) []any {
	var ports []string
	for _, p := range es.Ports {
		switch {
		case p.Port != nil:
			ports = append(ports, strconv.Itoa(int(*p.Port)))
		case p.Name != nil:
			ports = append(ports, *p.Name)
		default:
			ports = append(ports, "*")
		}
	}
	var addresses []string
	for _, e := range es.Endpoints {
		addresses = append(addresses, e.Addresses...)
	}
	return []any{es.Name, string(es.AddressType), firstThree(ports), firstThree(addresses), age(es.CreationTimestamp, now)}
}

// endpointsCells list the first three addresses, each with every port of
// its subset (IP:port), and how many more there are.
func endpointsCells(ep *corev1.Endpoints, now time.Time) []any { //nolint:staticcheck // printed as long as the API serves it
	cell := None
	if len(ep.Subsets) > 0 {
		var list []string
		for _, ss := range ep.Subsets {
			if len(ss.Ports) == 0 {
				for _, a := range ss.Addresses {
					list = append(list, a.IP)
				}
				continue
			}
			for _, p := range ss.Ports {
				for _, a := range ss.Addresses {
					list = append(list, net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
				}
			}
		}
		if cell = firstThree(list); len(list) == 0 {
			cell = ""
		}
	}
	return []any{ep.Name, cell, age(ep.CreationTimestamp, now)}
}

// firstThree lists up to three values and says how many more there are,
// or <unset> when there are none.
func firstThree(list []string) string {
	const shown = 3
	if len(list) > shown {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:shown], ","), len(list)-shown)
	}
	if len(list) == 0 {
		return "<unset>"
	}
	return strings.Join(list, ",")
}

func certificateSigningRequestCells(csr *certificatesv1.CertificateSigningRequest, now time.Time) []any {
	var approved, denied, failed bool
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		case certificatesv1.CertificateFailed:
			failed = true
		}
	}
	status := "Pending"
	switch {
	case denied:
		status = "Denied"
	case approved:
		status = "Approved"
	}
	if failed {
		status += ",Failed"
	}
	if len(csr.Status.Certificate) > 0 {
		status += ",Issued"
	}
	requested := None
	if s := csr.Spec.ExpirationSeconds; s != nil {
		requested = duration.HumanDuration(time.Duration(*s) * time.Second)
	}
	return []any{csr.Name, age(csr.CreationTimestamp, now), orNone(csr.Spec.SignerName), csr.Spec.Username, requested, status}
}
