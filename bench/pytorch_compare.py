#!/usr/bin/python3
"""Training images/s: `netsmith-cli bench` against the same network in Python PyTorch.

Both sides train the same model at the same batch size, optimizer and thread count on one
random batch of the model's input shape, fed again and again:

- Netsmith: `netsmith-cli bench PROJECT --json`, which times the trainer's own batch code
  (forward, loss, the batch's loss and accuracy, backward, gradient norms, optimizer step).
- Python: Netsmith's own export of the model (`export --pytorch`, a plain nn.Module), trained by
  the usual loop: zero_grad, forward, cross_entropy, loss.item() and the batch accuracy,
  backward, clip_grad_norm_ (the gradient norm, as Netsmith computes it every step), step.

Rounds alternate between the two (this machine's figures drift by ~15%), and the medians and
their ratio are printed. Needs Debian's python3-torch: run it with /usr/bin/python3.

    /usr/bin/python3 bench/pytorch_compare.py [--cli build/release/app/netsmith-cli]
        [--rounds 5] [--steps 30] [--threads 2] [--batch-size 128]
        [--python-channels-last no|as-project|yes] [PROJECT ...]

Netsmith runs in the memory format the project names (`train.channels_last`; the small ResNet
template uses channels-last). The Python side runs model.py as it is written (NCHW) unless
--python-channels-last says otherwise; the table names both.

With no PROJECT: the default project, the small ResNet template (trained on a generated
CIFAR-10 batch of random images, since the template names no data that exists here) and the
scenes example's U-Net (segmentation: per-pixel cross-entropy and Dice on both sides, on a small
`make-dataset scenes` when its data is not there).
"""
import argparse
import copy
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd):
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit("pytorch_compare: %s failed (%d):\n%s%s" %
                 (" ".join(cmd), done.returncode, done.stdout, done.stderr))
    return done.stdout


def with_generated_cifar(project_path, work):
    """A copy of the project whose data is one CIFAR-10 batch of random images."""
    with open(project_path) as f:
        project = json.load(f)
    batch = os.path.join(work, "data_batch_1.bin")
    gen = torch.Generator().manual_seed(0)
    with open(batch, "wb") as f:
        for r in range(1000):
            f.write(bytes([r % 10]))
            f.write(torch.randint(0, 256, (3072,), generator=gen, dtype=torch.uint8).numpy().tobytes())
    project["data"] = {"train": {"format": "cifar10", "files": [batch]},
                       "validation": {"fraction": 0.1, "seed": 0}}
    path = os.path.join(work, os.path.basename(project_path))
    with open(path, "w") as f:
        json.dump(project, f)
    return path


def with_generated_scenes(cli, project_path, work):
    """A copy of a segmentation project reading a small generated scenes data set."""
    with open(project_path) as f:
        project = json.load(f)
    data = os.path.join(work, "scenes")
    run([cli, "make-dataset", "scenes", "--out", data, "--train", "256", "--test", "32"])
    for split in ("train", "test"):
        if split in project["data"]:
            project["data"][split]["images"] = os.path.join(data, split, "images")
            project["data"][split]["masks"] = os.path.join(data, split, "masks")
    path = os.path.join(work, os.path.basename(project_path))
    with open(path, "w") as f:
        json.dump(project, f)
    return path


def dice_loss(logits, y):
    """Netsmith's Dice loss (task/segmentation.cpp), written out in PyTorch."""
    valid = (y != 255).unsqueeze(1).float()
    probs = torch.softmax(logits, 1) * valid
    onehot = F.one_hot(y.masked_fill(y == 255, 0), logits.shape[1]).permute(0, 3, 1, 2).float()
    onehot = onehot * valid
    inter = (probs * onehot).sum((0, 2, 3))
    denom = probs.sum((0, 2, 3)) + onehot.sum((0, 2, 3))
    return 1 - ((2 * inter + 1) / (denom + 1)).mean()


def exported_model(cli, project, work, threads):
    """Netsmith's own model.py for the project (from a one-batch checkpoint)."""
    runs = os.path.join(work, "runs")
    run([cli, "train", project, "--max-batches", "1", "--limit-train", "512", "--out", runs,
         "--threads", str(threads)])
    run_dir = os.path.join(runs, sorted(os.listdir(runs))[-1])
    model_py = os.path.join(work, "model.py")
    run([cli, "export", os.path.join(run_dir, "checkpoints", "last.safetensors"),
         "--pytorch", model_py])
    spec = importlib.util.spec_from_file_location("netsmith_model_%d" % id(work), model_py)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_optimizer(params, train):
    opt = train.get("optimizer", "adam")
    opt = {"type": opt} if isinstance(opt, str) else opt
    kind = opt.get("type", "adam").lower()
    lr = opt.get("lr", 1e-3)
    wd = opt.get("weight_decay", 0.0)
    if kind == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=opt.get("momentum", 0.0), weight_decay=wd)
    if kind == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=wd)
    return torch.optim.Adam(params, lr=lr, weight_decay=wd)


