{{/*
The app.kubernetes.io/name label: nameOverride, else kube-state-metrics in the
kube-state-metrics mode (so that a ServiceMonitor's job, taken from this label,
is kube-state-metrics) and the chart's name in the export mode.
*/}}
{{- define "kubectl-informer.name" -}}
{{- $default := ternary "kube-state-metrics" .Chart.Name (eq .Values.mode "kube-state-metrics") -}}
{{- default $default .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The name of the objects: fullnameOverride, else RELEASE-NAME, or RELEASE when
it contains NAME.
*/}}
{{- define "kubectl-informer.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "kubectl-informer.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kubectl-informer.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride -}}
{{- end -}}

{{- define "kubectl-informer.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "kubectl-informer.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "kubectl-informer.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every object of the exporter. */}}
{{- define "kubectl-informer.labels" }}
helm.sh/chart: {{ include "kubectl-informer.chart" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: metrics
app.kubernetes.io/part-of: {{ include "kubectl-informer.name" . }}
{{- include "kubectl-informer.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- with .Values.customLabels }}
{{ tpl (toYaml .) $ }}
{{- end }}
{{- if .Values.releaseLabel }}
release: {{ .Release.Name }}
{{- end }}
{{- end }}

{{- define "kubectl-informer.selectorLabels" }}
{{- if .Values.selectorOverride }}
{{ toYaml .Values.selectorOverride }}
{{- else }}
app.kubernetes.io/name: {{ include "kubectl-informer.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}
{{- end }}

{{/*
An image reference from a dict with the image values (registry, repository,
tag, sha) and the root context.
*/}}
{{- define "kubectl-informer.imageRef" -}}
{{- $registry := default .image.registry .root.Values.global.imageRegistry -}}
{{- $ref := printf "%s/%s:%s" $registry .image.repository (default (printf "v%s" .root.Chart.AppVersion) .image.tag) -}}
{{- if .image.sha -}}
{{- $ref = printf "%s@%s" $ref .image.sha -}}
{{- end -}}
{{- $ref -}}
{{- end -}}

{{- define "kubectl-informer.image" -}}
{{- include "kubectl-informer.imageRef" (dict "image" .Values.image "root" .) -}}
{{- end -}}

{{- define "kubectl-informer.kubeRBACProxyImage" -}}
{{- include "kubectl-informer.imageRef" (dict "image" .Values.kubeRBACProxy.image "root" .) -}}
{{- end -}}

{{/* imagePullSecrets from global.imagePullSecrets and .imagePullSecrets, names or maps. */}}
{{- define "kubectl-informer.imagePullSecrets" -}}
{{- range (concat .Values.global.imagePullSecrets .imagePullSecrets) }}
{{- if kindIs "map" . }}
- {{ toYaml . | trim }}
{{- else }}
- name: {{ . }}
{{- end }}
{{- end }}
{{- end -}}

{{/* A comma-separated string or a list, as a list. */}}
{{- define "kubectl-informer.list" -}}
{{- if kindIs "string" . -}}
{{- $items := list -}}
{{- range splitList "," . -}}
{{- if trim . -}}
{{- $items = append $items (trim .) -}}
{{- end -}}
{{- end -}}
{{- toYaml $items -}}
{{- else -}}
{{- toYaml (default (list) .) -}}
{{- end -}}
{{- end -}}

{{/* collectors without collectorsExclude, then collectorsExtra, without repeats. */}}
{{- define "kubectl-informer.collectors" -}}
{{- $exclude := include "kubectl-informer.list" .Values.collectorsExclude | fromYamlArray -}}
{{- $final := list -}}
{{- range include "kubectl-informer.list" .Values.collectors | fromYamlArray -}}
{{- if not (has . $exclude) -}}
{{- $final = append $final . -}}
{{- end -}}
{{- end -}}
{{- $final = concat $final (include "kubectl-informer.list" .Values.collectorsExtra | fromYamlArray) | uniq -}}
{{- toYaml $final -}}
{{- end -}}

{{/* The namespaces to watch: namespaces (templated) and the release namespace. */}}
{{- define "kubectl-informer.namespaces" -}}
{{- $namespaces := list -}}
{{- range include "kubectl-informer.list" .Values.namespaces | fromYamlArray -}}
{{- $namespaces = append $namespaces (tpl . $) -}}
{{- end -}}
{{- if .Values.releaseNamespace -}}
{{- $namespaces = append $namespaces (include "kubectl-informer.namespace" .) -}}
{{- end -}}
{{- toYaml ($namespaces | uniq) -}}
{{- end -}}

{{/*
The API group of each resource kube-state-metrics serves, and of the other
built-in resources a config is likely to read.
*/}}
{{- define "kubectl-informer.apiGroups" -}}
"": [configmaps, endpoints, events, limitranges, namespaces, nodes, persistentvolumeclaims, persistentvolumes, pods, podtemplates, replicationcontrollers, resourcequotas, secrets, serviceaccounts, services]
admissionregistration.k8s.io: [mutatingadmissionpolicies, mutatingadmissionpolicybindings, mutatingwebhookconfigurations, validatingadmissionpolicies, validatingadmissionpolicybindings, validatingwebhookconfigurations]
apiextensions.k8s.io: [customresourcedefinitions]
apps: [controllerrevisions, daemonsets, deployments, replicasets, statefulsets]
autoscaling: [horizontalpodautoscalers]
batch: [cronjobs, jobs]
certificates.k8s.io: [certificatesigningrequests]
coordination.k8s.io: [leases]
discovery.k8s.io: [endpointslices]
networking.k8s.io: [ingressclasses, ingresses, networkpolicies]
node.k8s.io: [runtimeclasses]
policy: [poddisruptionbudgets]
rbac.authorization.k8s.io: [clusterrolebindings, clusterroles, rolebindings, roles]
scheduling.k8s.io: [priorityclasses]
storage.k8s.io: [csidrivers, csinodes, storageclasses, volumeattachments]
{{- end -}}

{{/*
The resources kube-state-metrics v2.20 serves (its --resources): its 32
defaults and those it serves when named.
*/}}
{{- define "kubectl-informer.ksmResources" -}}
[certificatesigningrequests, clusterrolebindings, clusterroles, configmaps, cronjobs, daemonsets, deployments, endpoints, endpointslices, horizontalpodautoscalers, ingressclasses, ingresses, jobs, leases, limitranges, mutatingadmissionpolicies, mutatingadmissionpolicybindings, mutatingwebhookconfigurations, namespaces, networkpolicies, nodes, persistentvolumeclaims, persistentvolumes, poddisruptionbudgets, pods, replicasets, replicationcontrollers, resourcequotas, rolebindings, roles, secrets, serviceaccounts, services, statefulsets, storageclasses, validatingadmissionpolicies, validatingadmissionpolicybindings, validatingwebhookconfigurations, volumeattachments]
{{- end -}}

{{/*
list and watch rules, one per API group, for a dict with "resources" (names
as RESOURCE or RESOURCE.GROUP) and "what" (the value they come from, named in
the error for a resource of no known group).
*/}}
{{- define "kubectl-informer.listWatchRules" -}}
{{- $known := include "kubectl-informer.apiGroups" . | fromYaml -}}
{{- $byGroup := dict -}}
{{- range $r := .resources -}}
{{- $name := $r -}}
{{- $group := "" -}}
{{- $found := false -}}
{{- if contains "." $r -}}
{{- $parts := splitn "." 2 $r -}}
{{- $name = $parts._0 -}}
{{- $group = $parts._1 -}}
{{- $found = true -}}
{{- else -}}
{{- range $g, $resources := $known -}}
{{- if has $r $resources -}}
{{- $group = $g -}}
{{- $found = true -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if not $found -}}
{{- fail (printf "%s: no API group known for resource %q: write it as RESOURCE.GROUP (widgets.example.com), or grant it in rbac.extraRules" $.what $r) -}}
{{- end -}}
{{- $_ := set $byGroup $group (append (get $byGroup $group | default list) $name | uniq | sortAlpha) -}}
{{- end -}}
{{- range $group := keys $byGroup | sortAlpha }}
- apiGroups: [{{ $group | quote }}]
  resources: {{ get $byGroup $group | toJson }}
  verbs: ["list", "watch"]
{{- end }}
{{- end -}}

{{/* The ConfigMap of customResourceState. */}}
{{- define "kubectl-informer.crsConfigMapName" -}}
{{- default (printf "%s-customresourcestate-config" (include "kubectl-informer.fullname" .)) .Values.customResourceState.name -}}
{{- end -}}

{{/* The ConfigMap of export.config. */}}
{{- define "kubectl-informer.exportConfigMapName" -}}
{{- default (printf "%s-config" (include "kubectl-informer.fullname" .)) .Values.export.existingConfigMap -}}
{{- end -}}

{{/* The main port the exporter listens on in its container. */}}
{{- define "kubectl-informer.containerPort" -}}
{{- ternary .Values.kubeRBACProxy.port (.Values.service.port | default 8080) .Values.kubeRBACProxy.enabled -}}
{{- end -}}

{{/* The telemetry port the exporter listens on in its container. */}}
{{- define "kubectl-informer.telemetryContainerPort" -}}
{{- ternary 9091 (.Values.selfMonitor.telemetryPort | default 8081) .Values.kubeRBACProxy.enabled -}}
{{- end -}}

{{/*
Values that cannot work together, each failing with what to change. Included
by every template that renders the workload, so that it fails whichever is
rendered first.
*/}}
{{- define "kubectl-informer.validate" -}}
{{- if and .Values.metricAllowlist .Values.metricDenylist -}}
{{- fail "metricAllowlist and metricDenylist: give one of the two (kube-state-metrics refuses both)" -}}
{{- end -}}
{{- if eq .Values.mode "export" -}}
{{- if and (not .Values.export.config) (not .Values.export.existingConfigMap) (not .Values.export.profile) -}}
{{- fail "mode \"export\" needs export.config, export.existingConfigMap or export.profile: kube-state-metrics" -}}
{{- end -}}
{{- if and .Values.export.config .Values.export.existingConfigMap -}}
{{- fail "export.config and export.existingConfigMap: give one of the two" -}}
{{- end -}}
{{- if .Values.authFilter.enabled -}}
{{- fail "authFilter.enabled: the export mode has no --auth-filter; use kubeRBACProxy.enabled, or mode: kube-state-metrics" -}}
{{- end -}}
{{- if .Values.selfMonitor.enabled -}}
{{- fail "selfMonitor.enabled: the export mode has no telemetry port (its own metrics are on the main port's /metrics); set selfMonitor.enabled: false" -}}
{{- end -}}
{{- end -}}
{{- if and .Values.rbac.create (not .Values.rbac.useClusterRole) (not (include "kubectl-informer.namespaces" . | fromYamlArray)) -}}
{{- fail "rbac.useClusterRole: false grants a Role in each of namespaces: set namespaces (or releaseNamespace: true)" -}}
{{- end -}}
{{- end -}}

{{/*
A probe from a dict: "probe" (its values), "path", "port" (a port's name) and
"root". Through kube-rbac-proxy, HTTPS.
*/}}
{{- define "kubectl-informer.probe" -}}
{{- $v := .root.Values -}}
failureThreshold: {{ .probe.failureThreshold }}
httpGet:
  {{- if $v.hostNetwork }}
  host: 127.0.0.1
  {{- end }}
  {{- with .probe.httpGet.httpHeaders }}
  httpHeaders:
  {{- range . }}
  - name: {{ .name | quote }}
    value: {{ .value | quote }}
  {{- end }}
  {{- end }}
  path: {{ .path }}
  port: {{ .port }}
  scheme: {{ ternary "HTTPS" (upper .probe.httpGet.scheme) $v.kubeRBACProxy.enabled }}
initialDelaySeconds: {{ .probe.initialDelaySeconds }}
periodSeconds: {{ .probe.periodSeconds }}
successThreshold: {{ .probe.successThreshold }}
timeoutSeconds: {{ .probe.timeoutSeconds }}
{{- end -}}

{{/*
A kube-rbac-proxy container from a dict: "name", "listen" (its port),
"upstream" (the exporter's port on 127.0.0.1), "portName", "healthPort",
"healthPortName" and "root".
*/}}
{{- define "kubectl-informer.kubeRBACProxy" -}}
{{- $p := .root.Values.kubeRBACProxy -}}
- name: {{ .name }}
  image: {{ include "kubectl-informer.kubeRBACProxyImage" .root }}
  imagePullPolicy: {{ $p.image.pullPolicy }}
  args:
  {{- with $p.extraArgs }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
  {{- if $p.ignoreProbePaths }}
  - --ignore-paths=/healthz,/livez,/readyz
  {{- end }}
  - --secure-listen-address=:{{ .listen }}
  - --upstream=http://127.0.0.1:{{ .upstream }}/
  - --proxy-endpoints-port={{ .healthPort }}
  - --config-file=/etc/kube-rbac-proxy-config/config-file.yaml
  ports:
  - name: {{ .portName }}
    containerPort: {{ .listen }}
  - name: {{ .healthPortName }}
    containerPort: {{ .healthPort }}
  readinessProbe:
    httpGet:
      scheme: HTTPS
      port: {{ .healthPortName }}
      path: /healthz
    initialDelaySeconds: 5
    timeoutSeconds: 5
  volumeMounts:
  - name: kube-rbac-proxy-config
    mountPath: /etc/kube-rbac-proxy-config
  {{- with $p.volumeMounts }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
  {{- with $p.resources }}
  resources:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $p.containerSecurityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{/* The scrape limits of a ServiceMonitor or ScrapeConfig, those set. */}}
{{- define "kubectl-informer.scrapeLimits" -}}
{{- range $key := list "sampleLimit" "targetLimit" "labelLimit" "labelNameLengthLimit" "labelValueLengthLimit" }}
{{- with get $ $key }}
{{ $key }}: {{ . }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
A ServiceMonitor endpoint from a dict: "port", "endpoint" (its values) and
"monitor" (the values of both endpoints, which the endpoint's own override).
*/}}
{{- define "kubectl-informer.monitorEndpoint" -}}
{{- $e := .endpoint -}}
{{- $m := .monitor -}}
- port: {{ .port }}
  {{- range $key := list "interval" "scrapeTimeout" "proxyUrl" "scheme" "bearerTokenFile" }}
  {{- with (get $e $key | default (get $m $key)) }}
  {{ $key }}: {{ . }}
  {{- end }}
  {{- end }}
  {{- if or $e.enableHttp2 $m.enableHttp2 }}
  enableHttp2: true
  {{- end }}
  {{- if or $e.honorLabels $m.honorLabels }}
  honorLabels: true
  {{- end }}
  {{- range $key := list "metricRelabelings" "relabelings" "tlsConfig" "bearerTokenSecret" }}
  {{- with (get $e $key | default (get $m $key)) }}
  {{ $key }}:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- end }}
{{- end -}}

{{/* The name of the query server's objects. */}}
{{- define "kubectl-informer.serveFullname" -}}
{{- if .Values.fullnameOverride -}}
{{- printf "%s-query" (.Values.fullnameOverride | trunc 57 | trimSuffix "-") -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- printf "%s-query" (.Release.Name | trunc 57 | trimSuffix "-") -}}
{{- else -}}
{{- printf "%s-%s-query" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
The query server's selector labels: a name of its own, so that the
exporter's Service, which selects by name and instance, never selects it.
*/}}
{{- define "kubectl-informer.serveSelectorLabels" }}
app.kubernetes.io/name: {{ .Chart.Name }}-query
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "kubectl-informer.serveLabels" }}
helm.sh/chart: {{ include "kubectl-informer.chart" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: query
app.kubernetes.io/part-of: {{ .Chart.Name }}
{{- include "kubectl-informer.serveSelectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- with .Values.customLabels }}
{{ tpl (toYaml .) $ }}
{{- end }}
{{- end }}
