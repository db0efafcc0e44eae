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
their ratio are printed. Needs Debian's python3-torch (and python3-torchvision for a detection
project): run it with /usr/bin/python3.

    /usr/bin/python3 bench/pytorch_compare.py [--cli build/release/app/netsmith-cli]
        [--rounds 5] [--steps 30] [--threads 2] [--batch-size 128]
        [--python-channels-last no|as-project|yes] [PROJECT ...]

Netsmith runs in the memory format the project names (`train.channels_last`; the small ResNet
template uses channels-last). The Python side runs model.py as it is written (NCHW) unless
--python-channels-last says otherwise; the table names both.

Detection projects (task "detection"): both sides train on the target `netsmith-cli bench`
makes (DetectionTask::syntheticTarget: one box [w/4, h/4, 3w/4, 3h/4] of class 0 per image).
The Python loss is core/task/detection_head.h written out in torch: the assignment vectorised
over the batch, boxes and locations (centre sampling within 1.5 strides of a box's centre and
inside it, the cell holding the centre for a box no location qualifies for, the smallest area
winning a location, the earlier box on equal areas, crowd boxes only making locations ignored),
torchvision's sigmoid_focal_loss (alpha 0.25, gamma 2) summed over the valid locations /
max(1, positives), torchvision's generalized_box_iou_loss at the positives weighted by their
centre-ness target / its sum, and BCE-with-logits of the centre-ness at the positives /
max(1, positives); per step loss.item() and the batch's box count (Netsmith's train sums), then
backward, clip_grad_norm_ and step. Since the target is fixed, a second Python figure is
printed for detection: the same step with the assignment computed once before the timed loop
(the loss itself still in every step), on a line of its own under the detection row: "PyTorch
with the assignment outside the timed loop". The table's PyTorch column assigns in every step,
as Netsmith does.

With no PROJECT: the default project, the small ResNet template (trained on a generated
CIFAR-10 batch of random images, since the template names no data that exists here), the
scenes example's U-Net (segmentation: per-pixel cross-entropy and Dice on both sides) and the
scenes detection example (1x64x64, 10 classes, head at stride 4), the last two on a small
`make-dataset scenes` in a temporary folder when resources/examples/scenes is not there.
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


# Where `make-dataset scenes` puts each source format's files, per split folder.
SCENES_FILES = {"mask_folders": {"images": "images", "masks": "masks"},
                "yolo": {"images": "images", "labels": "labels"},
                "coco": {"images": "images", "annotations": "annotations.json"},
                "voc": {"images": "images", "annotations": "annotations"}}


def with_generated_scenes(cli, project_path, work, train=256, test=32):
    """A copy of a segmentation or detection project reading a small generated scenes data set
    (its masks, YOLO labels, COCO JSON or VOC folders, as the project's format reads them)."""
    with open(project_path) as f:
        project = json.load(f)
    data = os.path.join(work, "scenes")
    run([cli, "make-dataset", "scenes", "--out", data, "--train", str(train),
         "--test", str(test)])
    for split in ("train", "test"):
        source = project["data"].get(split)
        if source:
            for key, name in SCENES_FILES[source.get("format", "mask_folders")].items():
                source[key] = os.path.join(data, split, name)
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


def detection_synthetic_target(n, h, w):
    """DetectionTask::syntheticTarget: one box [w/4, h/4, 3w/4, 3h/4] of class 0 per image, as
    N x 1 x 6 rows [cls, x0, y0, x1, y1, flags]."""
    row = torch.tensor([0, w / 4, h / 4, 3 * w / 4, 3 * h / 4, 0], dtype=torch.float32)
    return row.expand(n, 1, 6).clone()


def _llround(v):
    """C's llround (halves away from zero) of a float64 tensor, as int64."""
    return (torch.sign(v) * torch.floor(v.abs() + 0.5)).long()


