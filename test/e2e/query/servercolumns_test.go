package query_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestServerColumnsMatchKubectl compares query's tables with kubectl
// get's for the built-in kinds whose columns query takes from the API
// server's tables (webhook configurations, admission policies, runtime
// classes, volume attachments, flow schemas, priority levels, API
// services, component statuses), and for events, whose columns it
// computes, in the default table and -o wide. The objects are created
// labelled columns=NS (none of them changes how the cluster serves
// requests: the webhooks and policies match a group nothing serves); the
// built-in flow schemas, priority levels and API services are listed too.
func TestServerColumnsMatchKubectl(t *testing.T) {
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "server-columns")
	other := cluster.NewNamespace(t, "server-columns")
	lbl := map[string]string{"columns": ns}
	sel := "columns=" + ns
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name + "-" + ns, Labels: lbl} }
	c := cluster.Client
	adm := c.AdmissionregistrationV1()
	nowhere := admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{"columns.invalid"}, APIVersions: []string{"v1"}, Resources: []string{"things"}}}
	client := admissionregistrationv1.WebhookClientConfig{URL: ptr("https://columns.invalid/hook")}
	ignore, none := admissionregistrationv1.Ignore, admissionregistrationv1.SideEffectClassNone

	vwc, err := adm.ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: meta("hooks"),
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			{Name: "a.columns.invalid", ClientConfig: client, Rules: []admissionregistrationv1.RuleWithOperations{nowhere}, FailurePolicy: &ignore, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}},
			{Name: "b.columns.invalid", ClientConfig: client, Rules: []admissionregistrationv1.RuleWithOperations{nowhere}, FailurePolicy: &ignore, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}},
		}}, metav1.CreateOptions{})
	check(t, "creating a validating webhook configuration", err)
	t.Cleanup(func() {
		_ = adm.ValidatingWebhookConfigurations().Delete(context.Background(), vwc.Name, metav1.DeleteOptions{})
	})
	mwc, err := adm.MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: meta("hooks"),
		Webhooks: []admissionregistrationv1.MutatingWebhook{
			{Name: "a.columns.invalid", ClientConfig: client, Rules: []admissionregistrationv1.RuleWithOperations{nowhere}, FailurePolicy: &ignore, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}},
		}}, metav1.CreateOptions{})
	check(t, "creating a mutating webhook configuration", err)
	t.Cleanup(func() {
		_ = adm.MutatingWebhookConfigurations().Delete(context.Background(), mwc.Name, metav1.DeleteOptions{})
	})
	vap, err := adm.ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: meta("policy"),
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr(admissionregistrationv1.Ignore),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
				{RuleWithOperations: nowhere}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "true"}},
		}}, metav1.CreateOptions{})
	check(t, "creating a validating admission policy", err)
	t.Cleanup(func() {
		_ = adm.ValidatingAdmissionPolicies().Delete(context.Background(), vap.Name, metav1.DeleteOptions{})
	})
	vapb, err := adm.ValidatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: meta("binding"),
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: vap.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn, admissionregistrationv1.Audit}},
	}, metav1.CreateOptions{})
	check(t, "creating a validating admission policy binding", err)
	t.Cleanup(func() {
		_ = adm.ValidatingAdmissionPolicyBindings().Delete(context.Background(), vapb.Name, metav1.DeleteOptions{})
	})

	rc, err := c.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: meta("sandbox"), Handler: "sandbox"}, metav1.CreateOptions{})
	check(t, "creating a runtime class", err)
	t.Cleanup(func() { _ = c.NodeV1().RuntimeClasses().Delete(context.Background(), rc.Name, metav1.DeleteOptions{}) })
	va, err := c.StorageV1().VolumeAttachments().Create(ctx, &storagev1.VolumeAttachment{ObjectMeta: meta("attach"),
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.columns.invalid", NodeName: "node-" + ns,
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr("pv-" + ns)}}}, metav1.CreateOptions{})
	check(t, "creating a volume attachment", err)
	t.Cleanup(func() {
		_ = c.StorageV1().VolumeAttachments().Delete(context.Background(), va.Name, metav1.DeleteOptions{})
	})

	fc := c.FlowcontrolV1()
	pl, err := fc.PriorityLevelConfigurations().Create(ctx, &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: meta("level"),
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr(int32(1)),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}}}, metav1.CreateOptions{})
	check(t, "creating a priority level", err)
	t.Cleanup(func() {
		_ = fc.PriorityLevelConfigurations().Delete(context.Background(), pl.Name, metav1.DeleteOptions{})
	})
	fs, err := fc.FlowSchemas().Create(ctx, &flowcontrolv1.FlowSchema{ObjectMeta: meta("schema"),
		Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: pl.Name},
			MatchingPrecedence:  9000,
			DistinguisherMethod: &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByNamespaceType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "nobody-" + ns}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"get"}, APIGroups: []string{"columns.invalid"},
					Resources: []string{"things"}, ClusterScope: true}},
			}}}}, metav1.CreateOptions{})
	check(t, "creating a flow schema", err)
	t.Cleanup(func() { _ = fc.FlowSchemas().Delete(context.Background(), fs.Name, metav1.DeleteOptions{}) })
	// The API server marks a flow schema whose priority level exists.
	framework.Eventually(t, "the flow schema's status is written", func() bool {
		got, err := fc.FlowSchemas().Get(ctx, fs.Name, metav1.GetOptions{})
		return err == nil && len(got.Status.Conditions) > 0
	})

	createEvents(t, ns, lbl)
	createEvents(t, other, lbl)

	var cases [][]string
	for _, kind := range []string{"validatingwebhookconfigurations", "mutatingwebhookconfigurations", "validatingadmissionpolicies",
		"validatingadmissionpolicybindings", "runtimeclasses", "volumeattachments", "flowschemas", "prioritylevelconfigurations"} {
		cases = append(cases, []string{kind, "-l", sel}, []string{kind, "-l", sel, "-o", "wide"})
	}
	cases = append(cases,
		// The built-in ones: the server orders flow schemas by precedence.
		[]string{"flowschemas"},
		[]string{"prioritylevelconfigurations", "-o", "wide"},
		[]string{"apiservices", "-l", "kube-aggregator.kubernetes.io/automanaged=onstart"},
		[]string{"apiservices", "-l", "kube-aggregator.kubernetes.io/automanaged=onstart", "-o", "wide"},
		[]string{"runtimeclasses,volumeattachments", "-l", sel},
		[]string{"runtimeclasses", "-l", sel, "--show-kind", "--show-labels"},
		[]string{"runtimeclasses", rc.Name},
		[]string{"events", "-n", ns},
		[]string{"events", "-n", ns, "-o", "wide"},
		[]string{"events", "-A", "-l", sel},
		[]string{"events", "-A", "-l", sel, "-o", "wide"},
		[]string{"events.events.k8s.io", "-n", ns, "-o", "wide"},
		[]string{"events,runtimeclasses", "-n", ns, "-l", sel},
	)
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			got := query(t, args...)
			want := kubectl(t, append([]string{"get"}, args...)...)
			if got.code != 0 || want.code != 0 || got.errOut != want.errOut || want.out == "" {
				t.Fatalf("query %s\nexit code %d, stderr %q\nkubectl: exit code %d, stderr %q, stdout %q", strings.Join(args, " "), got.code, got.errOut, want.code, want.errOut, want.out)
			}
			sameTable(t, args, got, want, -1)
		})
	}

	// Component statuses come in no order of their own (and with the
	// server's deprecation warning).
	t.Run("componentstatuses", func(t *testing.T) {
		got := query(t, "componentstatuses")
		want := kubectl(t, "get", "componentstatuses")
		if got.code != 0 || want.code != 0 || got.errOut != want.errOut || want.out == "" {
			t.Fatalf("query: exit code %d, stderr %q\nkubectl: exit code %d, stderr %q", got.code, got.errOut, want.code, want.errOut)
		}
		g, _ := framework.AgelessTable(got.out, -1)
		w, _ := framework.AgelessTable(want.out, -1)
		slices.SortFunc(g[1:], slices.Compare)
		slices.SortFunc(w[1:], slices.Compare)
		if !slices.EqualFunc(g, w, slices.Equal) {
			t.Errorf("query printed\n%s\nkubectl get printed\n%s", got.out, want.out)
		}
	})
}