def python_rate(module, train, batch, steps, channels_last=False, warmup=2, task=None):
    torch.manual_seed(0)
    model = module.Model()
    model.train()
    c, h, w = module.INPUT_SIZE
    x = torch.randn(batch, c, h, w)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = make_optimizer(params, train)
    classes = model(x[:2]).shape[1]
    segmentation = task == "segmentation"
    y = torch.randint(0, classes, (batch, h, w) if segmentation else (batch,))
    kind = train.get("loss", "auto")
    clip = train.get("clip_grad_norm", 0) or float("inf")
    start = time.perf_counter()
    for i in range(warmup + steps):
        if i == warmup:
            start = time.perf_counter()
        optimizer.zero_grad()
        logits = model(x)
        if segmentation and kind == "dice":
            loss = dice_loss(logits, y)
        else:
            loss = F.cross_entropy(logits, y, ignore_index=255 if segmentation else -100,
                                   label_smoothing=train.get("label_smoothing", 0.0))
            if segmentation and kind == "ce_dice":
                loss = loss + dice_loss(logits, y)
        loss_value = loss.item()
        correct = (logits.argmax(1) == y).sum().item()
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(params, clip)
        optimizer.step()
    del loss_value, correct, norm
    return batch * steps / (time.perf_counter() - start)


def netsmith_rate(cli, project, batch, steps, threads):
    out = run([cli, "bench", project, "--json", "--steps", str(steps), "--batch-size", str(batch),
               "--threads", str(threads)])
    return json.loads(out)["synthetic_images_per_second"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("projects", nargs="*")
    ap.add_argument("--cli", default=os.path.join(ROOT, "build/release/app/netsmith-cli"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--python-channels-last", choices=["no", "as-project", "yes"], default="no",
                    help="Python's memory format: NCHW as model.py is written (no), the "
                         "project's train.channels_last (as-project), or channels-last (yes)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    projects = args.projects or [
        os.path.join(ROOT, "resources/examples/fashion_mnist.netsmith.json"),
        os.path.join(ROOT, "resources/templates/small_resnet.netsmith.json"),
        os.path.join(ROOT, "resources/examples/scenes.netsmith.json")]
    print("PyTorch %s, %d threads, batch %d, %d timed steps, %d alternating rounds"
          % (torch.__version__, args.threads, args.batch_size, args.steps, args.rounds))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, path in enumerate(projects):
            work = os.path.join(tmp, str(k))
            os.makedirs(work)
            with open(path) as f:
                project = json.load(f)
            data = project.get("data", {}).get("train", {})
            data_path = data.get("root") or data.get("images") or data.get("manifest") or ""
            if data_path and not os.path.isabs(data_path):
                data_path = os.path.join(os.path.dirname(path), data_path)
            if data and not os.path.exists(data_path) and data.get("format") == "mask_folders":
                path = with_generated_scenes(args.cli, path, work)
            elif data and not os.path.exists(data_path) and data.get("format") != "cifar10":
                path = with_generated_cifar(path, work)
            module = exported_model(args.cli, path, work, args.threads)
            train = copy.deepcopy(project.get("train", {}))
            ours_cl = bool(train.get("channels_last", False))
            theirs_cl = {"no": False, "yes": True, "as-project": ours_cl}[args.python_channels_last]
            ours, theirs = [], []
            for _ in range(args.rounds):
                ours.append(netsmith_rate(args.cli, path, args.batch_size, args.steps, args.threads))
                theirs.append(python_rate(module, train, args.batch_size, args.steps, theirs_cl,
                                          task=project.get("task")))
            rows.append((project.get("name", path), statistics.median(ours),
                         statistics.median(theirs), ours, theirs, ours_cl, theirs_cl))
    print("\n%-16s %14s %14s %7s  %s" % ("model", "Netsmith img/s", "PyTorch img/s", "ratio",
                                         "memory format (Netsmith / PyTorch)"))
    fmt = lambda cl: "channels-last" if cl else "NCHW"
    for name, ours, theirs, all_ours, all_theirs, ours_cl, theirs_cl in rows:
        print("%-16s %14.1f %14.1f %6.2fx  %s / %s" % (name, ours, theirs, ours / theirs,
                                                      fmt(ours_cl), fmt(theirs_cl)))
        print("  rounds: Netsmith %s | PyTorch %s" % (" ".join("%.0f" % v for v in all_ours),
                                                       " ".join("%.0f" % v for v in all_theirs)))


if __name__ == "__main__":
    main()
