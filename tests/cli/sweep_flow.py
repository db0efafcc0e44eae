#!/usr/bin/python3
"""Sweeps end to end with the real CLI on a small data set this script writes (4 classes of
28x28 images, a bright square in a class's quadrant):

1. a random sweep with ASHA (rungs at epochs 1 and 2 of 4), 2 trials at a time, runs to the end;
   every rung decision in its sweep.json is recomputed here from the recorded scores;
2. the same sweep is started again and killed with SIGKILL while a trial is between rungs; it is
   resumed with --resume and must end with the same trials, statuses and scores;
3. a grid sweep whose second trial cannot train (a 41x41 kernel on 28x28 images) records that
   trial as failed with its error, and the sweep goes on and finishes;
4. --apply-best writes the best trial's project, which validates and holds its settings;
5. a damaged sweep.json is refused with a message naming it.

    /usr/bin/python3 tests/cli/sweep_flow.py NETSMITH_CLI WORK_DIR
"""
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import time


def fail(msg):
    sys.exit("sweep_flow: " + msg)


def write_data(folder, n, seed):
    rng = random.Random(seed)
    images, labels = [], []
    for i in range(n):
        c = i % 4
        img = bytearray(rng.randrange(0, 160) for _ in range(28 * 28))
        y0, x0 = (c // 2) * 14 + rng.randrange(0, 5), (c % 2) * 14 + rng.randrange(0, 5)
        for y in range(y0, y0 + 8):
            for x in range(x0, x0 + 8):
                img[y * 28 + x] = min(255, img[y * 28 + x] + rng.randrange(0, 70))
        images.append(bytes(img))
        labels.append(c)
    with open(os.path.join(folder, "images.idx"), "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, 28, 28))
        for img in images:
            f.write(img)
    with open(os.path.join(folder, "labels.idx"), "wb") as f:
        f.write(struct.pack(">II", 0x801, n))
        f.write(bytes(labels))


def project(sweep, epochs):
    node = lambda i, op, params, inputs: {"id": i, "op": op, "params": params, "inputs": inputs}
    return {
        "format": "netsmith-project", "version": 1, "name": "sweepflow",
        "model": {"input": {"channels": 1, "height": 28, "width": 28}, "nodes": [
            node("input", "Input", {}, []),
            node("conv1", "Conv2d", {"out_channels": 6, "kernel_size": 3, "padding": 1}, ["input"]),
            node("relu1", "ReLU", {}, ["conv1"]),
            node("pool1", "MaxPool2d", {"kernel_size": 4}, ["relu1"]),
            node("flatten", "Flatten", {}, ["pool1"]),
            node("fc", "Linear", {"out_features": 4}, ["flatten"])]},
        "data": {"train": {"format": "idx", "images": "images.idx", "labels": "labels.idx"},
                 "validation": {"fraction": 0.25, "seed": 0, "stratified": True},
                 "normalize": {"mean": [0.3], "std": [0.3]}},
        "train": {"epochs": epochs, "batch_size": 16, "seed": 0,
                  "optimizer": {"type": "sgd", "lr": 0.01, "momentum": 0.9},
                  "schedule": {"type": "cosine"}},
        "sweep": sweep}


def run(cmd, expect=0):
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != expect:
        fail("%s exited %d, not %d:\n%s\n%s" % (" ".join(cmd), done.returncode, expect,
                                                done.stdout[-3000:], done.stderr[-3000:]))
    return done


def events(text):
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def only_dir(root):
    dirs = [d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))]
    if len(dirs) != 1:
        fail("expected one sweep folder in %s, found %s" % (root, dirs))
    return os.path.join(root, dirs[0])


def load_state(folder):
    with open(os.path.join(folder, "sweep.json")) as f:
        return json.load(f)


def outcome(state):
    return [(t["id"], t["params"], t["status"], t["epochs_done"], t["scores"])
            for t in state["trials"]]


