{{- define "lightbox.fullname" -}}
{{- printf "%s" .Release.Name | trunc 63 | trimSuffix "-" -}}
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
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "lightbox.secretName" -}}
{{ .Values.existingSecret | default (printf "%s-secrets" (include "lightbox.fullname" .)) }}
{{- end -}}

{{/* Restricted pod and container security (PSS "restricted"). */}}
{{- define "lightbox.podSecurity" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "lightbox.containerSecurity" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
{{- end -}}

{{/* The environment every binary shares: database, blob store, queue. */}}
{{- define "lightbox.env" -}}
- name: DATABASE_URL
  valueFrom: { secretKeyRef: { name: {{ include "lightbox.secretName" . }}, key: DATABASE_URL } }
- name: NATS_URL
  value: {{ .Values.nats.url | quote }}
- name: LIGHTBOX_NATS_PREFIX
  value: {{ .Values.nats.prefix | quote }}
- name: LIGHTBOX_NATS_ACK_WAIT_S
  value: {{ .Values.nats.ackWaitSeconds | quote }}
- name: LIGHTBOX_NATS_MAX_DELIVER
  value: {{ .Values.nats.maxDeliver | quote }}
- name: LIGHTBOX_STORAGE_URL
  value: {{ .Values.storage.url | quote }}
- name: AWS_REGION
  value: {{ .Values.storage.region | quote }}
{{- with .Values.storage.endpoint }}
- name: AWS_ENDPOINT_URL
  value: {{ . | quote }}
{{- end }}
- name: AWS_ACCESS_KEY_ID
  valueFrom: { secretKeyRef: { name: {{ include "lightbox.secretName" . }}, key: AWS_ACCESS_KEY_ID } }
- name: AWS_SECRET_ACCESS_KEY
  valueFrom: { secretKeyRef: { name: {{ include "lightbox.secretName" . }}, key: AWS_SECRET_ACCESS_KEY } }
- name: LIGHTBOX_LOG_FORMAT
  value: {{ .Values.logFormat | quote }}
- name: LIGHTBOX_DATA_DIR
  value: /tmp/lightbox
{{- end -}}

{{- define "lightbox.probes" -}}
startupProbe:
  httpGet: { path: /healthz, port: http }
  periodSeconds: 2
  failureThreshold: 30
livenessProbe:
  httpGet: { path: /healthz, port: http }
  periodSeconds: 10
readinessProbe:
  httpGet: { path: /readyz, port: http }
  periodSeconds: 5
  failureThreshold: 2
{{- end -}}
