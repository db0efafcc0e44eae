#!/usr/bin/python3
"""The architecture's counts, measured from the sources (docs/architecture.md, "Counts").

    /usr/bin/python3 tools/arch_counts.py [SOURCE_DIR] [--list]

Prints, for core/, app/ and ui/ (tests, benches and fuzzers are not counted):
  - kind branches: places (functions) outside core/task/ and the task registry that branch
    on the kind of task: a comparison with or a case of a `TargetKind::` value, a test of
    `classView`, or a comparison with a task's name ("classification", "multilabel",
    "regression", "segmentation", "detection") on a line that speaks of a task; and the
    if-arms / cases among them;
  - withBuiltins() calls in core/ (the registries' own definitions, and core/registries/, the
    one place that gathers the built-ins for a program's main, left out);
  - functions over 80 lines (from universal-ctags' start and end lines; lambdas are counted
    inside the function that holds them); a function that is a table of data (a registry's
    entries, a schema) says so with a comment "arch: table of data" in the comment block just
    above it, and is listed apart, not counted;
  - the classes with the most members (data members and member functions declared in the
    class body, from ctags' scopes).
--list names every place behind the counts.
Duplicate pairs come from the `duplicates` tool and are recorded by hand.
"""
import collections
import json
import os
import re
import subprocess
import sys

ROOTS = ("core", "app", "ui")
TASK_NAMES = ("classification", "multilabel", "regression", "segmentation", "detection")
KIND_TEST = re.compile(
    r"(?:[=!]=\s*(?:data::|task::)?TargetKind::\w+)|(?:(?:data::|task::)?TargetKind::\w+\s*[=!]=)"
    r"|(?:\bcase\s+(?:data::|task::)?TargetKind::)"
    r"|(?:\bif\s*\(\s*!?\s*[\w.>-]*\bclassView\b)|(?:[\w.>-]*\bclassView\b\s*\?)"
    r"|(?:[=!]=\s*\"(?:%s)\")|(?:\"(?:%s)\"\s*[=!]=)" % ("|".join(TASK_NAMES), "|".join(TASK_NAMES)))
BUILTINS = re.compile(r"\bwithBuiltins\s*\(\s*\)")
EXEMPT_KIND = ("core/task/",)


def sources(root):
    for top in ROOTS:
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith((".cpp", ".h")):
                    path = os.path.join(folder, name)
                    yield os.path.relpath(path, root)


def strip_comments(line):
    return line.split("//", 1)[0]


def ctags(root, files):
    out = subprocess.run(["ctags", "--output-format=json", "--fields=+neKZ", "--c++-kinds=+p",
                          "--language-force=C++", "-f", "-"] + files, cwd=root, check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("_type") == "tag":
            yield tag


def enclosing(functions, line):
    best = None
    for f in functions:
        if f["line"] <= line <= f.get("end", f["line"]):
            if best is None or f["line"] > best["line"]:
                best = f
    return best


def marked_table(lines, first):
    """True when the comment block just above line `first` (1-based) says "arch: table of data"."""
    n = first - 2
    while n >= 0 and lines[n].strip().startswith("//"):
        if "arch: table of data" in lines[n]:
            return True
        n -= 1
    return False


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    listing = "--list" in sys.argv
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = list(sources(root))
    tags = list(ctags(root, files))
    functions_in = collections.defaultdict(list)
    for t in tags:
        if t["kind"] == "function" and not t["name"].startswith("__anon"):
            functions_in[t["path"]].append(t)

    # Kind branches, by the named function holding them.
    places, arms, builtins = collections.OrderedDict(), 0, []
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        for n, raw in enumerate(lines, 1):
            line = strip_comments(raw)
            if BUILTINS.search(line) and path.startswith("core/") and \
                    not path.startswith("core/registries/") and \
                    not re.search(r"\w+::withBuiltins\s*\(\s*\)\s*\{", line) and \
                    not re.search(r"static\s+\w+\s+withBuiltins", line):
                builtins.append("%s:%d" % (path, n))
            if path.startswith(EXEMPT_KIND) or path.endswith(("task_registry.cpp", "task_registry.h")):
                continue
            hits = len([m for m in KIND_TEST.findall(line)
                        if '"' not in m or re.search(r"task", line, re.I)])
            if not hits:
                continue
            arms += hits
            f = enclosing(functions_in[path], n)
            key = "%s:%s" % (path, f["name"] if f else n)
            places.setdefault(key, []).append(n)

    long_functions, tables = [], []
    for path, fs in functions_in.items():
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        for f in fs:
            length = f.get("end", f["line"]) - f["line"] + 1
            if length > 80:
                entry = (length, "%s:%d %s" % (path, f["line"], f["name"]))
                (tables if marked_table(lines, f["line"]) else long_functions).append(entry)
    long_functions.sort(reverse=True)
    tables.sort(reverse=True)

    members = collections.Counter()
    for t in tags:
        if t.get("scopeKind") in ("class", "struct") and t["kind"] in ("member", "prototype",
                                                                       "function"):
            if t["name"].startswith("__anon") or t["kind"] == "function" and \
                    not t["path"].endswith(".h"):
                continue
            members[t["scope"].split("::")[-1] + " (" + t["path"] + ")"] += 1

    print("kind branches: %d places, %d arms" % (len(places), arms))
    print("withBuiltins() calls in core: %d" % len(builtins))
    print("functions over 80 lines: %d (and %d tables of data)" % (len(long_functions), len(tables)))
    print("largest classes: " + ", ".join("%s %d" % (name.split(" ")[0], n)
                                          for name, n in members.most_common(4)))
    if listing:
        print("\n# kind branches")
        for key, ns in places.items():
            print("  %s (lines %s)" % (key, ", ".join(map(str, ns))))
        print("\n# withBuiltins() in core")
        for b in builtins:
            print("  " + b)
        print("\n# functions over 80 lines")
        for length, name in long_functions:
            print("  %4d %s" % (length, name))
        print("\n# tables of data over 80 lines (not counted)")
        for length, name in tables:
            print("  %4d %s" % (length, name))
        print("\n# classes by members")
        for name, n in members.most_common(12):
            print("  %4d %s" % (n, name))


if __name__ == "__main__":
    main()
