#!/usr/bin/env python3
"""Writes the multi-label, regression and detection templates and the scenes detection example
(run from the repository root).

Both are the same small CNN for the user's own images (3x64x64 input, images of other sizes
resized to it): three [conv3x3-BN-ReLU, maxpool] stages of 32, 64 and 128 filters, global
average pooling, then a head for the task. Their data sections read CSV manifests beside the
project (data/train.csv, data/test.csv), the formats the mosaics and rotations examples use; File
> New takes a new project's data and training settings from them. The keys are written in the
order project::serialiseProject writes them, so a file is what the studio would save.
"""
import json
import sys

WIDTHS = [32, 64, 128]
INPUT = {"channels": 3, "height": 64, "width": 64}


def build(head):
    """The backbone and then `head`: (id, op, params) in order."""
    nodes = []

    def node(id, op, params):
        inputs = [nodes[-1]["id"]] if nodes else []
        nodes.append({"id": id, "op": op, "params": params, "inputs": inputs,
                      "pos": [0, len(nodes) * 80]})

    node("input", "Input", {})
    for i, w in enumerate(WIDTHS, 1):
        node("conv%d" % i, "Conv2d",
             {"out_channels": w, "kernel_size": 3, "padding": 1, "bias": False})
        node("bn%d" % i, "BatchNorm2d", {})
        node("relu%d" % i, "ReLU", {})
        node("pool%d" % i, "MaxPool2d", {"kernel_size": 2})
    node("gap", "GlobalAvgPool", {})
    node("flatten", "Flatten", {})
    for id, op, params in head:
        node(id, op, params)
    return {"input": INPUT, "nodes": nodes}


def csv_data(format, extra):
    data = {"train": {"format": format, "manifest": "data/train.csv"},
            "validation": {"fraction": 0.1, "seed": 0, "stratified": True},
            "test": {"format": format, "manifest": "data/test.csv"}}
    data.update(extra)
    data.update({"fit": "resize", "normalize": "auto", "on_error": "skip"})
    return data


def train(loss, monitor):
    return {"epochs": 15, "batch_size": 64,
            "optimizer": {"type": "adam", "lr": 0.001, "weight_decay": 0.0},
            "schedule": {"type": "cosine", "warmup_epochs": 0},
            "seed": 0, "device": "cpu", "loss": loss, "monitor": monitor}


def project(name, description, task, model, data, augment, train):
    # project::projectToJson's order.
    return {"format": "netsmith-project", "version": 1, "name": name,
            "description": description, "task": task, "model": model, "data": data,
            "augment": augment, "train": train}


def write(path, project):
    with open(path, "w") as f:
        json.dump(project, f, indent=2)
        f.write("\n")


# The head's width: 10 labels until the user's are counted (the head rule names the fix).
LABELS = 10
# One target: the common case (an age, a count, a score); name more in data.targets and widen
# out.out_features to match.
TARGETS = ["value"]


def main():
    write("resources/templates/multilabel_cnn.netsmith.json", project(
        "multilabel_cnn",
        "Multi-label CNN: which of your labels each image shows, any number of them at once. "
        "Data: a CSV manifest with a path,labels header, labels holding an image's label names "
        "separated by ; (data/train.csv and data/test.csv beside the project, image paths "
        "relative to the CSV; or one 0/1 column per label). Set out.out_features to your number "
        "of labels.",
        "multilabel",
        build([("drop", "Dropout", {"p": 0.2}),
               ("out", "Linear", {"out_features": LABELS})]),
        csv_data("multilabel_csv", {}),
        [{"transform": "HorizontalFlip", "p": 0.5}],
        train("bce", "val_map")))
    write("resources/templates/regression_cnn.netsmith.json", project(
        "regression_cnn",
        "Regression CNN: numbers to predict from each image (an angle, an age, a count). Data: a "
        "CSV manifest with a path column and one column of numbers per target (data/train.csv "
        "and data/test.csv beside the project, image paths relative to the CSV); data.targets "
        "names the columns the model predicts, in output order. Set out.out_features to their "
        "number.",
        "regression",
        build([("fc1", "Linear", {"out_features": 64}),
               ("relu_fc", "ReLU", {}),
               ("out", "Linear", {"out_features": len(TARGETS)})]),
        csv_data("regression_csv", {"targets": TARGETS}),
        # No flips: a mirrored image may not have the same targets (an angle changes sign).
        [],
        train("huber", "val_mae")))
    write_detection()


# Fashion-MNIST's items: the scenes' detection classes (make-dataset scenes, data.yaml).
ITEMS = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker",
         "Bag", "Ankle boot"]


def detector(input, classes, widths):
    """A small single-stage detector: three [conv3x3-BN-ReLU, maxpool] stages, a fourth conv at
    stride 8, a feature pyramid step (the stride-8 map upsampled and concatenated with the
    stride-4 one), and the anchor-free head at stride 4: a 3x3 conv, then a 1x1 conv of classes
    + 5 channels (class scores, 4 box distances, centre-ness; task/detection_head.h)."""
    nodes = []

    def node(id, op, params, inputs=None):
        if inputs is None:
            inputs = [nodes[-1]["id"]] if nodes else []
        nodes.append({"id": id, "op": op, "params": params, "inputs": inputs,
                      "pos": [0, len(nodes) * 80]})

    def block(i, w):
        node("conv%d" % i, "Conv2d",
             {"out_channels": w, "kernel_size": 3, "padding": 1, "bias": False})
        node("bn%d" % i, "BatchNorm2d", {})
        node("relu%d" % i, "ReLU", {})

    node("input", "Input", {})
    for i, w in enumerate(widths[:3], 1):
        block(i, w)
        node("pool%d" % i, "MaxPool2d", {"kernel_size": 2})
    block(4, widths[3])
    node("up", "Upsample", {"scale_factor": 2, "mode": "nearest"})
    node("fpn", "Concat", {}, ["pool2", "up"])
    block(5, widths[2])
    node("head_conv", "Conv2d", {"out_channels": widths[2], "kernel_size": 3, "padding": 1})
    node("head_relu", "ReLU", {})
    node("head", "Conv2d", {"out_channels": classes + 5, "kernel_size": 1})
    return {"input": input, "nodes": nodes}


