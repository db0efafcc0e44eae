#!/usr/bin/python3
"""Whether a trained classifier's penultimate features can tell near-duplicate images from
distinct ones (the doctor finds near duplicates by a perceptual hash and the pictures'
correlation instead). Writes N Fashion-MNIST test images and, for the first 100, a copy shifted
by (2, 1) pixels and a copy cropped by 2 pixels a side and resized back; evaluates them with
CHECKPOINT through `eval --embedding` (the penultimate features); prints the cosine of each
distinct image's nearest distinct neighbour and of each copy to its original, after centring
the features on the distinct images' mean.

  /usr/bin/python3 bench/feature_duplicates.py build/release/app/netsmith-cli CHECKPOINT
      [--images 3000] [--work DIR]
"""
import argparse
import csv
import gzip
import json
import os
import subprocess
import sys
import tempfile

import cv2
import numpy as np

DATA = "/usr/share/datasets/fashion-mnist"
HERE = os.path.dirname(os.path.abspath(__file__))


def idx(name, offset, shape):
    with gzip.open(os.path.join(DATA, name)) as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset).reshape(shape)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("checkpoint")
    ap.add_argument("--images", type=int, default=3000)
    ap.add_argument("--work")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="feature-duplicates-")
    os.makedirs(os.path.join(work, "img"), exist_ok=True)
    images = idx("t10k-images-idx3-ubyte.gz", 16, (-1, 28, 28))
    labels = idx("t10k-labels-idx1-ubyte.gz", 8, (-1,))
    rows = ["path,label"]
    for i in range(a.images):
        cv2.imwrite(os.path.join(work, "img", "%d.png" % i), images[i])
        rows.append("img/%d.png,%d" % (i, labels[i]))
    for i in range(100):
        shifted = cv2.warpAffine(images[i], np.float32([[1, 0, 2], [0, 1, 1]]), (28, 28))
        cropped = cv2.resize(images[i][2:26, 2:26], (28, 28))
        cv2.imwrite(os.path.join(work, "img", "s%d.png" % i), shifted)
        cv2.imwrite(os.path.join(work, "img", "c%d.png" % i), cropped)
        rows += ["img/s%d.png,%d" % (i, labels[i]), "img/c%d.png,%d" % (i, labels[i])]
    with open(os.path.join(work, "m.csv"), "w") as f:
        f.write("\n".join(rows) + "\n")
    with open(os.path.join(HERE, "..", "resources", "examples", "fashion_mnist.netsmith.json")) as f:
        project = json.load(f)
    for key in ("images", "labels"):
        project["data"]["train"][key] = os.path.join(DATA, os.path.basename(
            project["data"]["train"][key]))
    project["data"]["test"] = {"format": "csv", "manifest": "m.csv"}
    with open(os.path.join(work, "p.json"), "w") as f:
        json.dump(project, f)
    out = os.path.join(work, "embedding.csv")
    subprocess.run([a.cli, "eval", a.checkpoint, "--data", os.path.join(work, "p.json"),
                    "--split", "test", "--embedding", out], check=True,
                   stdout=subprocess.DEVNULL)
    with open(out) as f:
        table = list(csv.reader(f))
    first = table[0].index("f0")
    sample = table[0].index("sample")
    features = np.array([[float(x) for x in r[first:]] for r in table[1:]])
    where = {os.path.basename(r[sample]): k for k, r in enumerate(table[1:])}
    distinct = [where["%d.png" % i] for i in range(a.images)]
    centred = features - features[distinct].mean(0)
    unit = centred / np.linalg.norm(centred, axis=1, keepdims=True)
    cos = unit[distinct] @ unit[distinct].T
    np.fill_diagonal(cos, -1)
    nearest = cos.max(1)
    q = lambda v: " ".join("%.3f" % x for x in np.quantile(v, [0, 0.1, 0.5, 0.9, 1]))
    print("%d distinct images, %d features" % (a.images, features.shape[1]))
    print("nearest distinct neighbour's cosine (min p10 median p90 max): " + q(nearest))
    for prefix, what in (("s", "shifted by (2, 1)"), ("c", "cropped 2 px and resized")):
        copies = np.array([unit[where["%s%d.png" % (prefix, i)]] @ unit[where["%d.png" % i]]
                           for i in range(100)])
        print("a copy %s to its original (min p10 median p90 max): %s" % (what, q(copies)))
    for t in (0.98, 0.99):
        print("distinct pairs above %.2f: %d" % (t, int((np.triu(cos, 1) > t).sum())))


if __name__ == "__main__":
    sys.exit(main())
