#!/usr/bin/python3
"""The fine-tuning flow end to end, with the real CLI on Fashion-MNIST:

1. a small CNN (two conv-BN-ReLU-pool blocks and a Linear) is trained on classes 0-4 (their
   30,000 images, 2 epochs) and exported to ONNX;
2. the ONNX file is imported with its head replaced (5 outputs) and the first block frozen
   (--freeze-to pool1: its BatchNorm keeps its statistics), then fine-tuned for 1 epoch on 1,000
   images of classes 5-9;
3. the same architecture is trained from scratch for 1 epoch on the same 1,000 images.

Both runs are tested on the 5,000 test images of classes 5-9, and the fine-tuned one must be
more accurate. Prints both figures. Exit 77 (skipped) without the Fashion-MNIST package.

    /usr/bin/python3 tests/cli/transfer_flow.py NETSMITH_CLI WORK_DIR
"""
import gzip
import json
import os
import re
import shutil
import struct
import sys

import flow_support

FMNIST = "/usr/share/datasets/fashion-mnist"
FREEZE = os.environ.get("FREEZE", "pool1")
TUNE_LR = float(os.environ.get("TUNE_LR", "0.001"))


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, n = struct.unpack(">II", data[:8])
    if magic == 0x803:
        rows, cols = struct.unpack(">II", data[8:16])
        return [data[16 + i * rows * cols:16 + (i + 1) * rows * cols] for i in range(n)]
    return list(data[8:8 + n])


def write_idx(images, labels, image_path, label_path):
    with open(image_path, "wb") as f:
        f.write(struct.pack(">IIII", 0x803, len(images), 28, 28))
        for img in images:
            f.write(img)
    with open(label_path, "wb") as f:
        f.write(struct.pack(">II", 0x801, len(labels)))
        f.write(bytes(labels))


def subset(images, labels, classes, limit):
    out_i, out_l = [], []
    for img, lab in zip(images, labels):
        if lab in classes:
            out_i.append(img)
            out_l.append(classes.index(lab))
            if limit and len(out_i) == limit:
                break
    return out_i, out_l


def run(cmd):
    return flow_support.run("transfer_flow", cmd)


def test_accuracy(output):
    return flow_support.printed_test_accuracy("transfer_flow", output)


def main():
    cli, work = sys.argv[1], sys.argv[2]
    if not os.path.exists(os.path.join(FMNIST, "train-images-idx3-ubyte.gz")):
        print("SKIPPED: no Fashion-MNIST (dataset-fashion-mnist)")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    train_i = read_idx(os.path.join(FMNIST, "train-images-idx3-ubyte.gz"))
    train_l = read_idx(os.path.join(FMNIST, "train-labels-idx1-ubyte.gz"))
    test_i = read_idx(os.path.join(FMNIST, "t10k-images-idx3-ubyte.gz"))
    test_l = read_idx(os.path.join(FMNIST, "t10k-labels-idx1-ubyte.gz"))
    for name, classes, limit in (("a", [0, 1, 2, 3, 4], int(os.environ.get("SOURCE_IMAGES", "30000"))), ("b", [5, 6, 7, 8, 9], 1000)):
        write_idx(*subset(train_i, train_l, classes, limit),
                  os.path.join(work, name + "-train-images"), os.path.join(work, name + "-train-labels"))
        write_idx(*subset(test_i, test_l, classes, 0),
                  os.path.join(work, name + "-test-images"), os.path.join(work, name + "-test-labels"))

    def data(name):
        return {"train": {"format": "idx", "images": name + "-train-images",
                          "labels": name + "-train-labels"},
                "test": {"format": "idx", "images": name + "-test-images",
                         "labels": name + "-test-labels"},
                "validation": {"fraction": 0.1, "seed": 0},
                "normalize": {"mean": [0.286], "std": [0.353]}}

    def conv(id, inp, ch):
        return [{"id": id, "op": "Conv2d", "params": {"out_channels": ch, "kernel_size": 3,
                                                      "padding": 1}, "inputs": [inp]},
                {"id": id + "_bn", "op": "BatchNorm2d", "inputs": [id]},
                {"id": id + "_relu", "op": "ReLU", "inputs": [id + "_bn"]}]
    nodes = ([{"id": "input", "op": "Input"}] + conv("conv1", "input", 16) +
             [{"id": "pool1", "op": "MaxPool2d", "inputs": ["conv1_relu"]}] +
             conv("conv2", "pool1", 32) +
             [{"id": "pool2", "op": "MaxPool2d", "inputs": ["conv2_relu"]},
              {"id": "flat", "op": "Flatten", "inputs": ["pool2"]},
              {"id": "fc", "op": "Linear", "params": {"out_features": 5}, "inputs": ["flat"]}])
    train = {"epochs": 1, "batch_size": 32, "seed": 0, "threads": 2,
             "optimizer": {"type": "adam", "lr": 0.001}, "schedule": {"type": "constant"}}

    def project(name, d, epochs):
        p = {"format": "netsmith-project", "version": 1, "name": name,
             "model": {"input": {"channels": 1, "height": 28, "width": 28}, "nodes": nodes},
             "data": data(d), "train": dict(train, epochs=epochs)}
        path = os.path.join(work, name + ".netsmith.json")
        with open(path, "w") as f:
            json.dump(p, f, indent=1)
        return path

    # 1. the source model on classes 0-4, to ONNX
    source = project("source", "a", 2)
    out = run([cli, "train", source, "--out", os.path.join(work, "runs")])
    src_acc, _ = test_accuracy(out)
    run_dir = re.search(r"run folder (\S+)", out).group(1)
    onnx = os.path.join(work, "source.onnx")
    run([cli, "export", os.path.join(run_dir, "checkpoints", "best.safetensors"), "--onnx", onnx])

    # 2. import, replace the head, freeze the backbone, fine-tune on 1,000 images of 5-9
    tuned = os.path.join(work, "tuned.netsmith.json")
    run([cli, "import", onnx, "--out", tuned, "--replace-head", "5", "--freeze-to", FREEZE])
    with open(tuned) as f:
        p = json.load(f)
    assert p["init_from"] == "tuned.safetensors", p["init_from"]
    p["data"] = data("b")
    p["train"] = dict(train, epochs=1, optimizer={"type": "adam", "lr": TUNE_LR})
    with open(tuned, "w") as f:
        json.dump(p, f, indent=1)
    out = run([cli, "train", tuned, "--out", os.path.join(work, "runs")])
    if "initialised from" not in out:
        sys.exit("transfer_flow: the fine-tuning run did not load the imported weights:\n" + out)
    tuned_acc, tuned_n = test_accuracy(out)

    # 3. the same architecture from scratch on the same 1,000 images
    scratch = project("scratch", "b", 1)
    scratch_acc, scratch_n = test_accuracy(run([cli, "train", scratch, "--out",
                                                os.path.join(work, "runs")]))
    print("source model, classes 0-4: %.2f%% test accuracy; fine-tuning frozen up to %s, lr %g"
          % (src_acc, FREEZE, TUNE_LR))
    print("classes 5-9, 1 epoch on 1000 images: fine-tuned %.2f%% of %d, from scratch %.2f%% of %d"
          % (tuned_acc, tuned_n, scratch_acc, scratch_n))
    if tuned_n != 5000 or scratch_n != 5000:
        sys.exit("transfer_flow: expected 5000 test images of classes 5-9")
    if not tuned_acc > scratch_acc:
        sys.exit("transfer_flow: fine-tuning (%.2f%%) is not ahead of training from scratch (%.2f%%)"
                 % (tuned_acc, scratch_acc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
