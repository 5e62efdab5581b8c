{{- define "lightbox.fullname" -}}
{{- printf "%s" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Cluster-scoped objects (and Roles outside the release namespace) carry
the namespace too: two releases of one name in two namespaces stay apart. */}}
{{- define "lightbox.clusterName" -}}
{{- printf "%s-%s" .Release.Namespace (include "lightbox.fullname" .) -}}
{{- end -}}

{{- define "lightbox.labels" -}}
app.kubernetes.io/name: lightbox
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "lightbox.selector" -}}
app.kubernetes.io/name: lightbox
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "lightbox.image" -}}
{{- $repo := .Values.image.repository -}}
{{- with .Values.global.imageRegistry }}{{ $repo = printf "%s/%s" . $repo }}{{ end -}}
{{- if .Values.image.digest -}}
{{ $repo }}@{{ .Values.image.digest }}
{{- else -}}
{{ $repo }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{- define "lightbox.secretName" -}}
{{ .Values.existingSecret | default (printf "%s-secrets" (include "lightbox.fullname" .)) }}
{{- end -}}

{{/* The ServiceAccount of a component: {root, component}. */}}
{{- define "lightbox.serviceAccountName" -}}
{{- $sa := (index .root.Values .component).serviceAccount -}}
{{- if $sa.create -}}
{{ $sa.name | default (printf "%s-%s" (include "lightbox.fullname" .root) .component) }}
{{- else -}}
{{ required (printf "%s.serviceAccount.name is required when create is false" .component) $sa.name }}
{{- end -}}
{{- end -}}

{{/* Whether static S3 keys are wired, and from which Secret. */}}
{{- define "lightbox.awsSecret" -}}
{{- if .Values.storage.existingSecret -}}
{{ .Values.storage.existingSecret }}
{{- else if .Values.storage.accessKeyId -}}
{{ include "lightbox.secretName" . }}
{{- end -}}
{{- end -}}

{{/* Restricted pod and container security (PSS "restricted"), with the
component's overrides merged on top. */}}
{{- define "lightbox.podSecurity" -}}
{{- $base := dict "runAsNonRoot" true "runAsUser" 65532 "runAsGroup" 65532 "fsGroup" 65532 "seccompProfile" (dict "type" "RuntimeDefault") -}}
{{- toYaml (mustMergeOverwrite $base (deepCopy .podSecurityContext)) -}}
{{- end -}}

{{- define "lightbox.containerSecurity" -}}
{{- $base := dict "allowPrivilegeEscalation" false "readOnlyRootFilesystem" true "runAsNonRoot" true "capabilities" (dict "drop" (list "ALL")) -}}
{{- toYaml (mustMergeOverwrite $base (deepCopy .securityContext)) -}}
{{- end -}}

{{/* Pod metadata: selector labels, podLabels, checksums, podAnnotations.
{root, component}. */}}
{{- define "lightbox.podMeta" -}}
{{- $v := index .root.Values .component -}}
labels:
  {{- include "lightbox.selector" . | nindent 2 }}
  {{- with $v.podLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
annotations:
  checksum/config: {{ include (print .root.Template.BasePath "/configmap.yaml") .root | sha256sum }}
  checksum/secret: {{ include (print .root.Template.BasePath "/secret.yaml") .root | sha256sum }}
  {{- with $v.podAnnotations }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* The scheduling and security part of a pod spec. {root, component}. */}}
{{- define "lightbox.podSpec" -}}
{{- $v := index .root.Values .component -}}
serviceAccountName: {{ include "lightbox.serviceAccountName" . }}
automountServiceAccountToken: {{ eq .component "controller" | ternary true $v.serviceAccount.automountToken }}
terminationGracePeriodSeconds: {{ $v.terminationGracePeriodSeconds }}
securityContext:
  {{- include "lightbox.podSecurity" $v | nindent 2 }}
{{- include "lightbox.pullSecrets" .root }}
{{- with $v.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with $v.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if $v.affinity }}
affinity:
  {{- toYaml $v.affinity | nindent 2 }}
{{- else if has .component (list "api" "worker") }}
{{- /* Soft: replicas spread over nodes when they can, and still schedule
on one node when it is all there is. */}}
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              {{- include "lightbox.selector" . | nindent 14 }}
{{- end }}
{{- with $v.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- range . }}
  {{- $c := deepCopy . }}
  {{- if not (hasKey $c "labelSelector") }}
  {{- $_ := set $c "labelSelector" (dict "matchLabels" (include "lightbox.selector" $ | fromYaml)) }}
  {{- end }}
  - {{- toYaml $c | nindent 4 }}
  {{- end }}
{{- end }}
volumes:
  - name: tmp
    emptyDir: {}
  {{- with $v.extraVolumes }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* What every container adds after its own env: shared config, extras,
mounts, security, resources. {root, component}. */}}
{{- define "lightbox.containerCommon" -}}
{{- $v := index .root.Values .component -}}
envFrom:
  - configMapRef:
      name: {{ include "lightbox.fullname" .root }}-config
  {{- with $v.envFrom }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
resources:
  {{- toYaml $v.resources | nindent 2 }}
securityContext:
  {{- include "lightbox.containerSecurity" $v | nindent 2 }}
volumeMounts:
  - { name: tmp, mountPath: /tmp }
  {{- with $v.extraVolumeMounts }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* The database URL and the optional static S3 keys. */}}
{{- define "lightbox.secretEnv" -}}
- name: DATABASE_URL
  valueFrom: { secretKeyRef: { name: {{ include "lightbox.secretName" . }}, key: DATABASE_URL } }
{{- with include "lightbox.awsSecret" . }}
- name: AWS_ACCESS_KEY_ID
  valueFrom: { secretKeyRef: { name: {{ . }}, key: AWS_ACCESS_KEY_ID } }
