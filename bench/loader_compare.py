#!/usr/bin/python3
"""Loader images/s per thread: Netsmith's loader against torchvision on the same JPEG files.

The pipeline is the 224x224 one of `loader_bench` (decode, RandomResizedCrop, horizontal flip,
ColorJitter 0.4/0.4/0.4, normalise, to a float CHW tensor) on 256 JPEGs of 400x300 that
`loader_bench --jpeg-dir` writes once:

- Netsmith: `loader_bench --jpeg-only --jpeg-dir DIR`, its "1 worker" figure (one loader
  thread; OpenCV's own threads held to 1 with OPENCV_FOR_THREADS_NUM=1);
- torchvision: ImageFolder with RandomResizedCrop(224), RandomHorizontalFlip(),
  ColorJitter(0.4, 0.4, 0.4), ToTensor(), Normalize(...), read in a plain loop on one thread
  (torch.set_num_threads(1); PIL decodes on the calling thread).

Rounds alternate and the medians and their ratio are printed. Needs Debian's python3-torch and
python3-torchvision: run it with /usr/bin/python3.

    /usr/bin/python3 bench/loader_compare.py [--bench build/release/bench/loader_bench]
        [--rounds 5] [--batches 60]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torchvision
from torchvision import datasets, transforms as T

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def netsmith_rate(bench, folder, batches):
    env = dict(os.environ, OPENCV_FOR_THREADS_NUM="1")
    done = subprocess.run([bench, "--jpeg-only", "--jpeg-dir", folder, "--batches", str(batches)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if done.returncode != 0:
        sys.exit("loader_compare: loader_bench failed (%d):\n%s%s"
                 % (done.returncode, done.stdout, done.stderr))
    m = re.search(r"loader, 1 worker:\s+([0-9.]+) images/s", done.stdout)
    if not m:
        sys.exit("loader_compare: no '1 worker' figure in:\n" + done.stdout)
    return float(m.group(1))


def torchvision_rate(folder, images):
    tf = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(),
                    T.ColorJitter(0.4, 0.4, 0.4), T.ToTensor(),
                    T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    ds = datasets.ImageFolder(folder, transform=tf)
    ds[0]  # warm up
    start = time.perf_counter()
    for i in range(images):
        x, _ = ds[i % len(ds)]
        assert x.shape == (3, 224, 224)
    return images / (time.perf_counter() - start)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", default=os.path.join(ROOT, "build/release/bench/loader_bench"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--batches", type=int, default=60, help="batches of 32 per Netsmith round")
    args = ap.parse_args()
    torch.set_num_threads(1)
    ours, theirs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "jpegs")
        for _ in range(args.rounds):
            ours.append(netsmith_rate(args.bench, folder, args.batches))
            theirs.append(torchvision_rate(folder, 32 * args.batches // 2))
        files = sum(len(f) for _, _, f in os.walk(folder))
    print("torch %s, torchvision %s; %d JPEGs of 400x300 -> 3x224x224; one thread each; "
          "%d alternating rounds" % (torch.__version__, torchvision.__version__, files, args.rounds))
    print("%-12s %10s" % ("", "images/s"))
    print("%-12s %10.0f   rounds: %s" % ("Netsmith", statistics.median(ours),
                                          " ".join("%.0f" % v for v in ours)))
    print("%-12s %10.0f   rounds: %s" % ("torchvision", statistics.median(theirs),
                                          " ".join("%.0f" % v for v in theirs)))
    print("ratio %.2fx" % (statistics.median(ours) / statistics.median(theirs)))
    # The least disturbed round of each side: on a shared machine a side's figure can drop for
    # a few rounds (page faults cost more at times), and the best rounds compare the two at rest.
    print("ratio of the best rounds %.2fx (%.0f / %.0f)" % (max(ours) / max(theirs), max(ours),
                                                            max(theirs)))


if __name__ == "__main__":
    main()
