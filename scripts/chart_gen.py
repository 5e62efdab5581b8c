#!/usr/bin/env python3
"""The chart's generated files: values.schema.json (from the definitions
below) and the values table of charts/lightbox/README.md (from the `# --`
comments of values.yaml, helm-docs style).

    scripts/chart_gen.py          write both
    scripts/chart_gen.py --check  fail if either differs (scripts/test.sh)

Every object the chart owns refuses unknown keys (additionalProperties:
false), so a typo such as `api.replica` fails `helm lint` at its own field.
Kubernetes' own types (affinity, tolerations, security contexts, volumes)
are passed through and left to the API server's validation.
"""
import json
import re
import sys
from pathlib import Path

import yaml

CHART = Path(__file__).resolve().parent.parent / "charts" / "lightbox"

STR = {"type": "string"}
BOOL = {"type": "boolean"}
ANY_OBJECT = {"type": "object"}
OBJECTS = {"type": "array", "items": {"type": "object"}}
STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
PORT = {"type": "integer", "minimum": 1, "maximum": 65535}
DURATION = {"type": "string", "pattern": "^([0-9]+(ms|s|m|h))+$"}
# Kubernetes' resource.Quantity: 250m, 1Gi, 0.5, 1e3.
QUANTITY = {
    "type": ["string", "number"],
    "pattern": "^[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][+-]?[0-9]+|[numkMGTPE]|[KMGTPE]i)?$",
}
INT_OR_PERCENT = {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "pattern": "^[0-9]+%$"}]}


def integer(minimum=None, maximum=None):
    s = {"type": "integer"}
    if minimum is not None:
        s["minimum"] = minimum
    if maximum is not None:
        s["maximum"] = maximum
    return s


def obj(required=(), **props):
    s = {"type": "object", "additionalProperties": False, "properties": props}
    if required:
        s["required"] = list(required)
    return s


def resources():
    amounts = {"type": "object", "additionalProperties": QUANTITY}
    return obj(requests=amounts, limits=amounts, claims=OBJECTS)


def service_account(automount):
    props = {"create": BOOL, "name": STR, "annotations": STRING_MAP}
    if automount:
        props["automountToken"] = BOOL
    return obj(**props)


# JSON Schema cannot compare two fields, and `helm lint` does not stop on a
# template's `fail`: so "minReplicas <= maxReplicas" is spelled out as "if
# minReplicas >= k then maxReplicas >= k" for every k the schema allows,
# once, in definitions (one line each in the output).
MAX_REPLICAS = 100
MIN_NOT_ABOVE_MAX = {
    "allOf": [
        {
            "if": {"properties": {"minReplicas": {"minimum": k}}, "required": ["minReplicas"]},
            "then": {"properties": {"maxReplicas": {"minimum": k}}},
        }
        for k in range(2, MAX_REPLICAS + 1)
    ]
}


def replica_range(minimum, **props):
    s = obj(minReplicas=integer(minimum, MAX_REPLICAS), maxReplicas=integer(1, MAX_REPLICAS), **props)
    s["allOf"] = [{"$ref": "#/definitions/minNotAboveMax"}]
    return s


def autoscaling():
    return replica_range(
        1,
        enabled=BOOL,
        targetCPUUtilizationPercentage=integer(1, 100),
        behavior=ANY_OBJECT,
    )


def component(automount=True, **own):
    """The knobs every component has, plus its own."""
    return obj(
        replicas=integer(1),
        port=PORT,
        resources=resources(),
        terminationGracePeriodSeconds=integer(0),
        pdb=obj(
            enabled=BOOL,
            minAvailable={"anyOf": INT_OR_PERCENT["anyOf"] + [{"const": ""}]},
            maxUnavailable=INT_OR_PERCENT,
        ),
        serviceAccount=service_account(automount),
        podAnnotations=STRING_MAP,
        podLabels=STRING_MAP,
        nodeSelector=STRING_MAP,
        tolerations=OBJECTS,
        affinity=ANY_OBJECT,
        topologySpreadConstraints=OBJECTS,
        priorityClassName=STR,
        extraEnv={"type": "array", "items": {"type": "object", "required": ["name"]}},
        envFrom=OBJECTS,
        extraVolumes={"type": "array", "items": {"type": "object", "required": ["name"]}},
        extraVolumeMounts={
            "type": "array",
            "items": {"type": "object", "required": ["name", "mountPath"]},
        },
        podSecurityContext=ANY_OBJECT,
        securityContext=ANY_OBJECT,
        **own,
    )


