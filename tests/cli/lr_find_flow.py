#!/usr/bin/python3
"""lr-find's rule, tested by training: on several projects with the real CLI on Fashion-MNIST
(LeNet-5 with SGD and momentum; the small CNN with Adam and label smoothing, without and with
MixUp; the default project, Adam with BatchNorm), lr-find is run, then the project is trained
for 2 epochs on 6,400 images at the suggestion, at a tenth of it and at ten times it, and tested
on 2,000 images. The suggestion must train at least as well as both (within 2 points): a rule
that suggests too much (the last one picked 8e-3 for Adam, which trains worse than 8e-4) or too
little fails here.

Each test figure is read from the run's own record (the `finished` event of events.jsonl) and
recomputed from its confusion matrix, and must equal the one the CLI printed. Prints the table.
Exit 77 (skipped) without the Fashion-MNIST package.

    /usr/bin/python3 tests/cli/lr_find_flow.py NETSMITH_CLI SOURCE_DIR WORK_DIR [PART]

PART runs one project alone: its index, or the index and "low" or "high" for the comparison
with a tenth or with ten times the suggestion alone (ctest runs each part as its own test, so
that no test runs for minutes and two run side by side; the default project, the slowest, is
split in two).
"""
import glob
import json
import os
import shutil
import sys

import flow_support

FMNIST = "/usr/share/datasets/fashion-mnist"
MARGIN = 2.0  # accuracy points


def run(cmd):
    return flow_support.run("lr_find_flow", cmd)


def projects(source):
    def load(path):
        with open(os.path.join(source, path)) as f:
            return json.load(f)
    lenet = load("resources/templates/lenet5.netsmith.json")
    cnn = load("resources/templates/fashion_mnist_cnn.netsmith.json")
    mixup = load("resources/templates/fashion_mnist_cnn.netsmith.json")
    mixup["augment"].append({"transform": "MixUp", "alpha": 0.4})
    default = load("resources/examples/fashion_mnist.netsmith.json")
    return [("lenet5 sgd", lenet), ("small cnn adam", cnn), ("small cnn adam mixup", mixup),
            ("default adam", default)]


def trained_accuracy(cli, project, lr, out):
    shutil.rmtree(out, ignore_errors=True)
    printed = run([cli, "train", project, "--lr", repr(lr), "--epochs", "2", "--limit-train",
                   "6400", "--limit-test", "2000", "--out", out])
    printed_percent, printed_images = flow_support.printed_test_accuracy("lr_find_flow", printed)
    runs = glob.glob(os.path.join(out, "*", "events.jsonl"))
    if len(runs) != 1:
        sys.exit("lr_find_flow: expected one run folder in %s, found %d" % (out, len(runs)))
    finished = None
    with open(runs[0]) as f:
        for line in f:
            event = json.loads(line)
            if event.get("event") == "finished":
                finished = event
    if finished is None or "test" not in finished:
        sys.exit("lr_find_flow: %s has no finished event with a test figure" % runs[0])
    confusion = finished["test"]["confusion"]
    total = sum(sum(row) for row in confusion)
    recomputed = 100.0 * sum(confusion[i][i] for i in range(len(confusion))) / total
    if total != 2000 or printed_images != 2000:
        sys.exit("lr_find_flow: tested %d images (printed %d), expected 2000" % (total,
                                                                                printed_images))
    if abs(recomputed - 100.0 * finished["test"]["accuracy"]) > 1e-9 or \
            abs(recomputed - printed_percent) > 0.005:
        sys.exit("lr_find_flow: printed %.2f%%, recorded %.4f, confusion matrix gives %.4f%%" %
                 (printed_percent, finished["test"]["accuracy"], recomputed))
    return recomputed


def main():
    cli, source, work = sys.argv[1], sys.argv[2], sys.argv[3]
    if not os.path.exists(os.path.join(FMNIST, "train-images-idx3-ubyte.gz")):
        print("SKIPPED: no Fashion-MNIST (dataset-fashion-mnist)")
        return 77
    os.makedirs(work, exist_ok=True)
    failures = []
    print("%-22s %10s %10s  %8s %8s %8s" % ("project", "suggested", "lowest", "x0.1", "x1",
                                              "x10"))
    only, factors = None, (0.1, 10)
    if len(sys.argv) > 4:
        part = sys.argv[4]
        digits = part.rstrip("lowhig")
        only = int(digits)
        factors = {"": (0.1, 10), "low": (0.1,), "high": (10,)}[part[len(digits):]]
    for index, (name, project) in enumerate(projects(source)):
        if only is not None and index != only:
            continue
        path = os.path.join(work, "p%d.netsmith.json" % index)
        with open(path, "w") as f:
            json.dump(project, f)
        found = json.loads(run([cli, "lr-find", path, "--limit-train", "6400",
                                "--json"]).strip().splitlines()[-1])
        suggested, lowest = found["suggested_lr"], found["min_loss_lr"]
        acc = {}
        for factor in (1,) + factors:
            acc[factor] = trained_accuracy(cli, path, suggested * factor,
                                           os.path.join(work, "p%d_x%g" % (index, factor)))
        shown = ["%7.2f%%" % acc[f] if f in acc else "%8s" % "-" for f in (0.1, 1, 10)]
        print("%-22s %10.3g %10.3g  %s" % (name, suggested, lowest, " ".join(shown)),
              flush=True)
        if not suggested < lowest:
            failures.append("%s: the suggestion %.3g is not below the lowest loss's LR %.3g" %
                            (name, suggested, lowest))
        for factor in factors:
            if acc[1] < acc[factor] - MARGIN:
                failures.append("%s: the suggestion %.3g trains to %.2f%%, %gx it to %.2f%%" %
                                (name, suggested, acc[1], factor, acc[factor]))
    if failures:
        sys.exit("lr_find_flow:\n  " + "\n  ".join(failures))
    against = " and ".join({0.1: "a tenth of it", 10: "ten times it"}[f] for f in factors)
    print("lr_find_flow: the suggestion trains at least as well as %s on %s" %
          (against, "every project" if only is None else projects(source)[only][0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
