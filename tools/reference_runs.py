#!/usr/bin/env python3
"""Short deterministic runs of each task, recorded so that two builds can be compared.

A change that should not move a figure (a refactoring) is checked by recording the runs with
the build before it and again with the build after it, on the same machine, and comparing:

    tools/reference_runs.py record --cli OLD/netsmith-cli --out /tmp/ref-before
    tools/reference_runs.py record --cli NEW/netsmith-cli --out /tmp/ref-after
    tools/reference_runs.py compare /tmp/ref-before /tmp/ref-after

`record` trains the default project (Fashion-MNIST) and the multi-label, regression,
segmentation and detection examples on small data that it makes with the CLI's own
make-dataset, one thread each and a fixed seed, then keeps from each run's events.jsonl every
figure the run reports: per batch (loss, the task's figure, LR, gradient norm, the fp16 loss
scale), per epoch (training and validation figures) and the test figures. Timings, memory and
throughput are left out, and so are figures written as null (the same as not written). `compare` prints every figure that differs, and exits 1 if any does.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "resources", "examples")

# (name, example project, data made by make-dataset or None for the installed Fashion-MNIST)
RUNS = [
    ("classification", "fashion_mnist.netsmith.json", None),
    ("multilabel", "mosaics.netsmith.json", "mosaics"),
    ("regression", "rotations.netsmith.json", "rotations"),
    ("segmentation", "scenes.netsmith.json", "scenes"),
    ("detection", "scenes_detection.netsmith.json", "scenes"),
]
TRAIN_FLAGS = ["--epochs", "2", "--batch-size", "32", "--seed", "7", "--threads", "1",
               "--limit-train", "256", "--limit-val", "64", "--limit-test", "64"]
# What a run's events say that depends on the machine's speed, not on the figures.
UNTIMED = {"time", "seconds", "run_seconds", "images_per_second", "memory", "path", "message",
           "device", "duration_seconds", "eta_seconds", "dropped_batch_events", "level",
           "skipped_before", "run_dir", "reason", "test_checkpoint"}


def figures_of(value):
    """The event without its timings, as nested dicts and lists. A figure written as null (a
    batch without one) is left out, as a figure not written at all is: the two say the same."""
    if isinstance(value, dict):
        return {k: figures_of(v) for k, v in value.items() if k not in UNTIMED and v is not None}
    if isinstance(value, list):
        return [figures_of(v) for v in value]
    return value


def run_cli(cli, args, cwd):
    result = subprocess.run([cli] + args, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=1800)
    if result.returncode != 0:
        sys.exit(f"{' '.join([cli] + args)} (in {cwd}) failed ({result.returncode}):\n"
                 f"{result.stdout[-4000:]}")
    return result.stdout


def record(cli, out):
    cli = os.path.abspath(cli)
    out = os.path.abspath(out)
    work = os.path.join(out, "work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    made = set()
    for name, example, data in RUNS:
        if data and data not in made:
            run_cli(cli, ["make-dataset", data, "--out", os.path.join(work, data),
                          "--train", "160", "--test", "64"], work)
            made.add(data)
        project = os.path.join(work, example)
        shutil.copyfile(os.path.join(EXAMPLES, example), project)
        runs = os.path.join(work, "runs-" + name)
        run_cli(cli, ["train", project, "--out", runs] + TRAIN_FLAGS, work)
        (folder,) = [os.path.join(runs, d) for d in os.listdir(runs)]
        events = []
        with open(os.path.join(folder, "events.jsonl")) as f:
            for line in f:
                event = json.loads(line)
                if event.get("event") in ("batch_end", "epoch_end", "finished"):
                    events.append(figures_of(event))
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(events, f, indent=1, sort_keys=True)
        batches = sum(1 for e in events if e.get("event") == "batch_end")
        print(f"{name}: {batches} batches, {len(events) - batches} other events -> "
              f"{os.path.join(out, name + '.json')}")


def differences(a, b, where=""):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                yield f"{where}.{k}: only in {'the first' if k in a else 'the second'}"
            else:
                yield from differences(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield f"{where}: {len(a)} items against {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            yield from differences(x, y, f"{where}[{i}]")
    elif a != b:
        yield f"{where}: {a!r} against {b!r}"


def compare(first, second):
    total = 0
    for name, _, _ in RUNS:
        paths = [os.path.join(d, name + ".json") for d in (first, second)]
        if not all(os.path.exists(p) for p in paths):
            print(f"{name}: missing in one of the two records")
            total += 1
            continue
        a, b = (json.load(open(p)) for p in paths)
        found = list(differences(a, b, name))
        for line in found[:20]:
            print(line)
        if len(found) > 20:
            print(f"{name}: {len(found) - 20} more differences")
        batches = sum(1 for e in a if e.get("event") == "batch_end")
        print(f"{name}: {len(found)} differences over {batches} batches and "
              f"{len(a) - batches} other events")
        total += len(found)
    print(f"{total} differences in all")
    return 1 if total else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="verb", required=True)
    r = sub.add_parser("record", help="train the reference runs and keep their figures")
    r.add_argument("--cli", required=True, help="the netsmith-cli to record with")
    r.add_argument("--out", required=True, help="the folder to write <task>.json into")
    c = sub.add_parser("compare", help="compare two records; exit 1 on any difference")
    c.add_argument("first")
    c.add_argument("second")
    args = parser.parse_args()
    if args.verb == "record":
        record(args.cli, args.out)
        return 0
    return compare(args.first, args.second)


if __name__ == "__main__":
    sys.exit(main())
