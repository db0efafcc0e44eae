#!/usr/bin/env bash
# The studio's screenshots for the README at 1280x720, light and dark, taken by the studio itself
# under Xvfb (a real X server at a laptop's size): the start page, the imported ResNet-18 fitted
# whole and with its stages collapsed, the dashboard during a run (per-step accuracy), and a
# running sweep overlaid on the dashboard.
#   tools/studio_screenshots.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$here/build/release}"
out="${2:-$here/docs/screenshots}"
studio="$build/app/netsmith"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export XDG_CONFIG_HOME="$work/config"  # no preferences of the person running it
run() { timeout 900 xvfb-run -a -s "-screen 0 1280x720x24" "$studio" "$@" >>"$work/log" 2>&1; }

cp "$here/resources/templates/resnet18.netsmith.json" "$here/resources/examples/"*.netsmith.json "$work/"
cd "$work"
run --screenshots "$work/start"
for theme in light dark; do
  dest="$out/1280x720-$theme"
  mkdir -p "$dest"
  cp "$work/start/start-$theme.png" "$dest/start.png"
  run resnet18.netsmith.json --theme "$theme" --screenshots "$work/resnet-$theme"
  cp "$work/resnet-$theme/editor-resnet18.png" "$dest/model-resnet18.png"
  cp "$work/resnet-$theme/editor-resnet18-collapsed.png" "$dest/model-resnet18-collapsed.png"
  run fashion_mnist.netsmith.json --theme "$theme" --train --limit-train 3000 --limit-val 500 \
    --screenshots "$work/run-$theme"
  cp "$work/run-$theme/training.png" "$dest/dashboard-running.png"
  rm -rf sweeps
  run fashion_mnist_lr_sweep.netsmith.json --theme "$theme" --run-sweep --limit-train 3000 \
    --limit-val 500 --screenshots "$work/sweep-$theme"
  cp "$work/sweep-$theme/dashboard-sweep.png" "$dest/dashboard-sweep.png"
  cp "$work/sweep-$theme/experiments-running.png" "$dest/experiments-running.png"
done
echo "screenshots in $out/1280x720-{light,dark}"
