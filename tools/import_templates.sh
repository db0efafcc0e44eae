#!/usr/bin/env bash
# Regenerates the torchvision-layout templates (ResNet-18, MobileNetV2, EfficientNet-B0) through
# Netsmith's own ONNX import: each network is built by Debian's python3-torchvision with 10
# classes and random weights, exported to ONNX with BatchNorm kept, imported by
# `netsmith-cli import`, and saved without weights as resources/templates/<name>.netsmith.json
# (3x224x224 input) and <name>_32.netsmith.json (the same layers on 3x32x32 input).
#   tools/import_templates.sh [build/release/app/netsmith-cli]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CLI=${1:-$ROOT/build/release/app/netsmith-cli}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
/usr/bin/python3 - "$WORK" <<'PYEOF'
import sys, torch, torchvision
out = sys.argv[1]
nets = {"resnet18": torchvision.models.resnet18, "mobilenet_v2": torchvision.models.mobilenet_v2,
        "efficientnet_b0": torchvision.models.efficientnet_b0}
for name, make in nets.items():
    torch.manual_seed(0)
    m = make(num_classes=10).eval()
    for size in (224, 32):
        torch.onnx.export(m, torch.randn(1, 3, size, size), "%s/%s_%d.onnx" % (out, name, size),
                          opset_version=13, input_names=["input"], output_names=["logits"],
                          do_constant_folding=False, training=torch.onnx.TrainingMode.PRESERVE)
    print(name, sum(p.numel() for p in m.parameters()))
PYEOF
for name in resnet18 mobilenet_v2 efficientnet_b0; do
  for size in 224 32; do
    suffix=$([ "$size" = 32 ] && echo _32 || true)
    "$CLI" import "$WORK/${name}_$size.onnx" --out "$WORK/$name$suffix.netsmith.json" --force > /dev/null
    /usr/bin/python3 - "$WORK/$name$suffix.netsmith.json" "$ROOT/resources/templates/$name$suffix.netsmith.json" "$name" "$size" <<'PYEOF'
import json, sys
src, dst, name, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
with open(src) as f:
    p = json.load(f)
p.pop("init_from", None)
title = {"resnet18": "ResNet-18", "mobilenet_v2": "MobileNetV2", "efficientnet_b0": "EfficientNet-B0"}[name]
p["name"] = name + ("_32" if size == 32 else "")
p["description"] = ("%s in torchvision's layout (imported from torchvision through ONNX; no "
                    "dropout, which an inference export leaves out), %s, 10 classes." %
                    (title, "3x224x224 input" if size == 224 else "the same layers on 3x32x32 input (CIFAR-10 sized)"))
if size == 224:
    p["data"] = {"train": {"format": "image_folder", "root": "data/train"},
                 "validation": {"fraction": 0.1, "seed": 0, "stratified": True},
                 "normalize": {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}}
    p["augment"] = [{"transform": "RandomResizedCrop"}, {"transform": "HorizontalFlip"}]
else:
    p["data"] = {"train": {"format": "cifar10", "files": ["data/cifar-10-batches-bin/data_batch_%d.bin" % i for i in range(1, 6)]},
                 "test": {"format": "cifar10", "files": ["data/cifar-10-batches-bin/test_batch.bin"]},
                 "validation": {"fraction": 0.1, "seed": 0, "stratified": True},
                 "normalize": {"mean": [0.4914, 0.4822, 0.4465], "std": [0.247, 0.2435, 0.2616]}}
    p["augment"] = [{"transform": "RandomCrop", "padding": 4}, {"transform": "HorizontalFlip"}]
p["train"] = {"epochs": 30, "batch_size": 64, "seed": 0,
              "optimizer": {"type": "sgd", "lr": 0.05, "momentum": 0.9, "weight_decay": 0.0001},
              "schedule": {"type": "cosine", "warmup_epochs": 1}, "label_smoothing": 0.1}
with open(dst, "w") as f:
    json.dump(p, f, indent=2)
    f.write("\n")
print(dst)
PYEOF
  done
done
