#!/usr/bin/env bash
# The GPU check of issue 19, as one prepared script for the device machine (PyTorch 2.x with
# CUDA, no OpenCV/spdlog/ONNX C++ packages there). From the repository root:
#
#   DEBS=shared/debs bench/gpu_check.sh          # on the GPU machine
#   BUILD=build/release bench/gpu_check.sh       # here: the CPU paths, with an existing build
#
# Steps, each printed with its figures (and all of them in $OUT/gpu_check.json):
#  1. the device: cuda where torch.cuda.is_available(), else cpu;
#  2. unpacks the .deb files in $DEBS (apt-get download here, dpkg -x there) into a sysroot:
#     OpenCV's core/imgproc/imgcodecs/dnn, spdlog, fmt, nlohmann-json, ONNX, protobuf, gtest and
#     libjpeg62-turbo(-dev) (the loader's JPEG decoder), with what they link;
#  3. builds core + CLI + core tests (headless) against the LibTorch in that Python's PyTorch,
#     unless $BUILD names an existing build;
#  4. the core tests, trainer tests on the device (NETSMITH_TEST_DEVICE);
#  5. trains the default project on the device (1 epoch) and prints its test accuracy line;
#  6. images/s of `netsmith-cli bench` in fp32, bf16 and fp16 (fp16: CUDA only) on a wide model
#     (the default project at batch 256);
#  7. the memory chart's figure against torch.cuda.max_memory_allocated (bench/gpu_check.py);
#  8. ONNX parity in onnxruntime (bench/gpu_check.py).
# Environment: OUT (results, default /tmp/netsmith-gpu-check), PYTHON (default python3),
# DEBS, BUILD, TEST_TIMEOUT (seconds for step 4, default 300).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/netsmith-gpu-check}
PY=${PYTHON:-python3}
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
mkdir -p "$OUT"
SUMMARY="$OUT/gpu_check.json"
echo "{}" > "$SUMMARY"
FAILED=0

say() { printf '\n[gpu_check] %s\n' "$*"; }
record() {  # record KEY JSON
  "$PY" - "$SUMMARY" "$1" "$2" <<'PYEOF'
import json, sys
path, key, value = sys.argv[1:4]
with open(path) as f:
    data = json.load(f)
try:
    data[key] = json.loads(value)
except ValueError:
    data[key] = value
with open(path, "w") as f:
    json.dump(data, f, indent=1)
PYEOF
}
fail() { FAILED=1; say "FAILED: $*"; record "failed_$1" "\"$2\""; }

# 1. device
DEVICE=$("$PY" -c 'import torch; print("cuda" if torch.cuda.is_available() else "cpu")') || {
  echo "gpu_check: $PY has no torch" >&2; exit 2; }
say "device: $DEVICE ($("$PY" -c 'import torch; print(torch.__version__, torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU")'))"
record device "\"$DEVICE\""