def storage():
    s = obj(
        ["url"],
        url={"type": "string", "pattern": "^s3://[^/]+"},
        region=STR,
        endpoint={"type": "string", "pattern": "^(https?://.+)?$"},
        accessKeyId=STR,
        secretAccessKey=STR,
        existingSecret=STR,
    )
    # Both static keys or neither (neither: the pod's identity).
    needs = lambda a, b: {
        "if": {"properties": {a: {"minLength": 1}}, "required": [a]},
        "then": {"properties": {b: {"minLength": 1}}},
    }
    s["allOf"] = [needs("accessKeyId", "secretAccessKey"), needs("secretAccessKey", "accessKeyId")]
    return s


def monitor():
    return obj(enabled=BOOL, interval=DURATION, labels=STRING_MAP)


def schema():
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"minNotAboveMax": MIN_NOT_ABOVE_MAX},
        **obj(
            required=["image", "database", "nats", "storage", "api", "worker", "controller"],
            # A parent chart's globals: only these two are read, others pass.
            **{
                "global": {
                    "type": "object",
                    "properties": {
                        "imagePullSecrets": {
                            "type": "array",
                            "items": {"anyOf": [STR, obj(["name"], name=STR)]},
                        },
                        "imageRegistry": STR,
                    },
                }
            },
            image=obj(
                ["repository"],
                repository={"type": "string", "minLength": 1},
                tag=STR,
                digest={"type": "string", "pattern": "^(sha256:[a-f0-9]{64})?$"},
                pullPolicy={"enum": ["Always", "IfNotPresent", "Never"]},
            ),
            imagePullSecrets={
                "type": "array",
                "items": obj(["name"], name={"type": "string", "minLength": 1}),
            },
            baseUrl={"type": "string", "pattern": "^https?://"},
            imageHost={"type": "string", "pattern": "^(https?://.+)?$"},
            serverPublishing=BOOL,
            uploadMaxBytes=integer(1),
            logFormat={"enum": ["text", "json"]},
            database=obj(url={"type": "string", "pattern": "^(postgres|postgresql)://|^$"}),
            nats=obj(
                ["url", "prefix"],
                url={"type": "string", "pattern": "^(nats|tls)://"},
                prefix={"type": "string", "pattern": "^[A-Za-z0-9_-]+$"},
                ackWaitSeconds=integer(1),
                maxDeliver=integer(1, 100),
            ),
            storage=storage(),
            existingSecret=STR,
            signingKey={"type": "string", "anyOf": [{"maxLength": 0}, {"minLength": 32}]},
            generateSigningKey=BOOL,
            admin=obj(existingSecret=STR, emailKey={"type": "string", "minLength": 1},
                      passwordKey={"type": "string", "minLength": 1}),
            crds=obj(enabled=BOOL, keep=BOOL),
            migrations=obj(
                enabled=BOOL,
                backoffLimit=integer(0, 20),
                activeDeadlineSeconds=integer(60),
                resources=resources(),
            ),
            api=component(
                preStopSeconds=integer(0, 120),
                service=obj(
                    type={"enum": ["ClusterIP", "NodePort", "LoadBalancer"]},
                    port=PORT,
                    annotations=STRING_MAP,
                ),
                autoscaling=autoscaling(),
            ),
            worker=component(
                concurrency=integer(1, 64),
                autoscaling=autoscaling(),
                keda=replica_range(
                    0,
                    enabled=BOOL,
                    targetQueryValue={"type": "string", "pattern": "^[0-9]+$"},
                ),
            ),
            controller=component(
                automount=False,
                enabled=BOOL,
                watchNamespaces={
                    "type": "array",
                    "items": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"},
                },
                watchAllNamespaces=BOOL,
                uninstallHook=BOOL,
            ),
            metrics=obj(port=PORT, serviceMonitor=monitor(), podMonitor=monitor()),
            ingress=obj(
                enabled=BOOL,
                className=STR,
                annotations=STRING_MAP,
                nginxUploads=BOOL,
                paths={"type": "array", "items": {"type": "string", "pattern": "^/."}},
                hosts={
                    "type": "array",
                    "items": obj(
                        ["host"],
                        host={"type": "string", "minLength": 1},
                        paths={"type": "array", "items": {"type": "string", "pattern": "^/."}},
                    ),
                },
                routeImageHost=BOOL,
                tls={
                    "type": "array",
                    "items": obj(hosts={"type": "array", "items": STR}, secretName=STR),
                },
            ),
            networkPolicy=obj(enabled=BOOL, apiFrom=OBJECTS, metricsFrom=OBJECTS),
            tests=obj(enabled=BOOL),
            cropPresets={
                "type": "array",
                "items": obj(
                    ["name", "code", "width", "height"],
                    name={"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"},
                    code={"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,31}$"},
                    width=integer(0, 15000),
                    height=integer(0, 15000),
                    mode={"enum": ["fill", "fit", "pad"]},
                    format={"enum": ["webp", "jpg", "png"]},
                    quality=integer(1, 100),
                ),
            },
        ),
    }


