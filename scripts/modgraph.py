#!/usr/bin/env python3
"""Import loops and file sizes, checked from the source. Layering between
crates (lightbox-domain pure, lightbox-render over it alone) is Cargo's,
checked by scripts/test.sh with `cargo tree`.

For each crate (its src/ folder) every file is a module; an edge a -> b
means a names b through `use crate::...`, `use super::...`, `crate::x::y`
or `super::x` (declaring `mod b;` is not a use). Fails when:
  * files form a loop (a uses b uses ... a);
  * top-level modules of a crate form a loop (sharing -> images -> sharing);
  * a file outside tests is over 400 lines.
Usage: scripts/modgraph.py [crate src folders...]
"""

import os
import re
import sys

CRATES = ["domain/src", "render/src", "core/src", "api/src", "worker/src", "controller/src"]
MAX_LINES = 400
PATH = re.compile(r"\b(crate|super)((?:::\w+)+)")
USE_GROUP = re.compile(r"\buse\s+(crate|super)((?:::\w+)*)::\{([^;]*)\};", re.S)


def modules(src):
    """module path (tuple) -> file, for every .rs file under src."""
    out = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(root, f), src)
            parts = rel[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            out[tuple(parts)] = os.path.join(root, f)
    return out


def strip_tests(text):
    """Drops `#[cfg(test)] mod tests { ... }` (tests may use anything)."""
    m = re.search(r"#\[cfg\(test\)\]\s*(pub(\(crate\))? )?mod \w+\s*\{", text)
    return text[: m.start()] if m else text


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def resolve(mods, here, kind, segs):
    """The deepest known module a path names, or None."""
    if kind == "crate":
        base = []
    else:
        base = list(here[:-1])
        while segs and segs[0] == "super":
            base = base[:-1]
            segs = segs[1:]
    path = base + segs
    for n in range(len(path), 0, -1):
        if tuple(path[:n]) in mods:
            return tuple(path[:n])
    return None


def edges_of(mods, here, text):
    text = strip_comments(strip_tests(text))
    found = set()
    for m in USE_GROUP.finditer(text):
        prefix = [s for s in m.group(2).split("::") if s]
        for item in m.group(3).split(","):
            item = item.strip().split(" as ")[0].strip()
            segs = prefix + [s for s in item.replace("{", "").split("::") if s and s != "self"]
            t = resolve(mods, here, m.group(1), segs)
            if t:
                found.add(t)
    for m in PATH.finditer(text):
        segs = [s for s in m.group(2).split("::") if s]
        t = resolve(mods, here, m.group(1), segs)
        if t:
            found.add(t)
    found.discard(here)
    # A module naming its own child through `self`-less paths is the child.
    return found


def cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def name(crate, m):
    return crate + "::" + ("::".join(m) if m else "(root)")


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(root)
    problems = []
    for src in sys.argv[1:] or CRATES:
        crate = src.split("/")[0]
        mods = modules(src)
        files = {}
        for m, f in mods.items():
            with open(f, encoding="utf-8") as fh:
                text = fh.read()
            files[m] = edges_of(mods, m, text)
            lines = text.count("\n")
            is_test = os.path.basename(f) == "tests.rs" or "/tests/" in f
            if lines > MAX_LINES and not is_test:
                problems.append(f"{f}: {lines} lines (limit {MAX_LINES})")
        # A parent's own `use child::X` and a child's `use super::Y` are
        # both real uses: a loop between them is a loop.
        for comp in cycles(files):
            problems.append("file loop: " + " <-> ".join(name(crate, m) for m in comp))
        top = {}
        for m, targets in files.items():
            if not m:
                continue
            for t in targets:
                if t and t[0] != m[0]:
                    top.setdefault(m[0], set()).add(t[0])
        for comp in cycles(top):
            problems.append("module loop: " + " <-> ".join(f"{crate}::{c}" for c in comp))
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print("module graph: no loops, files within", MAX_LINES, "lines")


if __name__ == "__main__":
    main()