- name: AWS_SECRET_ACCESS_KEY
  valueFrom: { secretKeyRef: { name: {{ . }}, key: AWS_SECRET_ACCESS_KEY } }
{{- end }}
{{- end -}}

{{- define "lightbox.ports" -}}
- name: http
  containerPort: {{ .port }}
- name: metrics
  containerPort: {{ .metrics }}
{{- end -}}

{{- define "lightbox.probes" -}}
startupProbe:
  httpGet: { path: /healthz, port: metrics }
  periodSeconds: 2
  failureThreshold: 30
livenessProbe:
  httpGet: { path: /healthz, port: metrics }
  periodSeconds: 10
readinessProbe:
  httpGet: { path: /readyz, port: metrics }
  periodSeconds: 5
  failureThreshold: 2
{{- end -}}

{{/* The fewest pods a component runs: a PDB only makes sense from two. */}}
{{- define "lightbox.minReplicas" -}}
{{- $v := index .root.Values .component -}}
{{- if and (eq .component "worker") $v.keda.enabled -}}
{{ $v.keda.minReplicas }}
{{- else if and (hasKey $v "autoscaling") $v.autoscaling.enabled -}}
{{ $v.autoscaling.minReplicas }}
{{- else -}}
{{ $v.replicas }}
{{- end -}}
{{- end -}}

{{/* The namespaces the controller reconciles, comma-separated; empty with
watchAllNamespaces. */}}
{{- define "lightbox.watchNamespaces" -}}
{{- if not .Values.controller.watchAllNamespaces -}}
{{- .Values.controller.watchNamespaces | default (list .Release.Namespace) | uniq | join "," -}}
{{- end -}}
{{- end -}}

{{/* RBAC for the custom resources: a ClusterRole(+Binding) when every
namespace is watched, else a Role(+Binding) in each watched namespace.
{root, name, subject, rules}. */}}
{{- define "lightbox.scopedRbac" -}}
{{- $root := .root }}
{{- $rules := .rules }}
{{- $subject := dict "kind" "ServiceAccount" "name" .subject "namespace" $root.Release.Namespace }}
{{- $labels := include "lightbox.labels" $root }}
{{- $extra := .annotations | default dict }}
{{- if $root.Values.controller.watchAllNamespaces }}
{{- $name := printf "%s-%s" (include "lightbox.clusterName" $root) .name }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $name }}
  labels:
    {{- $labels | nindent 4 }}
  {{- with $extra }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
rules:
  {{- $rules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $name }}
  labels:
    {{- $labels | nindent 4 }}
  {{- with $extra }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: {{ $name }} }
subjects:
  - {{- toYaml $subject | nindent 4 }}
{{- else }}
{{- range $ns := splitList "," (include "lightbox.watchNamespaces" $root) }}
{{- /* Outside its own namespace a Role carries the release's namespace,
so two releases watching one namespace do not collide. */}}
{{- $name := eq $ns $root.Release.Namespace | ternary (printf "%s-%s" (include "lightbox.fullname" $root) $.name) (printf "%s-%s" (include "lightbox.clusterName" $root) $.name) }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $name }}
  namespace: {{ $ns }}
  labels:
    {{- $labels | nindent 4 }}
  {{- with $extra }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
rules:
  {{- $rules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $name }}
  namespace: {{ $ns }}
  labels:
    {{- $labels | nindent 4 }}
  {{- with $extra }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: {{ $name }} }
subjects:
  - {{- toYaml $subject | nindent 4 }}
{{- end }}
{{- end }}
{{- end -}}

{{/* global.imagePullSecrets (names or objects) then imagePullSecrets. */}}
{{- define "lightbox.pullSecrets" -}}
{{- $secrets := list }}
{{- range .Values.global.imagePullSecrets }}
{{- $secrets = append $secrets (kindIs "string" . | ternary (dict "name" .) .) }}
{{- end }}
{{- $secrets = concat $secrets .Values.imagePullSecrets }}
{{- with $secrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Where a one-off pod (the uninstall hook, the helm test) may run: the
controller's scheduling values. */}}
{{- define "lightbox.scheduling" -}}
{{- with .priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
