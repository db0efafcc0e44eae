#!/usr/bin/python3
"""The documents cannot go stale: each claim the program can check is checked here.

  - docs/cli.md is what `netsmith-cli help --markdown` prints, and in that reference every
    switch and option a command's parser accepts is in its usage text, and every --name its
    usage text shows is one the parser accepts;
  - the bash completion offers each command's flags and options, and every command;
  - the guide's generated blocks (data formats, augmentations, layer types) are what
    `netsmith-cli formats`, `transforms` and `ops` print;
  - every backticked path in docs/architecture.md exists in the checkout, and every backticked
    class name (and Class::member) is a word of the sources;
  - every relative link in README.md and docs/ names a file that exists;
  - the README stays a front door: at most 150 lines, its first block the two commands.

tools/update_docs.sh rewrites the generated parts.

    /usr/bin/python3 tests/docs/docs_test.py NETSMITH_CLI SOURCE_DIR
"""
import glob
import os
import re
import subprocess
import sys

GENERATED = {  # guide page -> the command whose output its block holds
    "docs/guide/data-formats.md": "formats",
    "docs/guide/augmentation.md": "transforms",
    "docs/guide/projects-and-model-editor.md": "ops",
}
TOP = ("core/", "app/", "ui/", "tests/", "docs/", "tools/", "bench/", "installer/", "fuzz/",
       "resources/", "cmake/", ".ci/", "../")

failures = []


def fail(text):
    failures.append(text)


def cli(path, *args):
    return subprocess.run([path] + list(args), check=True, stdout=subprocess.PIPE,
                          text=True).stdout


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def block(command, output):
    return "<!-- generated: %s -->\n```text\n%s\n```\n<!-- end generated -->" % (
        command, output.rstrip("\n"))


def check_reference(exe, root):
    reference = cli(exe, "help", "--markdown")
    if read(root, "docs/cli.md") != reference:
        fail("docs/cli.md differs from `netsmith-cli help --markdown` (run tools/update_docs.sh)")
    completion = read(root, "installer/netsmith-cli.bash")
    listed = set(re.search(r'local commands="([^"]*)"', completion).group(1).split())
    offered = {}
    for names, opts in re.findall(r'^\s*([a-z| -]+)\) opts="([^"]*)" ;;$', completion, re.M):
        for name in names.split("|"):
            offered[name.strip()] = set(opts.split())
    # Each command's section: its usage block, then what its parser accepts.
    commands = set()
    for section in reference.split("\n## ")[1:]:
        name = section.split("\n", 1)[0]
        if name == "Exit status":
            continue
        usage = re.search(r"```text\n(.*?)```", section, re.S)
        if not usage:
            fail("docs/cli.md: %s has no usage block" % name)
            continue
        accepted = set()
        for line in re.findall(r"^(?:Switches|Options with a value): (.*)\.$", section, re.M):
            accepted |= set(re.findall(r"`(--[a-z0-9-]+)`", line))
        shown = set(re.findall(r"(?<![\w-])(--[a-z0-9][a-z0-9-]*)", usage.group(1)))
        for flag in sorted(accepted - shown):
            fail("netsmith-cli %s accepts %s, but its usage text does not describe it" % (name, flag))
        for flag in sorted(shown - accepted):
            fail("netsmith-cli %s: its usage text names %s, which it does not accept" % (name, flag))
        commands.add(name)
        if offered.get(name, set()) != accepted:
            fail("installer/netsmith-cli.bash completes %s with %s; the command takes %s" %
                 (name, " ".join(sorted(offered.get(name, set()))) or "nothing",
                  " ".join(sorted(accepted)) or "nothing"))
    if listed != commands:
        fail("installer/netsmith-cli.bash lists the commands %s; the program has %s" %
             (" ".join(sorted(listed)), " ".join(sorted(commands))))


def check_generated(exe, root):
    for page, command in GENERATED.items():
        if not os.path.exists(os.path.join(root, page)):
            fail("%s is missing" % page)
            continue
        text = read(root, page)
        want = block(command, cli(exe, command))
        if want not in text:
            fail("%s: the block between <!-- generated: %s --> and <!-- end generated --> is not "
                 "what `netsmith-cli %s` prints (run tools/update_docs.sh)" % (page, command, command))


def source_words(root):
    words = set()
    for pattern in ("core/**/*.[ch]*", "app/**/*.[ch]*", "ui/**/*.[ch]*", "fuzz/**/*.[ch]*",
                    "bench/**/*.[ch]*", "tests/**/*.[ch]*"):
        for path in glob.glob(os.path.join(root, pattern), recursive=True):
            with open(path, encoding="utf-8", errors="replace") as f:
                words |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", f.read()))
    return words


def check_architecture(root):
    text = read(root, "docs/architecture.md")
    words = source_words(root)
    for token in sorted(set(re.findall(r"`([^`\n]+)`", text))):
        if token.startswith(TOP) and not any(c in token for c in "*<>$ "):
            path = token.split(":")[0].rstrip("/")
            if not os.path.exists(os.path.normpath(os.path.join(root, path))):
                fail("docs/architecture.md names `%s`, which is not in the checkout" % token)
            continue
        m = re.fullmatch(r"([A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*)((?:::[A-Za-z_][A-Za-z0-9_]*)*)(\(.*\))?",
                         token)
        if not m:
            continue
        for name in [m.group(1)] + [p for p in m.group(2).split("::") if p]:
            if name not in words:
                fail("docs/architecture.md names `%s`; `%s` is nowhere in the sources" % (token, name))


def check_links(root):
    pages = ["README.md"] + sorted(
        os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs/**/*.md"), recursive=True))
    for page in pages:
        text = read(root, page)
        text = re.sub(r"```.*?```", "", text, flags=re.S)  # code is not a link
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = os.path.normpath(os.path.join(root, os.path.dirname(page), target.split("#")[0]))
            if not os.path.exists(path):
                fail("%s links %s, which does not exist" % (page, target))


def check_readme(root):
    lines = read(root, "README.md").splitlines()
    if len(lines) > 150:
        fail("README.md has %d lines; the front door stays at most 150 (detail goes to docs/guide/)"
             % len(lines))
    commands = [l for l in lines[:8] if l.startswith("bash installer/deps-debian.sh && ")]
    if len(commands) != 2:
        fail("README.md: the first lines give %d set-up commands, not the two" % len(commands))


def main():
    exe, root = sys.argv[1], sys.argv[2]
    check_reference(exe, root)
    check_generated(exe, root)
    check_architecture(root)
    check_links(root)
    check_readme(root)
    for f in failures:
        print("docs_test: " + f)
    if failures:
        sys.exit(1)
    print("docs_test: the reference, %d generated blocks, docs/architecture.md and every link "
          "agree with the checkout" % len(GENERATED))


if __name__ == "__main__":
    main()