// createEvents creates, in ns, labelled lbl, events of both APIs in the
// shapes their columns print differently: with a count and a source, with
// an event time and a reporting controller only, with a series, and one
// whose object has no name. Their timestamps are years old, so that two
// commands print the same ages.
func createEvents(t *testing.T, ns string, lbl map[string]string) {
	t.Helper()
	ctx := context.Background()
	first := metav1.NewTime(longAgo.Add(24 * time.Hour))
	last := metav1.NewTime(longAgo.Add(400 * 24 * time.Hour))
	micro := metav1.NewMicroTime(longAgo.Add(800 * 24 * time.Hour))
	core := cluster.Client.CoreV1().Events(ns)
	for _, e := range []*corev1.Event{
		{ObjectMeta: metav1.ObjectMeta{Name: "web.1", Labels: lbl},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "web", FieldPath: "spec.containers{app}"},
			Reason:         "BackOff", Type: corev1.EventTypeWarning, Message: "  Back-off restarting failed container\n",
			FirstTimestamp: first, LastTimestamp: last, Count: 7, Source: corev1.EventSource{Component: "kubelet", Host: "node-1"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "web.2", Labels: lbl},
			InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns},
			Reason:         "Started", Type: corev1.EventTypeNormal, Message: "started", EventTime: micro,
			ReportingController: "columns.invalid/ctl", ReportingInstance: "ctl-1", Action: "Start"},
		{ObjectMeta: metav1.ObjectMeta{Name: "web.3", Labels: lbl},
			InvolvedObject: corev1.ObjectReference{Kind: "Deployment", Namespace: ns, Name: "web"},
			Reason:         "ScalingReplicaSet", Type: corev1.EventTypeNormal, Message: "Scaled up", FirstTimestamp: first},
	} {
		_, err := core.Create(ctx, e, metav1.CreateOptions{})
		check(t, "creating event "+e.Name, err)
	}
	_, err := cluster.Client.EventsV1().Events(ns).Create(ctx, &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "app.1", Labels: lbl},
		Regarding: corev1.ObjectReference{Kind: "Deployment", Namespace: ns, Name: "app"},
		Reason:    "Scaled", Type: corev1.EventTypeNormal, Note: "scaled up", EventTime: micro, Action: "Scale",
		ReportingController: "columns.invalid/deployment", ReportingInstance: "cm-1",
		Series: &eventsv1.EventSeries{Count: 3, LastObservedTime: metav1.NewMicroTime(longAgo.Add(900 * 24 * time.Hour))},
	}, metav1.CreateOptions{})
	check(t, "creating an events.k8s.io event", err)
}