def resnet18_detector(classes):
    """The ResNet-18 template's backbone (resources/templates/resnet18, torchvision's layout
    imported through ONNX) to its third stage, a feature pyramid step (stage 3 at stride 16
    upsampled and concatenated with stage 2 at stride 8) and the anchor-free head at stride 8."""
    with open("resources/templates/resnet18.netsmith.json") as f:
        net = json.load(f)["model"]
    nodes = []
    for n in net["nodes"]:
        nodes.append(n)
        if n["id"] == "layer3_1_relu_1":
            break
    y = nodes[-1]["pos"][1]

    def node(id, op, params, inputs):
        nonlocal y
        y += 80
        nodes.append({"id": id, "op": op, "params": params, "inputs": inputs,
                      "pos": [0, y]})

    node("up", "Upsample", {"scale_factor": 2, "mode": "nearest"}, ["layer3_1_relu_1"])
    node("fpn", "Concat", {}, ["layer2_1_relu_1", "up"])
    node("fpn_conv", "Conv2d", {"out_channels": 128, "kernel_size": 3, "padding": 1,
                                "bias": False}, ["fpn"])
    node("fpn_bn", "BatchNorm2d", {}, ["fpn_conv"])
    node("fpn_relu", "ReLU", {}, ["fpn_bn"])
    node("head_conv", "Conv2d", {"out_channels": 128, "kernel_size": 3, "padding": 1},
         ["fpn_relu"])
    node("head_relu", "ReLU", {}, ["head_conv"])
    node("head", "Conv2d", {"out_channels": classes + 5, "kernel_size": 1}, ["head_relu"])
    return {"input": net["input"], "nodes": nodes}


def detection_train(epochs):
    return {"epochs": epochs, "batch_size": 32,
            "optimizer": {"type": "adam", "lr": 0.002, "weight_decay": 0.0},
            "schedule": {"type": "cosine", "warmup_epochs": 1},
            "seed": 0, "device": "cpu", "loss": "fcos", "monitor": "val_map50"}


def write_detection():
    write("resources/templates/detector.netsmith.json", project(
        "detector",
        "Small object detector: boxes around the objects in your images, with their classes "
        "(anchor-free, one head at stride 4). Data: YOLO folders beside the project "
        "(data/train/images, data/train/labels with one class cx cy w h line per box, names in "
        "data/data.yaml), or set the format to coco or voc. Set head.out_channels to your "
        "number of classes + 5.",
        "detection",
        detector({"channels": 3, "height": 128, "width": 128}, LABELS, [32, 64, 96, 128]),
        {"train": {"format": "yolo", "images": "data/train/images",
                   "labels": "data/train/labels"},
         "validation": {"fraction": 0.1, "seed": 0},
         "test": {"format": "yolo", "images": "data/test/images", "labels": "data/test/labels"},
         "fit": "resize", "normalize": "auto", "on_error": "skip"},
        [{"transform": "HorizontalFlip", "p": 0.5}],
        detection_train(30)))
    write("resources/templates/resnet18_detector.netsmith.json", project(
        "resnet18_detector",
        "Object detector on the ResNet-18 backbone (torchvision's layout, to its third stage), "
        "a feature pyramid step and the anchor-free head at stride 8; 3x224x224 input. Data as "
        "the small detector's: YOLO folders beside the project (data/train/images, "
        "data/train/labels, names in data/data.yaml), or coco or voc. Load ImageNet weights "
        "into the backbone with netsmith-cli train --init-from CKPT when you have them; "
        "set head.out_channels to your number of classes + 5.",
        "detection",
        resnet18_detector(LABELS),
        {"train": {"format": "yolo", "images": "data/train/images",
                   "labels": "data/train/labels"},
         "validation": {"fraction": 0.1, "seed": 0},
         "test": {"format": "yolo", "images": "data/test/images", "labels": "data/test/labels"},
         "fit": "resize", "normalize": {"mean": [0.485, 0.456, 0.406],
                                         "std": [0.229, 0.224, 0.225]},
         "on_error": "skip"},
        [{"transform": "HorizontalFlip", "p": 0.5}],
        dict(detection_train(30), optimizer={"type": "sgd", "lr": 0.01, "momentum": 0.9,
                                             "weight_decay": 0.0001})))
    write("resources/examples/scenes_detection.netsmith.json", project(
        "scenes_detection",
        "Detection: boxes around the Fashion-MNIST items of a 64x64 scene, with their classes. "
        "Make its data first: netsmith-cli make-dataset scenes --out resources/examples/scenes",
        "detection",
        detector({"channels": 1, "height": 64, "width": 64}, len(ITEMS), [16, 32, 64, 96]),
        {"train": {"format": "yolo", "images": "scenes/train/images",
                   "labels": "scenes/train/labels"},
         "validation": {"fraction": 0.1, "seed": 0},
         "test": {"format": "yolo", "images": "scenes/test/images",
                  "labels": "scenes/test/labels"},
         "on_error": "fail"},
        [{"transform": "HorizontalFlip", "p": 0.5}],
        detection_train(15)))


if __name__ == "__main__":
    sys.exit(main())