# 2. packages brought as .deb files
PREFIX=$("$PY" -c 'import torch; print(torch.utils.cmake_prefix_path)')
SYSROOT="$OUT/sysroot"
if [ -n "${DEBS:-}" ] && ls "$DEBS"/*.deb >/dev/null 2>&1; then
  say "unpacking $(ls "$DEBS"/*.deb | wc -l) .deb files into $SYSROOT"
  mkdir -p "$SYSROOT"
  for d in "$DEBS"/*.deb; do dpkg -x "$d" "$SYSROOT"; done
  PREFIX="$PREFIX;$SYSROOT/usr;$SYSROOT/usr/lib/x86_64-linux-gnu/cmake"
  export LD_LIBRARY_PATH="$SYSROOT/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
  export CPATH="$SYSROOT/usr/include:$SYSROOT/usr/include/opencv4:${CPATH:-}"
fi

# 3. build
if [ -z "${BUILD:-}" ]; then
  BUILD="$OUT/build"
  say "configuring core + CLI against $PREFIX"
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNETSMITH_GUI=OFF \
    -DNETSMITH_BENCH=OFF -DCMAKE_PREFIX_PATH="$PREFIX" > "$OUT/configure.log" 2>&1 \
    || { tail -30 "$OUT/configure.log"; exit 2; }
  say "building (log: $OUT/build.log)"
  start=$(date +%s)
  cmake --build "$BUILD" --target netsmith-cli netsmith_core_tests -j "$(nproc)" \
    > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 2; }
  record build_seconds "$(( $(date +%s) - start ))"
fi
CLI="$BUILD/app/netsmith-cli"
"$CLI" env | tee "$OUT/env.txt"

# 4. core tests, the trainer's on the device
say "core tests (trainer tests on $DEVICE, at most ${TEST_TIMEOUT}s)"
NETSMITH_TEST_DEVICE=$DEVICE timeout "$TEST_TIMEOUT" "$BUILD/tests/netsmith_core_tests" \
  --gtest_brief=1 > "$OUT/core_tests.log" 2>&1
rc=$?
tail -5 "$OUT/core_tests.log"
record core_tests "\"$(grep -E '^\[  (PASSED|FAILED)' "$OUT/core_tests.log" | tr '\n' ' ' | tr -d '"')(exit $rc)\""
[ $rc -eq 0 ] || fail core_tests "exit $rc"

# 5. the default project on the device, one epoch
say "training the default project on $DEVICE (1 epoch)"
EXAMPLE="$ROOT/resources/examples/fashion_mnist.netsmith.json"
start=$(date +%s)
"$CLI" train "$EXAMPLE" --device "$DEVICE" --epochs 1 --out "$OUT/runs" > "$OUT/train.log" 2>&1
rc=$?
tail -3 "$OUT/train.log"
record train "\"$(tail -1 "$OUT/train.log" | tr -d '"') ($(( $(date +%s) - start )) s, exit $rc)\""
[ $rc -eq 0 ] || fail train "exit $rc"

# 6. precision: fp32, bf16, fp16 on a wide batch
say "bench: fp32 / bf16 / fp16 images/s (batch 256)"
for amp in off bf16 fp16; do
  if [ "$amp" = fp16 ] && [ "$DEVICE" != cuda ]; then continue; fi
  variant="$OUT/amp-$amp.netsmith.json"
  "$PY" - "$EXAMPLE" "$variant" "$amp" "$DEVICE" <<'PYEOF'
import json, os, sys
src, dst, amp, device = sys.argv[1:5]
with open(src) as f:
    p = json.load(f)
base = os.path.dirname(os.path.abspath(src))
for split in p.get("data", {}).values():  # data paths stay valid from the new folder
    if isinstance(split, dict):
        for key in ("images", "labels", "root", "manifest"):
            if isinstance(split.get(key), str) and not os.path.isabs(split[key]):
                split[key] = os.path.join(base, split[key])
p["train"]["amp"] = amp
p["train"]["device"] = device
with open(dst, "w") as f:
    json.dump(p, f)
PYEOF
  "$CLI" bench "$variant" --batch-size 256 --steps 30 --json > "$OUT/bench-$amp.json" 2> "$OUT/bench-$amp.err"
  rc=$?
  rate=$("$PY" -c "import json,sys; print(round(json.load(open(sys.argv[1]))['synthetic_images_per_second']))" "$OUT/bench-$amp.json" 2>/dev/null)
  echo "  amp=$amp: ${rate:-?} images/s (exit $rc)"
  record "bench_$amp" "${rate:-null}"
  [ $rc -eq 0 ] || fail "bench_$amp" "exit $rc: $(tail -1 "$OUT/bench-$amp.err" | tr -d '"')"
done

# 7. memory figures
say "memory: the chart's peak against torch.cuda.max_memory_allocated"
line=$("$PY" "$ROOT/bench/gpu_check.py" memory "$CLI" "$EXAMPLE" "$DEVICE" "$OUT") || fail memory "see above"
echo "  $line"
record memory "${line:-null}"

# 8. ONNX parity
say "ONNX parity in onnxruntime"
ckpt=$(ls -t "$OUT"/runs/*/checkpoints/last.safetensors 2>/dev/null | head -1)
if [ -n "$ckpt" ]; then
  line=$("$PY" "$ROOT/bench/gpu_check.py" onnx "$CLI" "$ckpt" "$OUT") || fail onnx "see above"
  echo "  $line"
  record onnx "${line:-null}"
else
  fail onnx "no checkpoint from step 5"
fi

say "summary: $SUMMARY"
cat "$SUMMARY"
exit $FAILED