// TestQueryWatchServerColumns runs query -w on validating webhook
// configurations, whose columns are the API server's, then creates one
// and adds a webhook to another: each new answer is the table kubectl get
// prints then, with the rows of the objects created or changed since the
// first answer (WEBHOOKS counts them).
func TestQueryWatchServerColumns(t *testing.T) {
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "server-columns-watch")
	sel := "columns=" + ns
	configs := cluster.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	ignore, none := admissionregistrationv1.Ignore, admissionregistrationv1.SideEffectClassNone
	hook := func(name string) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{Name: name + ".columns.invalid", FailurePolicy: &ignore, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr("https://columns.invalid/hook")},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"columns.invalid"}, APIVersions: []string{"v1"}, Resources: []string{"things"}}}}}
	}
	create := func(name string) {
		t.Helper()
		_, err := configs.Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"columns": ns}},
			Webhooks:   []admissionregistrationv1.ValidatingWebhook{hook("a")}}, metav1.CreateOptions{})
		check(t, "creating webhook configuration "+name, err)
		t.Cleanup(func() { _ = configs.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	create("first-" + ns)
	r := cluster.StartPlugin(t, "query", "validatingwebhookconfigurations", "-l", sel, "-w")
	framework.Eventually(t, "the first answer is printed", func() bool { return strings.Contains(r.Out.String(), "first-"+ns) })

	// sameAsKubectl waits for an answer that is the table kubectl get
	// prints, which must hold want (its blanks any run of them).
	sameAsKubectl := func(want string) {
		t.Helper()
		args := []string{"validatingwebhookconfigurations", "-l", sel}
		k := kubectl(t, append([]string{"get"}, args...)...)
		if !strings.Contains(strings.Join(strings.Fields(k.out), " "), want) {
			t.Fatalf("kubectl get printed\n%s%s\nwant %q in it", k.out, k.errOut, want)
		}
		w, _ := framework.AgelessTable(k.out, -1)
		var last string
		framework.Eventually(t, "an answer holding "+want, func() bool {
			answers := strings.Split(strings.TrimSuffix(r.Out.String(), "\n"), "\n\n")
			last = answers[len(answers)-1] + "\n"
			g, _ := framework.AgelessTable(last, -1)
			return slices.EqualFunc(g, w, slices.Equal)
		})
		sameTable(t, append(args, "-w"), result{out: last}, k, -1)
	}
	create("second-" + ns)
	sameAsKubectl("second-" + ns)

	vwc, err := configs.Get(ctx, "first-"+ns, metav1.GetOptions{})
	check(t, "reading webhook configuration first", err)
	vwc.Webhooks = append(vwc.Webhooks, hook("b"))
	_, err = configs.Update(ctx, vwc, metav1.UpdateOptions{})
	check(t, "adding a webhook", err)
	sameAsKubectl("first-" + ns + " 2")
}
