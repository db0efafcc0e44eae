#!/usr/bin/python3
"""Grid against ASHA on the same learning-rate range, with the real CLI (issue 21's figure).

Runs `netsmith-cli sweep` twice on a sweep project (by default
resources/examples/fashion_mnist_lr_sweep.netsmith.json, Adam on Fashion-MNIST, lr
log-uniform over 1e-5..1, 9 epochs):

- grid: the range's `grid_points` log-spaced values, every trial trained to the end;
- ASHA: the project's own sweep (random trials, early stopping at the rungs).

Both with the same training and validation limits, parallel trials and threads. Prints, from
each sweep's own sweep.json: the best trial's objective and settings, the epochs trained in
all, the trials stopped early, and the wall time.

    /usr/bin/python3 bench/sweep_compare.py [--cli build/release/app/netsmith-cli]
        [--project P] [--limit-train 6000] [--limit-val 2000] [--parallel 2] [--work DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import time


def run_sweep(cli, project, args, root):
    start = time.time()
    cmd = [cli, "sweep", project, "--out", root, "--parallel", str(args.parallel),
           "--limit-train", str(args.limit_train), "--limit-val", str(args.limit_val)]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.time() - start
    if done.returncode != 0:
        sys.exit("sweep_compare: %s failed:\n%s" % (" ".join(cmd), done.stdout[-3000:]))
    folders = sorted(os.listdir(root))
    with open(os.path.join(root, folders[-1], "sweep.json")) as f:
        state = json.load(f)
    return state, wall


def summary(name, state, wall, maximize):
    scored = [t for t in state["trials"] if t["status"] == "completed" and
              t["objective"] is not None]
    best = (max if maximize else min)(scored, key=lambda t: t["objective"])
    epochs = sum(t["epochs_done"] for t in state["trials"])
    stopped = sum(t["status"] == "stopped" for t in state["trials"])
    lr = ", ".join("%s=%.3g" % (k, v) if isinstance(v, float) else "%s=%s" % (k, v)
                   for k, v in best["params"].items())
    print("%-5s %2d trials, %2d stopped early, %3d epochs, %6.1f min; best: trial %d, "
          "objective %.4f (%s)" % (name, len(state["trials"]), stopped, epochs, wall / 60,
                                   best["id"], best["objective"], lr))
    return best["objective"], epochs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default="build/release/app/netsmith-cli")
    ap.add_argument("--project", default="resources/examples/fashion_mnist_lr_sweep.netsmith.json")
    ap.add_argument("--limit-train", type=int, default=6000)
    ap.add_argument("--limit-val", type=int, default=2000)
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--work", default="/tmp/netsmith-sweep-compare")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    with open(args.project) as f:
        project = json.load(f)
    base_dir = os.path.dirname(os.path.abspath(args.project))
    for split in ("train", "validation", "test"):
        source = project.get("data", {}).get(split, {})
        for key in ("images", "labels", "root", "manifest"):
            if key in source and not os.path.isabs(source[key]):
                source[key] = os.path.join(base_dir, source[key])
    sweep = project["sweep"]
    maximize = sweep.get("mode", "max" if "accuracy" in sweep.get("objective",
                                                                   "val_accuracy") else "min") == "max"
    grid = json.loads(json.dumps(project))
    grid["sweep"].pop("asha", None)
    grid["sweep"]["method"] = "grid"
    grid["sweep"]["name"] = sweep.get("name", "sweep") + "-grid"
    grid_path = os.path.join(args.work, "grid.netsmith.json")
    with open(grid_path, "w") as f:
        json.dump(grid, f, indent=1)
    print("%s: %s, %d training and %d validation images, %d trials at a time" %
          (args.project, sweep["params"], args.limit_train, args.limit_val, args.parallel))
    g_state, g_wall = run_sweep(args.cli, grid_path, args, os.path.join(args.work, "grid"))
    g_best, g_epochs = summary("grid", g_state, g_wall, maximize)
    a_state, a_wall = run_sweep(args.cli, args.project, args, os.path.join(args.work, "asha"))
    a_best, a_epochs = summary("ASHA", a_state, a_wall, maximize)
    print("ASHA's best is %.2f points %s the grid's, for %.0f%% of its epochs" %
          (abs(a_best - g_best) * 100, "above" if (a_best > g_best) == maximize else "below",
           100.0 * a_epochs / g_epochs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