def detection_assign(target, height, width, classes, stride, radius=1.5):
    """task/detection_head.h's assignment (assignTargets), vectorised over the batch, the boxes
    and the locations. Returns (class_target N x K x H x W float, valid N x H x W bool,
    positive N x H x W bool, box_target N x 4 x H x W float, centreness N x H x W float), on the
    target's device; computed in float64 as Netsmith's loops compute, the targets float32."""
    if target.dim() != 3 or target.shape[2] != 6:
        raise ValueError("detection target: %s is not N x M x 6" % (tuple(target.shape),))
    device = target.device
    t = target.detach().to(torch.float64)
    n, m = t.shape[0], t.shape[1]
    s = float(stride)
    cls, x0, y0, x1, y1, flags = t.unbind(2)  # each N x M
    live = cls >= 0  # cls < 0 (or NaN): a padding row
    if bool((live & ((cls >= classes) | (_llround(cls) >= classes))).any()):
        raise ValueError("detection target: a box of a class outside 0 .. %d" % (classes - 1))
    live = live & (x1 > x0) & (y1 > y0)  # a box with no extent is left out
    odd = torch.bitwise_and(_llround(torch.nan_to_num(flags, 0.0, 0.0, 0.0)), 1) != 0
    crowd = live & torch.isfinite(flags) & odd
    normal = live & ~crowd
    points = lambda size: (torch.arange(size, dtype=torch.float64, device=device) + 0.5) * s
    px, py = points(width).view(1, 1, 1, width), points(height).view(1, 1, height, 1)
    b = lambda v: v.view(n, m, 1, 1)
    inside = (px > b(x0)) & (px < b(x1)) & (py > b(y0)) & (py < b(y1))  # N x M x H x W
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    r = radius * s
    qualifies = inside & ((px - b(cx)).abs() < r) & ((py - b(cy)).abs() < r) & b(normal)
    # A box no location qualifies for: the cell holding its centre, clamped to the map.
    fallback = normal & ~qualifies.flatten(2).any(2)
    row = torch.nan_to_num(torch.floor(cy / s), 0.0).clamp(0, height - 1).long()
    col = torch.nan_to_num(torch.floor(cx / s), 0.0).clamp(0, width - 1).long()
    rows = torch.arange(height, device=device).view(1, 1, height, 1)
    cols = torch.arange(width, device=device).view(1, 1, 1, width)
    candidate = qualifies | ((rows == b(row)) & (cols == b(col)) & b(fallback))
    # The smallest area wins (strictly smaller: argmin's first minimum is the earlier box); an
    # infinite area never wins, as Netsmith's `area < best` from infinity. The extra column of
    # infinity keeps argmin defined when M is 0.
    area = (x1 - x0) * (y1 - y0)
    areas = torch.where(candidate, b(area), torch.tensor(float("inf"), dtype=torch.float64,
                                                         device=device))
    areas = torch.cat([areas, areas.new_full((n, 1, height, width), float("inf"))], 1)
    best, owner = areas.min(1)  # N x H x W
    positive = best < float("inf")
    owner = owner.clamp(max=max(m - 1, 0))
    in_crowd = (inside & b(crowd)).any(1) if m else torch.zeros_like(positive)
    valid = positive | ~in_crowd
    if m == 0:
        zeros = torch.zeros((n, height, width), dtype=torch.float64, device=device)
        rows_of = lambda v: zeros
    else:
        rows_of = lambda v: torch.gather(v, 1, owner.view(n, -1)).view(n, height, width)
    px, py = px.view(1, 1, width), py.view(1, height, 1)
    min_distance = 0.01 * s
    left = (px - rows_of(x0)).clamp_min(min_distance)
    top = (py - rows_of(y0)).clamp_min(min_distance)
    right = (rows_of(x1) - px).clamp_min(min_distance)
    bottom = (rows_of(y1) - py).clamp_min(min_distance)
    zero = torch.zeros((), dtype=torch.float64, device=device)
    box_target = torch.where(positive.unsqueeze(1),
                             torch.stack([px - left, py - top, px + right, py + bottom], 1), zero)
    centreness = torch.where(positive,
                             torch.sqrt(torch.minimum(left, right) / torch.maximum(left, right) *
                                        torch.minimum(top, bottom) / torch.maximum(top, bottom)),
                             zero)
    owner_class = _llround(rows_of(cls)).clamp(0, classes - 1)
    class_target = F.one_hot(owner_class, classes).permute(0, 3, 1, 2) * positive.unsqueeze(1)
    return (class_target.float(), valid, positive, box_target.float(), centreness.float())


def detection_loss(output, assigned, stride, alpha=0.25, gamma=2.0):
    """task/detection_head.h's loss (detectionLoss) on an assignment (detection_assign):
    cls + box + ctr."""
    from torchvision.ops import generalized_box_iou_loss, sigmoid_focal_loss
    class_target, valid, positive, box_target, centreness = assigned
    x = output.float()
    k = x.shape[1] - 5
    n, h, w = x.shape[0], x.shape[2], x.shape[3]
    positives = positive.sum().float().clamp_min(1)
    focal = sigmoid_focal_loss(x[:, :k], class_target, alpha=alpha, gamma=gamma, reduction="none")
    cls = (focal * valid.unsqueeze(1).float()).sum() / positives
    # The positives' boxes only, as Netsmith (a negative's box may be degenerate).
    s = float(stride)
    distances = (x[:, k:k + 4].clamp_max(10).exp() * s).permute(0, 2, 3, 1)[positive]  # P x 4
    px = ((torch.arange(w, dtype=x.dtype, device=x.device) + 0.5) * s).view(1, 1, w)
    py = ((torch.arange(h, dtype=x.dtype, device=x.device) + 0.5) * s).view(1, h, 1)
    px, py = px.expand(n, h, w)[positive], py.expand(n, h, w)[positive]
    predicted = torch.stack([px - distances[:, 0], py - distances[:, 1],
                             px + distances[:, 2], py + distances[:, 3]], 1)
    target_boxes = box_target.permute(0, 2, 3, 1)[positive]
    weight = centreness[positive]
    box = (generalized_box_iou_loss(predicted, target_boxes, reduction="none", eps=1e-7)
           * weight).sum() / weight.sum().clamp_min(1e-6)
    ctr = F.binary_cross_entropy_with_logits(x[:, k + 4][positive], weight,
                                             reduction="sum") / positives
    return cls + box + ctr


