#!/usr/bin/env python3
"""Writes the U-Net template and the scenes example project (run from the repository root).

A small U-Net: an encoder of [conv3x3-BN-ReLU] x 2 blocks with max pooling, a bottleneck, and a
decoder that upsamples with ConvTranspose2d (kernel 2, stride 2), joins the encoder's block of
the same size through Concat (the skip connection) and convolves twice more; a 1x1 Conv2d gives
a score per class for every pixel.
"""
import json
import sys

WIDTHS = [8, 24, 48]      # encoder blocks: narrow at full size, wider where pixels are few
BOTTLENECK = 96
DECODER = [16, 24, 48]    # decoder blocks: the last holds the features every class is told by


def build(classes, channels, size):
    nodes, row = [], [0]

    def node(id, op, params, inputs, x=0):
        nodes.append({"id": id, "op": op, "params": params, "inputs": inputs,
                      "pos": [x, row[0] * 80]})
        row[0] += 1
        return id

    def block(prefix, width, inp, x=0, convs=2):
        a = node(prefix + "_conv1", "Conv2d",
                 {"out_channels": width, "kernel_size": 3, "padding": 1, "bias": False}, [inp], x)
        a = node(prefix + "_bn1", "BatchNorm2d", {}, [a], x)
        a = node(prefix + "_relu1", "ReLU", {}, [a], x)
        if convs == 1:
            return a
        a = node(prefix + "_conv2", "Conv2d",
                 {"out_channels": width, "kernel_size": 3, "padding": 1, "bias": False}, [a], x)
        a = node(prefix + "_bn2", "BatchNorm2d", {}, [a], x)
        return node(prefix + "_relu2", "ReLU", {}, [a], x)

    x = node("input", "Input", {}, [])
    skips = []
    for i, w in enumerate(WIDTHS, 1):
        x = block("enc%d" % i, w, x, -200)
        skips.append(x)
        x = node("pool%d" % i, "MaxPool2d", {"kernel_size": 2}, [x], -200)
    x = block("mid", BOTTLENECK, x)
    for i, w in reversed(list(enumerate(DECODER, 1))):
        x = node("up%d" % i, "ConvTranspose2d",
                 {"out_channels": w, "kernel_size": 2, "stride": 2}, [x], 200)
        x = node("cat%d" % i, "Concat", {}, [skips[i - 1], x], 200)
        x = block("dec%d" % i, w, x, 200)
    node("out", "Conv2d", {"out_channels": classes, "kernel_size": 1}, [x], 200)
    return {"input": {"channels": channels, "height": size, "width": size}, "nodes": nodes}


TEMPLATE_CLASSES = ["background", "object"]
SCENE_CLASSES = ["background", "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal",
                 "Shirt", "Sneaker", "Bag", "Ankle boot"]
SCENE_COLORS = ["#000000", "#e6194b", "#3cb44b", "#ffe119", "#4363d8", "#f58231", "#911eb4",
                "#46f0f0", "#f032e6", "#bcf60c", "#fabebe"]


def write(path, project):
    with open(path, "w") as f:
        json.dump(project, f, indent=2)
        f.write("\n")


def main():
    # The template's keys in project::serialiseProject's order; its data (images and masks
    # beside the project, two classes until the user names theirs) is what File > New gives a
    # segmentation project.
    write("resources/templates/unet.netsmith.json", {
        "format": "netsmith-project", "version": 1, "name": "unet",
        "description": "A small U-Net for segmentation: 3 encoder blocks [conv3x3-BN-ReLU x2, "
                       "maxpool], a bottleneck, 3 decoder blocks [ConvTranspose2d, Concat with "
                       "the encoder block of the same size, conv3x3-BN-ReLU x2], a 1x1 Conv2d "
                       "giving a score per class for every pixel (set out.out_channels to your "
                       "classes). Data: a folder of images and a folder of PNG masks with the "
                       "same file stems, a mask's pixel value its class index, 255 ignored "
                       "(data/train/images and data/train/masks beside the project); name the "
                       "classes in data.classes, in index order.",
        "task": "segmentation",
        "model": build(len(TEMPLATE_CLASSES), 3, 128),
        "data": {
            "train": {"format": "mask_folders", "images": "data/train/images",
                      "masks": "data/train/masks"},
            "validation": {"fraction": 0.1, "seed": 0},
            "test": {"format": "mask_folders", "images": "data/test/images",
                     "masks": "data/test/masks"},
            "classes": TEMPLATE_CLASSES,
            "fit": "resize",
            "normalize": "auto",
            "on_error": "skip"},
        "augment": [{"transform": "HorizontalFlip", "p": 0.5}],
        "train": {"epochs": 20, "batch_size": 16,
                  "optimizer": {"type": "adam", "lr": 0.001, "weight_decay": 0.0},
                  "schedule": {"type": "cosine", "warmup_epochs": 0},
                  "seed": 0, "device": "cpu", "loss": "ce_dice", "monitor": "val_miou"}})
    write("resources/examples/scenes.netsmith.json", {
        "format": "netsmith-project", "version": 1, "name": "scenes",
        "description": "Segmentation: which Fashion-MNIST item each pixel of a 64x64 scene "
                       "belongs to. Make its data first: netsmith-cli make-dataset scenes --out "
                       "resources/examples/scenes",
        "task": "segmentation",
        "data": {
            "train": {"format": "mask_folders", "images": "scenes/train/images",
                      "masks": "scenes/train/masks"},
            "validation": {"fraction": 0.1, "seed": 0},
            "test": {"format": "mask_folders", "images": "scenes/test/images",
                     "masks": "scenes/test/masks"},
            "classes": SCENE_CLASSES,
            "colors": SCENE_COLORS,
            "on_error": "fail"},
        "augment": [{"transform": "HorizontalFlip", "p": 0.5}],
        "train": {"epochs": 15, "batch_size": 32,
                  "optimizer": {"type": "adam", "lr": 0.003, "weight_decay": 0.0},
                  "schedule": {"type": "cosine", "warmup_epochs": 0},
                  "seed": 0, "device": "cpu", "loss": "ce_dice", "monitor": "val_miou"},
        "model": build(len(SCENE_CLASSES), 1, 64)})


if __name__ == "__main__":
    sys.exit(main())
