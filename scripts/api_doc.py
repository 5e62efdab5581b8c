#!/usr/bin/env python3
"""Checks the OpenRPC document of the API and writes docs/api.md from it.

    lightbox-api openrpc > target/openrpc.json
    python3 scripts/api_doc.py target/openrpc.json --meta META.json --check docs/api.md
    python3 scripts/api_doc.py target/openrpc.json --write docs/api.md

The document is validated against OpenRPC's meta-schema (the npm package
@open-rpc/meta-schema, whose JSONSchema definition points at an online
meta-schema: draft-07's, bundled with the jsonschema package, stands in),
and a broken copy must fail, so the check itself is checked. With --check
the Markdown generated now must equal the file: docs/api.md cannot drift
from what the server accepts.
"""
import argparse
import copy
import json
import sys

ACCESS = {
    "public": "public, no token",
    "read": "a session or any personal access token",
    "write": "a session or a personal access token with `write`",
    "session": "a JWT session only (no personal access token)",
    "admin": "an admin's JWT session",
}


def validate(doc, meta_path):
    import jsonschema

    meta = json.load(open(meta_path))
    meta["definitions"]["JSONSchema"] = {"$ref": "http://json-schema.org/draft-07/schema#"}
    validator = jsonschema.Draft7Validator(meta)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:20]:
        print(f"openrpc: {'/'.join(map(str, e.path))}: {e.message}", file=sys.stderr)
    if errors:
        sys.exit("the OpenRPC document does not validate against the meta-schema")
    broken = copy.deepcopy(doc)
    del broken["methods"][0]["params"]
    broken["methods"][1]["errors"] = [{"code": "x"}]
    if validator.is_valid(broken):
        sys.exit("the meta-schema check accepted a broken document: it checks nothing")


def anchor(name):
    return name.lower().replace(".", "").replace(" ", "-")


def ty(s):
    """A schema as one short phrase."""
    if s is True or s == {}:
        return "any"
    if "$ref" in s:
        name = s["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{anchor(name)})"
    if "enum" in s:
        return " \\| ".join(json.dumps(v) for v in s["enum"])
    if "const" in s:
        return json.dumps(s["const"])
    for key in ("oneOf", "anyOf"):
        if key in s:
            return " or ".join(ty(x) for x in s[key])
    t = s.get("type", "any")
    if isinstance(t, list):
        return " or ".join(ty({**s, "type": x}) for x in t)
    if t == "array":
        return "array of " + ty(s.get("items", {}))
    if t == "string" and "format" in s:
        return f"string ({s['format']})"
    if t == "object" and isinstance(s.get("additionalProperties"), dict):
        return "map of " + ty(s["additionalProperties"])
    return t


def limits(s):
    out = []
    lo, hi = s.get("minLength"), s.get("maxLength")
    if lo is not None or hi is not None:
        out.append(f"{lo or 0}-{hi if hi is not None else '…'} characters")
    lo, hi = s.get("minimum"), s.get("maximum")
    if lo is not None or hi is not None:
        out.append(f"{lo if lo is not None else '…'} to {hi if hi is not None else '…'}")
    if s.get("maxItems") is not None:
        out.append(f"at most {s['maxItems']} items")
    if "default" in s:
        out.append(f"default {json.dumps(s['default'])}")
    return "; ".join(out)


def cell(text):
    return " ".join(str(text).split()).replace("|", "\\|")


def method_md(m):
    lines = [f"### `{m['name']}`", ""]
    if m.get("description"):
        lines += [m["description"], ""]
    pat = "yes" if m.get("x-pat") else "no"
    lines += [f"Who may call it: {ACCESS[m['x-access']]}. Takes a PAT: {pat}.", ""]
    if m["params"]:
        lines += ["| param | type | required | limits and notes |", "|---|---|---|---|"]
        for p in m["params"]:
            notes = "; ".join(x for x in [limits(p["schema"]), p.get("description", "")] if x)
            req = "yes" if p.get("required") else ""
            lines.append(f"| `{p['name']}` | {cell(ty(p['schema']))} | {req} | {cell(notes)} |")
    else:
        lines.append("No params: send `{}` or omit `params`.")
    lines += ["", f"Result: {ty(m['result']['schema'])}", ""]
    codes = ", ".join(f"{e['code']} `{e['message']}`" for e in m["errors"])
    lines += [f"Errors: {codes}", ""]
    return lines


def schema_md(name, s):
    lines = [f"### {name}", ""]
    if s.get("description"):
        lines += [" ".join(s["description"].split()), ""]
    props = s.get("properties")
    if props:
        required = set(s.get("required", []))
        lines += ["| field | type | notes |", "|---|---|---|"]
        for field, fs in props.items():
            notes = "; ".join(x for x in [limits(fs), fs.get("description", "")] if x)
            opt = "" if field in required else " (optional)"
            lines.append(f"| `{field}`{opt} | {cell(ty(fs))} | {cell(notes)} |")
    else:
        lines.append(f"{cell(ty(s))}")
    lines.append("")
    return lines


def markdown(doc):
    lines = [
        "# Lightbox API",
        "",
        "<!-- Generated by scripts/api_doc.py from `lightbox-api openrpc` (the same",
        "document `rpc.discover` answers). Do not edit: the test script checks it. -->",
        "",
        " ".join(doc["info"]["description"].split()),
        "",
        "A call, with `curl` (the token comes from `auth.login`):",
        "",
        "```sh",
        "curl -s http://127.0.0.1:8080/rpc -H \"Authorization: Bearer $TOKEN\" \\",
        "  -H 'content-type: application/json' \\",
        "  -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"album.sharing.setMode\",",
        "       \"params\":{\"album_id\":\"…\",\"mode\":\"unlisted\"}}'",
        "```",
        "",
        "## Methods",
        "",
    ]
    for m in sorted(doc["methods"], key=lambda m: m["name"]):
        lines += method_md(m)
    lines += ["## Types", ""]
    for name, s in sorted(doc["components"]["schemas"].items()):
        lines += schema_md(name, s)
    return "\n".join(lines).rstrip() + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("document")
    ap.add_argument("--meta", help="OpenRPC meta-schema JSON to validate against")
    ap.add_argument("--check", help="fail unless this file equals the generated Markdown")
    ap.add_argument("--write", help="write the generated Markdown here")
    args = ap.parse_args()
    doc = json.load(open(args.document))
    if args.meta:
        validate(doc, args.meta)
        print(f"openrpc: {len(doc['methods'])} methods, valid against the meta-schema")
    text = markdown(doc)
    if args.write:
        open(args.write, "w").write(text)
    if args.check:
        if open(args.check).read() != text:
            sys.exit(f"{args.check} is out of date: python3 scripts/api_doc.py DOC --write {args.check}")
        print(f"{args.check} matches the document")


if __name__ == "__main__":
    main()