def detection_stride(input_size, output_shape):
    """The head's stride: input height / H = input width / W, a whole number."""
    _, h, w = input_size
    oh, ow = output_shape[-2], output_shape[-1]
    if oh < 1 or ow < 1 or h % oh or w % ow or h // oh != w // ow:
        sys.exit("pytorch_compare: a %dx%d map does not divide the %dx%d input into equal "
                 "strides" % (oh, ow, h, w))
    return h // oh


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


def python_rate(module, train, batch, steps, channels_last=False, warmup=2, task=None,
                assign_outside=False):
    """Images/s of the Python loop. Detection: the loss of detection_loss on the synthetic
    target, its assignment in every step, or once before the loop with assign_outside."""
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
    out_shape = model(x[:2]).shape
    classes = out_shape[1]
    segmentation = task == "segmentation"
    detection = task == "detection"
    if detection:
        classes -= 5
        stride = detection_stride((c, h, w), out_shape)
        y = detection_synthetic_target(batch, h, w)
        assigned = detection_assign(y, out_shape[2], out_shape[3], classes, stride)
    else:
        y = torch.randint(0, classes, (batch, h, w) if segmentation else (batch,))
    kind = train.get("loss", "auto")
    clip = train.get("clip_grad_norm", 0) or float("inf")
    start = time.perf_counter()
    for i in range(warmup + steps):
        if i == warmup:
            start = time.perf_counter()
        optimizer.zero_grad()
        logits = model(x)
        if detection:
            if not assign_outside:
                assigned = detection_assign(y, logits.shape[2], logits.shape[3], classes, stride)
            loss = detection_loss(logits, assigned, stride)
        elif segmentation and kind == "dice":
            loss = dice_loss(logits, y)
        else:
            loss = F.cross_entropy(logits, y, ignore_index=255 if segmentation else -100,
                                   label_smoothing=train.get("label_smoothing", 0.0))
            if segmentation and kind == "ce_dice":
                loss = loss + dice_loss(logits, y)
        loss_value = loss.item()
        if detection:  # the boxes trained on, Netsmith's train sums for detection
            correct = (y[:, :, 0] >= 0).sum().item()
        else:
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
        os.path.join(ROOT, "resources/examples/scenes.netsmith.json"),
        os.path.join(ROOT, "resources/examples/scenes_detection.netsmith.json")]
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
            task = project.get("task")
            if data and not os.path.exists(data_path) and data.get("format") == "mask_folders":
                path = with_generated_scenes(args.cli, path, work)
            elif data and not os.path.exists(data_path) and data.get("format") in SCENES_FILES:
                path = with_generated_scenes(args.cli, path, work, train=600, test=100)
            elif data and not os.path.exists(data_path) and data.get("format") != "cifar10":
                path = with_generated_cifar(path, work)
            module = exported_model(args.cli, path, work, args.threads)
            train = copy.deepcopy(project.get("train", {}))
            ours_cl = bool(train.get("channels_last", False))
            theirs_cl = {"no": False, "yes": True, "as-project": ours_cl}[args.python_channels_last]
            ours, theirs, outside = [], [], []
            for _ in range(args.rounds):
                ours.append(netsmith_rate(args.cli, path, args.batch_size, args.steps, args.threads))
                theirs.append(python_rate(module, train, args.batch_size, args.steps, theirs_cl,
                                          task=task))
                if task == "detection":
                    outside.append(python_rate(module, train, args.batch_size, args.steps,
                                               theirs_cl, task=task, assign_outside=True))
            rows.append((project.get("name", path), statistics.median(ours),
                         statistics.median(theirs), ours, theirs, ours_cl, theirs_cl, outside))
    print("\n%-16s %14s %14s %7s  %s" % ("model", "Netsmith img/s", "PyTorch img/s", "ratio",
                                         "memory format (Netsmith / PyTorch)"))
    fmt = lambda cl: "channels-last" if cl else "NCHW"
    rounds = lambda values: " ".join("%.0f" % v for v in values)
    for name, ours, theirs, all_ours, all_theirs, ours_cl, theirs_cl, outside in rows:
        print("%-16s %14.1f %14.1f %6.2fx  %s / %s" % (name, ours, theirs, ours / theirs,
                                                      fmt(ours_cl), fmt(theirs_cl)))
        print("  rounds: Netsmith %s | PyTorch %s" % (rounds(all_ours), rounds(all_theirs)))
        if outside:
            # Detection: the fixed target's assignment done once, before the timed loop (the
            # loss itself still in every step); Netsmith assigns in every step.
            theirs_outside = statistics.median(outside)
            print("  PyTorch with the assignment outside the timed loop (once; the loss still "
                  "every step): %.1f img/s, ratio %.2fx\n  rounds: PyTorch, assignment outside %s"
                  % (theirs_outside, ours / theirs_outside, rounds(outside)))


if __name__ == "__main__":
    main()
