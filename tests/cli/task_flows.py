#!/usr/bin/python3
"""Multi-label, regression and segmentation from data to export with the real CLI, every figure
checked against scikit-learn or numpy. For each task: `make-dataset` builds a small data set from Fashion-MNIST
(mosaics: 600 training and 200 test images; rotations: the same), the example project trains
on it for a few epochs, `eval --predictions` writes every sample's output, and

  - the figures `eval --json` reports equal scikit-learn's on that file (average_precision_score
    per label, f1_score micro and macro at the threshold, accuracy_score for subset accuracy;
    mean_absolute_error, mean_squared_error and r2_score per target and averaged), to 1e-6;
  - the test figures the run printed and recorded (the `finished` event of events.jsonl) equal
    eval's (the run's best checkpoint, the same data);
  - the truths in the file are the manifest's, row by row;
  - the export is verified, its ONNX metadata names the task and its output, and (regression)
    the ONNX file run in OpenCV DNN on the test images gives the predictions in the data's
    units (the target scaling folded in), as in the predictions file.

Segmentation (scenes: 600 + 200 images and masks): `eval --predictions DIR` writes a predicted
and a true mask PNG per sample; the true masks equal the data's mask files, and mIoU, Dice,
pixel accuracy, per-class IoU and the pixel confusion matrix equal numpy's count over those PNGs
(ignored pixels left out); the ONNX file in OpenCV DNN predicts the same masks; MixUp and a head
of the wrong width are refused by name.

Exit 77 (skipped) without the Fashion-MNIST package or scikit-learn.

    /usr/bin/python3 tests/cli/task_flows.py NETSMITH_CLI SOURCE_DIR WORK_DIR
"""
import csv
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import warnings

import flow_support

FMNIST = "/usr/share/datasets/fashion-mnist"
TOL = 1e-6

try:
    import numpy as np
    from sklearn.metrics import (accuracy_score, average_precision_score, f1_score,
                                 mean_absolute_error, mean_squared_error, r2_score)
except ImportError as e:
    print("skipped: %s" % e)
    sys.exit(77)


def run(cmd):
    return flow_support.run("task_flows", cmd)


def close(what, got, want):
    if not (abs(got - want) <= TOL or (math.isnan(got) and math.isnan(want))):
        sys.exit("task_flows: %s is %r, scikit-learn gives %r" % (what, got, want))


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def train_and_eval(cli, source, work, name, epochs, predictions_name=None):
    data = os.path.join(work, name)
    run([cli, "make-dataset", name, "--out", data, "--train", "600", "--test", "200", "--seed",
         "3"])
    with open(os.path.join(source, "resources/examples/%s.netsmith.json" % name)) as f:
        project = json.load(f)
    if project["data"]["train"]["format"] == "mask_folders":
        for split in ("train", "test"):
            project["data"][split]["images"] = os.path.join(data, split, "images")
            project["data"][split]["masks"] = os.path.join(data, split, "masks")
    else:
        project["data"]["train"]["manifest"] = os.path.join(data, "train.csv")
        project["data"]["test"]["manifest"] = os.path.join(data, "test.csv")
    project["train"]["epochs"] = epochs
    path = os.path.join(work, name + ".netsmith.json")
    with open(path, "w") as f:
        json.dump(project, f)
    # The augment preview and data-stats read these sources too (each row captioned by its
    # labels or targets).
    run([cli, "preview-aug", path, "--out", os.path.join(work, name + "-preview.png")])
    if os.path.getsize(os.path.join(work, name + "-preview.png")) < 1000:
        sys.exit("task_flows: %s: the augment preview is empty" % name)
    run([cli, "data-stats", path])
    out = run([cli, "train", path, "--out", os.path.join(work, "runs")])
    run_dir = sorted(glob.glob(os.path.join(work, "runs", name + "-*")))[-1]
    ckpt = os.path.join(run_dir, "checkpoints", "best.safetensors")
    predictions = os.path.join(work, predictions_name or name + "-predictions.csv")
    report = json.loads(run([cli, "eval", ckpt, "--data", path, "--json", "--predictions",
                             predictions]))
    with open(os.path.join(run_dir, "events.jsonl")) as f:
        events = [json.loads(line) for line in f if line.strip()]
    finished = [e for e in events if e.get("event") == "finished"][-1]
    recorded = finished["test"]["figures"]
    for key, value in report["figures"].items():
        close("%s: the run's recorded test %s" % (name, key), recorded[key], value)
        printed = "%s %.4f" % (key, value)
        if printed not in out.splitlines()[-1]:
            sys.exit("task_flows: %s: the run printed no \"%s\":\n%s" % (name, printed, out[-800:]))
    if predictions_name:  # a folder: the caller reads it
        return report, ckpt, path, predictions, data
    # The truths are the manifest's, in order.
    manifest = {os.path.normpath(os.path.join(data, r["path"])): r
                for r in read_rows(os.path.join(data, "test.csv"))}
    rows = read_rows(predictions)
    if len(rows) != 200 or report["samples"] != 200:
        sys.exit("task_flows: %s: %d predictions, %d samples" % (name, len(rows), report["samples"]))
    return report, rows, manifest, ckpt, path