KEY = re.compile(r"^(\s*)([A-Za-z0-9_]+):")


def descriptions(text):
    """{dotted.path: description} from `# --` comments (continued by `#` lines)."""
    out, stack, buf = {}, [], None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("# --"):
            buf = [stripped[4:].strip()]
            continue
        if stripped.startswith("#"):
            if buf is not None:
                buf.append(stripped[1:].strip())
            continue
        m = KEY.match(line)
        if not m:
            continue
        indent = len(m.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, m.group(2)))
        if buf is not None:
            out[".".join(k for _, k in stack)] = " ".join(buf)
            buf = None
    return out


def rows(values, docs, prefix=""):
    for key, value in values.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value and path not in docs:
            yield from rows(value, docs, path + ".")
        else:
            yield path, value, docs.get(path, "")


def table():
    text = (CHART / "values.yaml").read_text()
    docs = descriptions(text)
    lines = ["| Key | Default | Description |", "|---|---|---|"]
    for path, value, doc in rows(yaml.safe_load(text), docs):
        default = json.dumps(value, separators=(", ", ": ")).replace("|", "\\|")
        lines.append(f"| `{path}` | `{default}` | {doc.replace('|', chr(92) + '|')} |")
    return "\n".join(lines) + "\n"


def readme(current):
    start, end = "<!-- values:start -->\n", "<!-- values:end -->"
    head, rest = current.split(start, 1)
    _, tail = rest.split(end, 1)
    return head + start + table() + end + tail


def dump(value):
    """JSON with two-space indents, except the long allOf of definitions:
    one condition per line."""
    conditions = value["definitions"]["minNotAboveMax"]["allOf"]
    value["definitions"]["minNotAboveMax"]["allOf"] = ["@CONDITIONS@"]
    text = json.dumps(value, indent=2) + "\n"
    lines = ",\n".join("        " + json.dumps(c) for c in conditions)
    return text.replace('        "@CONDITIONS@"', lines)


def main():
    check = "--check" in sys.argv[1:]
    outputs = {
        CHART / "values.schema.json": dump(schema()),
        CHART / "README.md": readme((CHART / "README.md").read_text()),
    }
    stale = []
    for path, wanted in outputs.items():
        if path.read_text() != wanted:
            stale.append(path)
            if not check:
                path.write_text(wanted)
    if check and stale:
        names = ", ".join(str(p.relative_to(CHART.parent.parent)) for p in stale)
        sys.exit(f"{names} drifted from scripts/chart_gen.py and values.yaml: run scripts/chart_gen.py")


if __name__ == "__main__":
    main()
