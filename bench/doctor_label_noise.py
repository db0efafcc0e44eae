#!/usr/bin/python3
"""The data doctor on Fashion-MNIST's training images with a share of their labels flipped at
random (seeded): how many of the flipped samples the doctor ranks among its most suspicious,
and how long it took. Prints the figures; README quotes them.

  /usr/bin/python3 bench/doctor_label_noise.py build/release/app/netsmith-cli [--limit N]
      [--noise 0.05] [--folds 3] [--epochs 2] [--work DIR]

The flipped labels are written as an IDX file in DIR beside a copy of the default project that
reads them; the doctor's label_ranking.csv is checked against the list of flipped samples,
which the doctor never sees.
"""
import argparse
import csv
import gzip
import json
import os
import struct
import subprocess
import sys
import time

import numpy as np

DATA = "/usr/share/datasets/fashion-mnist"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--noise", type=float, default=0.05)
    ap.add_argument("--folds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", default="/tmp/netsmith-doctor-bench")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    with gzip.open(os.path.join(DATA, "train-labels-idx1-ubyte.gz")) as f:
        raw = f.read()
    labels = np.frombuffer(raw, np.uint8, offset=8).copy()
    n = len(labels)
    rng = np.random.default_rng(a.seed)
    flipped = rng.choice(n, int(round(a.noise * n)), replace=False)
    for i in flipped:
        labels[i] = (labels[i] + rng.integers(1, 10)) % 10  # any other class
    with open(os.path.join(a.work, "noisy-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 2049, n) + labels.tobytes())
    here = os.path.dirname(os.path.abspath(__file__))
    project = json.load(open(os.path.join(here, "..", "resources", "examples",
                                          "fashion_mnist.netsmith.json")))
    project["name"] = "fashion_mnist_noisy"
    project["data"]["train"]["labels"] = os.path.join(a.work, "noisy-labels-idx1-ubyte")
    path = os.path.join(a.work, "noisy.netsmith.json")
    json.dump(project, open(path, "w"), indent=1)
    out = os.path.join(a.work, "doctor")
    subprocess.run(["rm", "-rf", out], check=True)
    cmd = [a.cli, "doctor", path, "--out", out, "--folds", str(a.folds), "--epochs",
           str(a.epochs), "--seed", str(a.seed)]
    if a.limit:
        cmd += ["--limit", str(a.limit)]
    t0 = time.time()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    seconds = time.time() - t0
    ranked = [int(r["index"]) for r in csv.DictReader(open(os.path.join(out,
                                                                         "label_ranking.csv")))]
    examined = set(ranked)
    truth = {int(i) for i in flipped} & examined
    top = set(ranked[: int(round(a.noise * len(ranked)))])
    found = len(top & truth)
    flagged = sum(1 for r in csv.DictReader(open(os.path.join(out, "label_ranking.csv")))
                  if r["flagged"] == "1")
    print(f"examined {len(ranked)} samples, {len(truth)} with flipped labels "
          f"({a.noise:.0%}, seed {a.seed})")
    print(f"the doctor's most suspicious {len(top)} hold {found} of them: "
          f"{found / max(1, len(truth)):.1%} (precision {found / max(1, len(top)):.1%})")
    print(f"flagged by confident learning: {flagged}")
    print(f"time: {seconds:.0f} s ({a.folds} folds x {a.epochs} epochs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
