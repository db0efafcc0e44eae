#!/usr/bin/env bash
# What int8 costs and saves for a trained checkpoint: exports the float and int8 ONNX files (the
# int8 one calibrated on 256 training images and checked on N test images against the float
# model), then times both in ONNX Runtime and OpenCV DNN at 1 and 2 threads. Prints figures.
#
#   bash bench/deploy_compare.sh CHECKPOINT [TEST_SAMPLES] [CLI]
#
# The guide's figures (docs/guide/export.md, "int8") come from the default project's best
# checkpoint: bash bench/deploy_compare.sh runs/RUN/checkpoints/best.safetensors 500
set -euo pipefail
checkpoint=${1:?usage: deploy_compare.sh CHECKPOINT [TEST_SAMPLES] [CLI]}
samples=${2:-500}
cli=${3:-build/release/app/netsmith-cli}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$cli" export "$checkpoint" --onnx "$out/model.onnx" --int8 --samples "$samples" \
  --data-from-checkpoint
for threads in 1 2; do
  "$cli" bench "$out/model.onnx" "$out/model-int8.onnx" --threads "$threads"
done
