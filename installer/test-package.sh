#!/usr/bin/env bash
# Builds the Debian package, unpacks it into a scratch root with dpkg -x, and runs what it
# installed: netsmith-cli --version, validate on the installed example, desktop-file-validate.
#   installer/test-package.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cmake --build "$build" --target package > "$scratch.log" 2>&1 || { cat "$scratch.log"; exit 1; }
rm -f "$scratch.log"
deb=$(ls -t "$build"/netsmith_*_amd64.deb | head -n 1)
echo "package: $deb ($(du -h "$deb" | cut -f1))"
dpkg-deb --field "$deb" Package Version Depends
dpkg -x "$deb" "$scratch"
for f in usr/bin/netsmith usr/bin/netsmith-cli usr/share/netsmith/templates/lenet5.netsmith.json \
         usr/share/applications/netsmith.desktop usr/share/mime/packages/netsmith.xml \
         usr/share/icons/hicolor/scalable/apps/netsmith.svg usr/share/icons/hicolor/48x48/apps/netsmith.png \
         usr/share/man/man1/netsmith-cli.1.gz usr/share/bash-completion/completions/netsmith-cli \
         usr/share/doc/netsmith/guide/README.md usr/share/doc/netsmith/guide/training.md \
         usr/share/doc/netsmith/cli.md usr/share/doc/netsmith/screenshots/training.png; do
  [ -e "$scratch/$f" ] || { echo "missing from the package: /$f"; exit 1; }
done
version=$("$scratch/usr/bin/netsmith-cli" --version)
echo "$version"
expected=$(dpkg-deb --field "$deb" Version)
[ "$version" = "netsmith-cli $expected" ] || { echo "version mismatch: $version vs $expected"; exit 1; }
QT_QPA_PLATFORM=offscreen "$scratch/usr/bin/netsmith" --version | grep -qx "Netsmith $expected"
# The installed example, with paths into the scratch root.
example="$scratch/usr/share/netsmith/examples/fashion_mnist.netsmith.json"
sed "s#/usr/share/netsmith#$scratch/usr/share/netsmith#g" "$example" > "$scratch/example.netsmith.json"
"$scratch/usr/bin/netsmith-cli" validate "$scratch/example.netsmith.json"
desktop-file-validate "$scratch/usr/share/applications/netsmith.desktop"
zcat "$scratch/usr/share/man/man1/netsmith-cli.1.gz" | grep -q '^.SH COMMANDS AND OPTIONS'
bash -n "$scratch/usr/share/bash-completion/completions/netsmith-cli"
echo "package ok"
