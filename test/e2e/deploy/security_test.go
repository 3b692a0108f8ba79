package deploy_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// podTemplatePaths are where the kinds that run pods hold their pod
// template (for a Pod, the pod itself).
var podTemplatePaths = map[string][]string{
	"Pod":                   nil,
	"Deployment":            {"spec", "template"},
	"StatefulSet":           {"spec", "template"},
	"DaemonSet":             {"spec", "template"},
	"ReplicaSet":            {"spec", "template"},
	"ReplicationController": {"spec", "template"},
	"Job":                   {"spec", "template"},
	"CronJob":               {"spec", "jobTemplate", "spec", "template"},
}

// podSecurityProblems checks every pod template among objs and returns
// how many there are and what is wrong with them. Each container (init and ephemeral ones included) must
// run as a non-root, non-zero user, with a read-only root filesystem, no
// privilege escalation, every capability dropped and the runtime's default
// seccomp profile, set on the container or inherited from the pod; and the
// pod must get its service account's token, which kubectl-informer needs to
// reach the API server: neither the pod nor its ServiceAccount (among objs,
// or among serviceAccounts) may turn automountServiceAccountToken off.
func podSecurityProblems(t *testing.T, what string, objs []*unstructured.Unstructured, serviceAccounts []*unstructured.Unstructured) (templates int, problems []string) {
	t.Helper()
	errorf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	automount := map[string]*bool{} // by namespace/name; namespace "" matches any
	for _, u := range append(slices.Clone(serviceAccounts), objs...) {
		if u.GetKind() != "ServiceAccount" {
			continue
		}
		var sa corev1.ServiceAccount
		fromUnstructured(t, u, &sa)
		automount[sa.Namespace+"/"+sa.Name] = sa.AutomountServiceAccountToken
	}
	for _, u := range objs {
		path, ok := podTemplatePaths[u.GetKind()]
		if !ok {
			continue
		}
		templates++
		name := what + ": " + u.GetKind() + " " + u.GetName()
		tpl := u.Object
		if len(path) > 0 {
			var found bool
			tpl, found, _ = unstructured.NestedMap(u.Object, path...)
			if !found {
				errorf("%s: no pod template", name)
				continue
			}
		}
		var pod corev1.Pod
		fromUnstructured(t, &unstructured.Unstructured{Object: tpl}, &pod)
		spec := pod.Spec
		psc := spec.SecurityContext
		if psc == nil {
			psc = &corev1.PodSecurityContext{}
		}
		if v := spec.AutomountServiceAccountToken; v != nil && !*v {
			errorf("%s: automountServiceAccountToken is false: kubectl-informer needs its token", name)
		}
		sa := spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		for _, k := range []string{u.GetNamespace() + "/" + sa, "/" + sa} {
			if v := automount[k]; v != nil && !*v && spec.AutomountServiceAccountToken == nil {
				errorf("%s: ServiceAccount %s turns automountServiceAccountToken off and the pod does not turn it on: kubectl-informer needs its token", name, sa)
			}
		}
		var containers []corev1.SecurityContext
		var names []string
		for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
			containers = append(containers, ptrValue(c.SecurityContext))
			names = append(names, c.Name)
		}
		for _, c := range spec.EphemeralContainers {
			containers = append(containers, ptrValue(c.SecurityContext))
			names = append(names, c.Name)
		}
		if len(spec.Containers) == 0 {
			errorf("%s: no containers", name)
		}
		for i, sc := range containers {
			cname := name + " container " + names[i]
			if !ptrValue(first(sc.RunAsNonRoot, psc.RunAsNonRoot)) {
				errorf("%s: runAsNonRoot is not true", cname)
			}
			if uid := first(sc.RunAsUser, psc.RunAsUser); uid == nil {
				errorf("%s: runAsUser is not set, want a non-zero user", cname)
			} else if *uid == 0 {
				errorf("%s: runAsUser is 0, want a non-zero user", cname)
			}
			if !ptrValue(sc.ReadOnlyRootFilesystem) {
				errorf("%s: readOnlyRootFilesystem is not true", cname)
			}
			if v := sc.AllowPrivilegeEscalation; v == nil || *v {
				errorf("%s: allowPrivilegeEscalation is not false", cname)
			}
			if ptrValue(sc.Privileged) {
				errorf("%s: privileged", cname)
			}
			if c := ptrValue(sc.Capabilities); !slices.Contains(c.Drop, "ALL") || len(c.Add) > 0 {
				errorf("%s: capabilities drop %v and add %v, want drop [ALL] and nothing added", cname, c.Drop, c.Add)
			}
			if p := ptrValue(first(sc.SeccompProfile, psc.SeccompProfile)); p.Type != corev1.SeccompProfileTypeRuntimeDefault {
				errorf("%s: seccompProfile type %q, want RuntimeDefault", cname, p.Type)
			}
		}
	}
	return templates, problems
}