def multilabel(cli, source, work):
    report, rows, manifest, ckpt, project = train_and_eval(cli, source, work, "mosaics", 8)
    classes = [c[len("true:"):] for c in rows[0] if c.startswith("true:")]
    y = np.array([[int(r["true:" + c]) for c in classes] for r in rows])
    p = np.array([[float(r["prob:" + c]) for c in classes] for r in rows], dtype=np.float32)
    for r, truth in zip(rows, y):
        given = set(filter(None, manifest[os.path.normpath(r["path"])]["labels"].split(";")))
        if given != {c for c, t in zip(classes, truth) if t}:
            sys.exit("task_flows: %s: truths %s differ from the manifest's %s" % (r["path"], truth, given))
    thresholds = report["per_class_figures"]["threshold"]
    predicted = (p >= np.array(thresholds, dtype=np.float32)).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a label without a positive: scikit-learn says 0
        ap = average_precision_score(y, p, average=None)
        mean_ap = average_precision_score(y, p, average="macro")
    for k, c in enumerate(classes):
        close("AP of " + c, report["per_class_figures"]["ap"][k], ap[k])
    f1 = f1_score(y, predicted, average=None, zero_division=0)
    for k, c in enumerate(classes):
        close("F1 of " + c, report["per_class_figures"]["f1"][k], f1[k])
    close("mAP", report["figures"]["map"], mean_ap)
    close("micro F1", report["figures"]["f1_micro"], f1_score(y, predicted, average="micro"))
    close("macro F1", report["figures"]["f1_macro"],
          f1_score(y, predicted, average="macro", zero_division=0))
    close("subset accuracy", report["figures"]["subset_accuracy"], accuracy_score(y, predicted))
    export = run([cli, "export", ckpt, "--data-from-checkpoint"])
    onnx_path = os.path.join(os.path.dirname(os.path.dirname(ckpt)), "exports", "best.onnx")
    meta = onnx_metadata(onnx_path)
    if meta.get("task") != "multilabel" or json.loads(meta["classes"]) != classes:
        sys.exit("task_flows: mosaics: ONNX metadata %s" % meta)
    # The thresholds eval used are the ones validation tuned for the checkpoint, and the export
    # says them.
    if all(t == 0.5 for t in thresholds):
        sys.exit("task_flows: mosaics: no threshold was tuned on validation: %s" % thresholds)
    if json.loads(meta["task_state"]).get("thresholds") != thresholds:
        sys.exit("task_flows: mosaics: the ONNX metadata's thresholds %s are not eval's %s"
                 % (meta["task_state"], thresholds))
    print("multilabel: mAP %.4f, micro F1 %.4f, macro F1 %.4f, subset accuracy %.4f "
          "(scikit-learn agrees)" % (report["figures"]["map"], report["figures"]["f1_micro"],
                                      report["figures"]["f1_macro"],
                                      report["figures"]["subset_accuracy"]))
    return export


