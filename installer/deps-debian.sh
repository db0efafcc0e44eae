#!/usr/bin/env bash
# Installs every Debian 12 package that Netsmith needs to build, test and run its default job.
# Idempotent: packages already present are left alone; apt-get update runs once per call, and
# only when something is missing. Runs unattended (no prompts). Uses sudo when not root.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config git
  # LibTorch (CPU) and what its headers and runtime need
  libtorch-dev libgloo-dev libopenblas0-pthread
  # tcmalloc for the programs (cmake/NetsmithMalloc.cmake)
  libtcmalloc-minimal4
  # UI
  qt6-base-dev libqcustomplot-dev libgl-dev xvfb xauth
  # core libraries
  libopencv-dev libjpeg-dev zlib1g-dev libspdlog-dev nlohmann-json3-dev libonnx-dev protobuf-compiler libprotobuf-dev
  # tests (desktop-file-validate and dpkg-deb check the Debian package)
  # (CPack's DEB generator runs `file` and dpkg-shlibdeps)
  libgtest-dev python3-onnx python3-opencv python3-numpy desktop-file-utils dpkg-dev file
  # tests: the generated PyTorch model.py is run against LibTorch (Debian's python3-torch);
  # the tasks' figures are checked against scikit-learn's metrics
  python3-torch python3-sklearn
  # benches: bench/loader_compare.py times torchvision's pipeline on the same files
  python3-torchvision
  # the sanitizer and fuzz stage: clang with ASan, UBSan and libFuzzer
  clang-14 libclang-rt-14-dev libfuzzer-14-dev
  # default data set
  dataset-fashion-mnist
)

say() { printf '[deps] %s\n' "$*"; }

# Node.js and npm run ONNX Runtime (below); a Node.js already installed from elsewhere is used
# as it is (Debian's npm would conflict with it).
if ! command -v node >/dev/null 2>&1 && ! command -v nodejs >/dev/null 2>&1; then
  packages+=(nodejs)
fi
if ! command -v npm >/dev/null 2>&1; then
  packages+=(npm)
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
  say "not root: using sudo for apt-get"
else
  say "error: must run as root or have sudo available" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  say "all ${#packages[@]} packages already installed"
else
  export DEBIAN_FRONTEND=noninteractive
  say "missing ${#missing[@]} package(s): ${missing[*]}"
  say "running apt-get update"
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  say "installing"
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}"
  say "done"
fi

# LibTorch links a BLAS through the alternatives system; make sure the OpenBLAS pthread build
# is the one chosen, since reference BLAS is ~35x slower for matrix products.
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
for alt in "libblas.so.3-$arch" "liblapack.so.3-$arch"; do
  target=$(update-alternatives --list "$alt" 2>/dev/null | grep openblas-pthread | head -n1 || true)
  if [ -n "$target" ]; then
    current=$(readlink -f "/etc/alternatives/$alt" 2>/dev/null || true)
    if [ "$current" != "$(readlink -f "$target")" ]; then
      say "selecting OpenBLAS for $alt"
      "${SUDO[@]}" update-alternatives --set "$alt" "$target" >/dev/null
    fi
  fi
done

# ONNX Runtime (CPU), the second runtime that checks every ONNX export and times models, from
# npm's onnxruntime-node package. --ignore-scripts skips its install script, which only fetches
# GPU libraries; the CPU library ships in the package. Netsmith finds it in this folder
# (core/export/onnx_runtime.h; NETSMITH_ONNXRUNTIME names another).
ort_version=1.31.1
ort_prefix=/usr/local/lib/netsmith/onnxruntime
ort_package="$ort_prefix/node_modules/onnxruntime-node/package.json"
if [ -f "$ort_package" ] && grep -q "\"version\": \"$ort_version\"" "$ort_package"; then
  say "ONNX Runtime $ort_version already in $ort_prefix"
else
  say "installing ONNX Runtime $ort_version (npm: onnxruntime-node) into $ort_prefix"
  "${SUDO[@]}" mkdir -p "$ort_prefix"
  "${SUDO[@]}" npm install --prefix "$ort_prefix" --ignore-scripts --no-audit --no-fund \
    --no-update-notifier "onnxruntime-node@$ort_version" </dev/null
fi