// TestPodSecurityOfRenderings checks the pod templates of what every
// kustomization of deploy/, and every combination with the component,
// renders.
func TestPodSecurityOfRenderings(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		dir                   string
		resources, components []string
		templates             int
	}{
		{name: "base", dir: "deploy/base", templates: 1},
		{name: "sharded", dir: "deploy/sharded", templates: 1},
		{name: "servicemonitor", dir: "deploy/servicemonitor", templates: 0},
		{name: "base with servicemonitor", resources: []string{"deploy/base"}, components: []string{"deploy/servicemonitor"}, templates: 1},
		{name: "sharded with servicemonitor", resources: []string{"deploy/sharded"}, components: []string{"deploy/servicemonitor"}, templates: 1},
		{name: "serve", dir: "deploy/serve", templates: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir
			if dir == "" {
				dir = kustomization(t, tc.resources, tc.components)
			} else {
				dir = filepath.Join(cluster.Root, dir)
			}
			out, stderr, err := kubectl("kustomize", dir)
			if err != nil || stderr != "" {
				t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, stderr)
			}
			n, problems := podSecurityProblems(t, tc.name, decodeAll(t, []byte(out)), nil)
			for _, p := range problems {
				t.Error(p)
			}
			if n != tc.templates {
				t.Errorf("%d pod templates, want %d", n, tc.templates)
			}
		})
	}
}

// TestPodSecurityOfManifests checks the pod templates of every manifest
// file under deploy/ as written, kustomizations aside, so that a manifest
// no kustomization uses yet is held to the same rules.
func TestPodSecurityOfManifests(t *testing.T) {
	root := filepath.Join(cluster.Root, "deploy")
	files := map[string][]*unstructured.Unstructured{}
	var serviceAccounts []*unstructured.Unstructured
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(cluster.Root, path)
		for _, u := range decodeAll(t, data) {
			switch u.GetKind() {
			case "Kustomization", "Component":
				continue
			case "ServiceAccount":
				serviceAccounts = append(serviceAccounts, u)
			}
			files[rel] = append(files[rel], u)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	templates := 0
	for _, rel := range keys(files) {
		n, problems := podSecurityProblems(t, rel, files[rel], serviceAccounts)
		for _, p := range problems {
			t.Error(p)
		}
		templates += n
	}
	// deploy/base/deployment.yaml, deploy/sharded/statefulset.yaml and
	// deploy/serve/deployment.yaml.
	if templates < 3 {
		t.Errorf("%d pod templates in the manifests under deploy/, want at least 3", templates)
	}
}

// TestPodSecurityProblems checks that the check finds each problem: a
// Deployment whose pod runs as root with the defaults and turns its token
// off, a CronJob whose ServiceAccount turns it off, and a Pod whose
// container overrides a secure pod context.
func TestPodSecurityProblems(t *testing.T) {
	objs := decodeAll(t, []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: lax}
spec:
  template:
    spec:
      automountServiceAccountToken: false
      containers:
      - name: app
        image: app
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: tokenless, namespace: ns}
automountServiceAccountToken: false
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: job, namespace: ns}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          serviceAccountName: tokenless
          securityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
          containers:
          - name: app
            image: app
            securityContext: {readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
---
apiVersion: v1
kind: Pod
metadata: {name: pod}
spec:
  securityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: app
    image: app
    securityContext:
      runAsUser: 0
      runAsNonRoot: false
      readOnlyRootFilesystem: true
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL], add: [NET_ADMIN]}
      seccompProfile: {type: Unconfined}
`))
	n, problems := podSecurityProblems(t, "test", objs, nil)
	want := []string{
		"test: Deployment lax: automountServiceAccountToken is false: kubectl-informer needs its token",
		"test: Deployment lax container app: runAsNonRoot is not true",
		"test: Deployment lax container app: runAsUser is not set, want a non-zero user",
		"test: Deployment lax container app: readOnlyRootFilesystem is not true",
		"test: Deployment lax container app: allowPrivilegeEscalation is not false",
		"test: Deployment lax container app: capabilities drop [] and add [], want drop [ALL] and nothing added",
		`test: Deployment lax container app: seccompProfile type "", want RuntimeDefault`,
		"test: CronJob job: ServiceAccount tokenless turns automountServiceAccountToken off and the pod does not turn it on: kubectl-informer needs its token",
		"test: Pod pod container app: runAsNonRoot is not true",
		"test: Pod pod container app: runAsUser is 0, want a non-zero user",
		"test: Pod pod container app: capabilities drop [ALL] and add [NET_ADMIN], want drop [ALL] and nothing added",
		`test: Pod pod container app: seccompProfile type "Unconfined", want RuntimeDefault`,
	}
	if n != 3 {
		t.Errorf("%d pod templates, want 3", n)
	}
	if len(problems) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(problems), len(want), strings.Join(problems, "\n"))
	}
	for i := range min(len(problems), len(want)) {
		if problems[i] != want[i] {
			t.Errorf("problem %d: %q, want %q", i, problems[i], want[i])
		}
	}
}