def refused(cli, work, project, tag, change, args, message):
    """A copy of `project` changed by `change` must make `args` + [copy] fail with `message`."""
    with open(project) as f:
        p = json.load(f)
    change(p)
    path = os.path.join(work, "%s-%s.netsmith.json" % (os.path.basename(project).split(".")[0], tag))
    with open(path, "w") as f:
        json.dump(p, f)
    done = subprocess.run([cli] + args + [path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    if done.returncode == 0 or message not in done.stdout:
        sys.exit("task_flows: %s: expected a refusal with \"%s\", got (%d):\n%s"
                 % (tag, message, done.returncode, done.stdout[-1500:]))


def onnx_metadata(path):
    import onnx
    return {p.key: p.value for p in onnx.load(path).metadata_props}


def regression(cli, source, work):
    report, rows, manifest, ckpt, project = train_and_eval(cli, source, work, "rotations", 6)
    targets = [c[len("true:"):] for c in rows[0] if c.startswith("true:")]
    y = np.array([[float(r["true:" + t]) for t in targets] for r in rows])
    p = np.array([[float(r["pred:" + t]) for t in targets] for r in rows])
    for r, truth in zip(rows, y):
        given = manifest[os.path.normpath(r["path"])]
        if any(abs(float(given[t]) - v) > 1e-6 for t, v in zip(targets, truth)):
            sys.exit("task_flows: %s: truths %s differ from the manifest's" % (r["path"], truth))
    close("MAE", report["figures"]["mae"], mean_absolute_error(y, p))
    close("RMSE", report["figures"]["rmse"], mean_squared_error(y, p, squared=False))
    close("R2", report["figures"]["r2"], r2_score(y, p))
    for k, t in enumerate(targets):
        close("MAE of " + t, report["per_class_figures"]["mae"][k], mean_absolute_error(y[:, k], p[:, k]))
        close("RMSE of " + t, report["per_class_figures"]["rmse"][k],
              math.sqrt(mean_squared_error(y[:, k], p[:, k])))
        close("R2 of " + t, report["per_class_figures"]["r2"][k], r2_score(y[:, k], p[:, k]))
    refused(cli, work, project, "swapped", lambda p: p["data"].update(targets=["cos", "sin"]),
            ["eval", ckpt, "--data"], "are not the ones the model was trained on")
    refused(cli, work, project, "replace_head", lambda p: p["train"].update(replace_head=True),
            ["validate"], "train.replace_head: gives the last Linear one output per class")
    run([cli, "export", ckpt, "--data-from-checkpoint"])
    onnx_path = os.path.join(os.path.dirname(os.path.dirname(ckpt)), "exports", "best.onnx")
    meta = onnx_metadata(onnx_path)
    if meta.get("task") != "regression" or meta.get("output") != "values":
        sys.exit("task_flows: rotations: ONNX metadata %s" % meta)
    import cv2
    net = cv2.dnn.readNetFromONNX(onnx_path)
    mean = json.loads(meta["normalization_mean"])[0]
    std = json.loads(meta["normalization_std"])[0]
    x = np.stack([(cv2.imread(r["path"], cv2.IMREAD_GRAYSCALE).astype(np.float32) / 255 - mean) / std
                  for r in rows])[:, None]
    net.setInput(x)
    onnx_out = net.forward()
    diff = float(np.abs(onnx_out - p).max())
    if diff > 1e-4:
        sys.exit("task_flows: rotations: the ONNX file's outputs differ from eval's predictions "
                 "by %g (is the target scaling folded in?)" % diff)
    print("regression: MAE %.4f, RMSE %.4f, R2 %.4f (scikit-learn agrees); ONNX in OpenCV DNN "
          "gives the predictions to %.1e" % (report["figures"]["mae"], report["figures"]["rmse"],
                                             report["figures"]["r2"], diff))


def segmentation(cli, source, work):
    import cv2
    report, ckpt, project, folder, data = train_and_eval(cli, source, work, "scenes", 3,
                                                         "scenes-predictions")
    with open(project) as f:
        classes = json.load(f)["data"]["classes"]
    k = len(classes)
    rows = read_rows(os.path.join(folder, "predictions.csv"))
    if len(rows) != 200 or report["samples"] != 200:
        sys.exit("task_flows: scenes: %d predictions, %d samples" % (len(rows), report["samples"]))
    truth, predicted, images = [], [], []
    for r in rows:
        t = cv2.imread(os.path.join(folder, r["truth"]), cv2.IMREAD_UNCHANGED)
        p = cv2.imread(os.path.join(folder, r["prediction"]), cv2.IMREAD_UNCHANGED)
        stem = os.path.splitext(os.path.basename(r["path"]))[0]
        given = cv2.imread(os.path.join(data, "test", "masks", stem + ".png"), cv2.IMREAD_UNCHANGED)
        if t is None or p is None or not np.array_equal(t, given):
            sys.exit("task_flows: scenes: %s: the true mask differs from the data's" % r["path"])
        truth.append(t)
        predicted.append(p)
        images.append(cv2.imread(r["path"], cv2.IMREAD_GRAYSCALE))
    t = np.stack(truth).astype(np.int64)
    p = np.stack(predicted).astype(np.int64)
    valid = t != 255
    cm = np.bincount(t[valid] * k + p[valid], minlength=k * k).reshape(k, k)
    if report["confusion"] != cm.tolist():
        sys.exit("task_flows: scenes: the pixel confusion matrix differs from numpy's")
    tp = np.diag(cm).astype(float)
    union = cm.sum(0) + cm.sum(1) - tp
    present = union > 0
    iou = np.where(present, tp / np.maximum(union, 1), np.nan)
    dice = np.where(present, 2 * tp / np.maximum(union + tp, 1), np.nan)
    for c in range(k):
        close("IoU of " + classes[c], report["per_class_figures"]["iou"][c]
              if report["per_class_figures"]["iou"][c] is not None else math.nan, iou[c])
    close("mIoU", report["figures"]["miou"], float(np.nanmean(iou)))
    close("Dice", report["figures"]["dice"], float(np.nanmean(dice)))
    close("pixel accuracy", report["figures"]["pixel_accuracy"], tp.sum() / cm.sum())
    # A second evaluation into the same folder, of fewer samples: the folder then holds its
    # masks only (the earlier run's extra PNGs removed), each named in its predictions.csv.
    run([cli, "eval", ckpt, "--data", project, "--limit", "50", "--predictions", folder])
    again = read_rows(os.path.join(folder, "predictions.csv"))
    for sub, column in (("masks", "prediction"), ("truth", "truth")):
        listed = sorted(os.path.basename(r[column]) for r in again)
        if len(again) != 50 or sorted(os.listdir(os.path.join(folder, sub))) != listed:
            sys.exit("task_flows: scenes: a second eval left %s/ holding other files than its "
                     "own %d" % (sub, len(again)))
    refused(cli, work, project, "mixup", lambda q: q["augment"].append({"transform": "MixUp"}),
            ["validate"], "MixUp moves or mixes pixels but cannot move a mask")
    refused(cli, work, project, "narrow_head",
            lambda q: [n["params"].update(out_channels=4) for n in q["model"]["nodes"]
                       if n["id"] == "out"],
            ["validate"], "set out.out_channels to %d" % k)
    run([cli, "export", ckpt, "--data-from-checkpoint"])
    onnx_path = os.path.join(os.path.dirname(os.path.dirname(ckpt)), "exports", "best.onnx")
    meta = onnx_metadata(onnx_path)
    if meta.get("task") != "segmentation" or json.loads(meta["classes"]) != classes:
        sys.exit("task_flows: scenes: ONNX metadata %s" % meta)
    net = cv2.dnn.readNetFromONNX(onnx_path)
    mean = json.loads(meta["normalization_mean"])[0]
    std = json.loads(meta["normalization_std"])[0]
    net.setInput((np.stack(images).astype(np.float32)[:, None] / 255 - mean) / std)
    onnx_masks = net.forward().argmax(1)
    agree = float((onnx_masks == p).mean())
    if agree < 0.9999:
        sys.exit("task_flows: scenes: the ONNX file's masks agree with eval's on %.4f%% of "
                 "pixels" % (100 * agree))
    print("segmentation: mIoU %.4f, Dice %.4f, pixel accuracy %.4f (numpy agrees); ONNX in "
          "OpenCV DNN predicts the same masks (%.4f%% of pixels)"
          % (report["figures"]["miou"], report["figures"]["dice"],
             report["figures"]["pixel_accuracy"], 100 * agree))


def main():
    cli, source, work = sys.argv[1], sys.argv[2], sys.argv[3]
    if not os.path.exists(os.path.join(FMNIST, "train-images-idx3-ubyte.gz")):
        print("skipped: no Fashion-MNIST at " + FMNIST)
        sys.exit(77)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    multilabel(cli, source, work)
    regression(cli, source, work)
    segmentation(cli, source, work)


if __name__ == "__main__":
    main()
