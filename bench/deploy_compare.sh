#!/usr/bin/env bash
# What int8 costs and saves for a trained checkpoint: exports the float and int8 ONNX files (the
# int8 one calibrated on 256 training images and checked on N test images against the float
# model), evaluates the checkpoint and both files on the whole test split (`eval --onnx`: the
# files run in ONNX Runtime on the checkpoint's data and preprocessing), then times both files
# in ONNX Runtime and OpenCV DNN at 1 and 2 threads. Prints figures.
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
# The headline figure on the test split: the checkpoint in LibTorch, each file in ONNX Runtime.
for model in "" "$out/model.onnx" "$out/model-int8.onnx"; do
  "$cli" eval "$checkpoint" --data-from-checkpoint ${model:+--onnx "$model"} --json \
    >"$out/eval.json"
  /usr/bin/python3 - "$out/eval.json" "${model:-checkpoint}" <<'PY'
import json, os, sys
e = json.load(open(sys.argv[1]))
# Classification's headline is its accuracy; another task's its first figure.
f = {"accuracy": e["accuracy"]} if e["task"] == "classification" else e["figures"]
name = next(iter(f))
print("test %s %.4f over %d samples: %s (%s)" % (name, f[name], e["samples"],
      os.path.basename(sys.argv[2]), e["runtime"]))
PY
done
for threads in 1 2; do
  "$cli" bench "$out/model.onnx" "$out/model-int8.onnx" --threads "$threads"
done