def check_asha(state, reduction):
    """Each trial that reached a rung went on iff its score is within the best
    max(1, n // reduction) of the scores at that rung of the trials up to it."""
    decisions = 0
    for rung in (1, 2):
        for t in state["trials"]:
            key = str(rung)
            if key not in t["scores"] or t["max_epochs"] <= rung or t["status"] == "failed":
                continue
            ranked = sorted((u["scores"][key] for u in state["trials"][:t["id"] + 1]
                             if key in u["scores"]), reverse=True)
            cutoff = ranked[max(1, len(ranked) // reduction) - 1]
            expected = t["scores"][key] >= cutoff
            went_on = t["epochs_done"] > rung
            if expected != went_on:
                fail("trial %d at rung %d: score %s, cutoff %s, went on: %s" %
                     (t["id"], rung, t["scores"][key], cutoff, went_on))
            decisions += 1
    return decisions


def main():
    cli, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    write_data(work, 640, 7)
    asha = {"name": "asha", "method": "random", "seed": 3, "trials": 6,
            "objective": "val_accuracy", "asha": {"min_epochs": 1, "reduction": 2},
            "params": [{"path": "train.optimizer.lr", "log_uniform": [1e-4, 1.0]}]}
    path = os.path.join(work, "asha.netsmith.json")
    with open(path, "w") as f:
        json.dump(project(asha, 4), f)
    run([cli, "validate", path])

    # 1. Uninterrupted.
    a_root = os.path.join(work, "a")
    out = run([cli, "sweep", path, "--out", a_root, "--parallel", "2", "--threads", "1",
               "--json"]).stdout
    a = only_dir(a_root)
    state_a = load_state(a)
    if not state_a["finished"] or len(state_a["trials"]) != 6:
        fail("the sweep did not finish its 6 trials: %s" % json.dumps(state_a)[:2000])
    stopped = [t for t in state_a["trials"] if t["status"] == "stopped"]
    if not stopped or not all(t["note"].startswith("ASHA at epoch") for t in stopped):
        fail("ASHA stopped no trial: %s" % [(t["status"], t.get("note")) for t in state_a["trials"]])
    decisions = check_asha(state_a, 2)
    rung_events = [e for e in events(out) if e["event"] == "rung"]
    if len(rung_events) != decisions:
        fail("%d rung events printed, %d decisions in sweep.json" % (len(rung_events), decisions))
    epochs = sum(t["epochs_done"] for t in state_a["trials"])
    if epochs >= 6 * 4:
        fail("ASHA spent %d epochs, as many as running every trial to the end" % epochs)
    ended = [e for e in events(out) if e["event"] == "sweep_ended"]
    if not ended or ended[-1]["state"] != "finished" or ended[-1]["best"] is None:
        fail("no sweep_ended event with a best trial")
    print("uninterrupted: %d trials, %d stopped by ASHA, %d epochs, %d rung decisions checked" %
          (len(state_a["trials"]), len(stopped), epochs, decisions))

    # 2. Killed between rungs, resumed.
    b_root = os.path.join(work, "b")
    proc = subprocess.Popen([cli, "sweep", path, "--out", b_root, "--parallel", "2",
                             "--threads", "1", "--json"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    killed_at = None
    deadline = time.time() + 300
    while proc.poll() is None and time.time() < deadline and killed_at is None:
        time.sleep(0.02)
        if not os.path.isdir(b_root) or not os.listdir(b_root):
            continue
        b = only_dir(b_root)
        try:
            state = load_state(b)
        except (OSError, ValueError):
            continue
        for t in state["trials"]:
            if t["status"] != "running" or "run_dir" not in t:
                continue
            ev_path = os.path.join(b, t["run_dir"], "events.jsonl")
            try:
                with open(ev_path) as f:
                    done = f.read().count('"event":"epoch_end"')
            except OSError:
                continue
            if done >= 2:  # past its first two rungs' epochs: mid-way to its last
                killed_at = (t["id"], done)
                break
    if killed_at is None:
        proc.kill()
        fail("no trial was seen between rungs to kill the sweep at")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    b = only_dir(b_root)
    out = run([cli, "sweep", "--resume", b, "--json"]).stdout
    state_b = load_state(b)
    if outcome(state_a) != outcome(state_b):
        fail("the resumed sweep differs from the uninterrupted one:\n%s\n%s" %
             (json.dumps(outcome(state_a)), json.dumps(outcome(state_b))))
    resumed = [e for e in events(out) if e["event"] == "trial_started" and e["resumed"]]
    if not any(e["trial"] == killed_at[0] and e["from_epoch"] >= 2 for e in resumed):
        fail("trial %d was not resumed from its checkpoint: %s" % (killed_at[0], resumed))
    print("killed with trial %d after %d epochs; resumed: the same %d trials and scores" %
          (killed_at[0], killed_at[1], len(state_b["trials"])))

    # 3. A trial that fails does not stop the sweep.
    grid = {"name": "grid", "method": "grid", "trials": 10, "objective": "val_loss",
            "params": [{"path": "model.nodes[conv1].kernel_size", "choice": [3, 41, 5]}]}
    gpath = os.path.join(work, "grid.netsmith.json")
    with open(gpath, "w") as f:
        json.dump(project(grid, 1), f)
    g_root = os.path.join(work, "g")
    out = run([cli, "sweep", gpath, "--out", g_root, "--parallel", "1"]).stdout
    state_g = load_state(only_dir(g_root))
    statuses = [t["status"] for t in state_g["trials"]]
    if statuses != ["completed", "failed", "completed"] or not state_g["finished"]:
        fail("grid statuses %s" % statuses)
    error = state_g["trials"][1].get("error", "")
    if "conv1" not in error or "exited with status 2" not in error:
        fail("the failed trial's error does not say why: %r" % error)
    if "trial 1 failed" not in out:
        fail("the terminal does not report the failed trial:\n" + out[-2000:])
    print("grid: trial 1 failed (%s); the sweep went on" % error[:100])

    # 4. The best trial as a project.
    best_path = os.path.join(work, "best.netsmith.json")
    run([cli, "sweep", "--resume", a, "--apply-best", best_path])
    run([cli, "validate", best_path])
    completed = [t for t in state_a["trials"] if t["status"] == "completed"]
    best = max(completed, key=lambda t: t["scores"][str(t["epochs_done"])])
    with open(best_path) as f:
        written = json.load(f)
    if written["train"]["optimizer"]["lr"] != best["params"]["train.optimizer.lr"] or \
            "sweep" in written:
        fail("--apply-best wrote lr %s, the best trial (%d) has %s" %
             (written["train"]["optimizer"]["lr"], best["id"],
              best["params"]["train.optimizer.lr"]))
    run([cli, "sweep", "--resume", a, "--apply-best", best_path], expect=2)  # exists: --force
    print("best: trial %d, lr %.4g, written and valid" % (best["id"],
                                                          best["params"]["train.optimizer.lr"]))

    # 5. A damaged record.
    damaged = os.path.join(work, "damaged")
    shutil.copytree(a, damaged)
    with open(os.path.join(damaged, "sweep.json"), "w") as f:
        f.write('{"format": "netsmith-sweep", "version": 1, "name": "x", "parallel": 1, '
                '"trials": [{"id": 0, "status": "sleeping", "max_epochs": 4}]}')
    err = run([cli, "sweep", "--resume", damaged], expect=2).stderr
    if "sweep.json" not in err or "sleeping" not in err:
        fail("the damaged record's message: " + err)
    print("damaged sweep.json refused: " + err.strip().splitlines()[-1][:160])
    return 0


if __name__ == "__main__":
    sys.exit(main())
