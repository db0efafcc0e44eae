#!/bin/bash
# Rewrites the documents' generated parts from the program: docs/cli.md (the CLI reference)
# and the guide's blocks between <!-- generated: COMMAND --> and <!-- end generated -->
# (the output of `netsmith-cli formats`, `transforms` and `ops`). tests/docs/docs_test.py fails
# when they differ.
#   tools/update_docs.sh [NETSMITH_CLI]   (default build/release/app/netsmith-cli)
set -euo pipefail
cd "$(dirname "$0")/.."
cli=${1:-build/release/app/netsmith-cli}
"$cli" help --markdown > docs/cli.md.new && mv docs/cli.md.new docs/cli.md
for pair in data-formats:formats augmentation:transforms projects-and-model-editor:ops; do
  page=docs/guide/${pair%%:*}.md
  command=${pair##*:}
  [ -f "$page" ] || { echo "update_docs: $page is missing" >&2; exit 1; }
  /usr/bin/python3 - "$page" "$command" "$("$cli" "$command")" <<'PY'
import re, sys
page, command, output = sys.argv[1], sys.argv[2], sys.argv[3].rstrip("\n") + "\n"
text = open(page, encoding="utf-8").read()
start, end = "<!-- generated: %s -->" % command, "<!-- end generated -->"
pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
if not pattern.search(text):
    sys.exit("update_docs: %s has no %s block" % (page, start))
text = pattern.sub(lambda m: start + "\n```text\n" + output + "```\n" + end, text, count=1)
open(page + ".new", "w", encoding="utf-8").write(text)
PY
  mv "$page.new" "$page"
done
echo "update_docs: docs/cli.md and the guide's generated blocks written"
