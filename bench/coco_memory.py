#!/usr/bin/python3
"""Peak memory of reading a large COCO instances file: writes FILE of about --mb megabytes (two
64x64 images, ten categories, and as many box annotations as fit, each with a segmentation
polygon, as COCO's own files carry), then runs `data-stats` on a detection project reading it
under /usr/bin/time and prints the file's size, the annotations and the peak resident memory.
A second file of --mb megabytes of `licenses` entries (a member the reader skips) shows the
memory of what is skipped.

  /usr/bin/python3 bench/coco_memory.py build/release/app/netsmith-cli [--mb 400] [--work DIR]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def write_coco(path, megabytes, skipped):
    target = megabytes * 1_000_000
    categories = [{"id": c + 1, "name": "c%d" % c, "supercategory": "thing"} for c in range(10)]
    images = [{"id": i + 1, "file_name": "%d.png" % i, "width": 64, "height": 64}
              for i in range(2)]
    count = 0
    with open(path, "w") as f:
        f.write('{"info": {"description": "bench"}, "images": %s, "categories": %s, '
                % (json.dumps(images), json.dumps(categories)))
        if skipped:
            f.write('"annotations": [], "licenses": [')
            line = json.dumps({"id": 1, "name": "x" * 60, "url": "http://example.invalid/"})
        else:
            f.write('"annotations": [')
        written = f.tell()
        first = True
        while written < target:
            if skipped:
                item = line
            else:
                x, y = count % 40, (count // 40) % 40
                item = json.dumps({"id": count + 1, "image_id": 1 + count % 2,
                                   "category_id": 1 + count % 10, "bbox": [x, y, 12, 10],
                                   "area": 120, "iscrowd": 0,
                                   "segmentation": [[x, y, x + 12, y, x + 12, y + 10, x, y + 10]]})
            chunk = ("" if first else ",") + item
            f.write(chunk)
            written += len(chunk)
            first = False
            count += 1
        f.write("]}")
    return count


def measure(cli, work, name, megabytes, skipped):
    coco = os.path.join(work, name + ".json")
    count = write_coco(coco, megabytes, skipped)
    with open(os.path.join(HERE, "..", "resources/examples/scenes_detection.netsmith.json")) as f:
        project = json.load(f)
    for split in ("train", "test"):
        project["data"][split] = {"format": "coco", "images": os.path.join(work, "images"),
                                  "annotations": coco}
    path = os.path.join(work, name + ".netsmith.json")
    with open(path, "w") as f:
        json.dump(project, f)
    done = subprocess.run(["/usr/bin/time", "-v", cli, "data-stats", path],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stdout)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", done.stdout)
    print("%-22s file %7.1f MB, %9d %s: exit %d, peak memory %7.1f MB, %s wall" % (
        name, os.path.getsize(coco) / 1e6, count, "skipped entries" if skipped else "annotations",
        done.returncode, int(peak.group(1)) / 1024 if peak else float("nan"),
        wall.group(1) if wall else "?"))
    if done.returncode != 0:
        print(done.stdout[-2000:])
    os.remove(coco)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cli")
    parser.add_argument("--mb", type=int, default=400)
    parser.add_argument("--work", default=None)
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="coco-memory-")
    os.makedirs(os.path.join(work, "images"), exist_ok=True)
    for i in range(2):
        cv2.imwrite(os.path.join(work, "images", "%d.png" % i), np.full((64, 64), 40 * i, np.uint8))
    measure(os.path.abspath(args.cli), work, "annotations", args.mb, False)
    measure(os.path.abspath(args.cli), work, "skipped-member", args.mb, True)


if __name__ == "__main__":
    sys.exit(main())
