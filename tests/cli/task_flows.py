#!/usr/bin/python3
"""Multi-label, regression, segmentation and detection from data to export with the real CLI, every figure
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

Detection (the same scenes, their YOLO labels): `eval --predictions FILE.json` writes the
detections in the COCO results format and FILE.truth.json the truth; the truth equals the test
split's COCO file as make-dataset wrote it, and every figure (mAP, mAP@.5, @.75, per area range,
recall, per-class AP, AP@.5 and recall) equals a COCO evaluation written here from its
definition, to 1e-6; the exported ONNX head run in OpenCV DNN and decoded here with
torchvision's batched_nms gives eval's detections.

Every task, classification included (60 Fashion-MNIST test images written as PNGs, in the
losses flow): `predict` on the evaluated images, with no labels read, writes what eval
--predictions wrote for them, image by image, without the truth.

Exit 77 (skipped) without the Fashion-MNIST package or scikit-learn.

    /usr/bin/python3 tests/cli/task_flows.py NETSMITH_CLI SOURCE_DIR WORK_DIR [TASK]

TASK (multilabel, regression, segmentation, detection or losses) runs that flow alone; losses
trains every other loss briefly and checks that each run's recorded test loss equals eval's.
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


def export_verified(cli, flow, ckpt, extra=(), int8=True):
    """Exports `ckpt` (its test images as parity samples); the output must show the parity
    passing in both runtimes, OpenCV DNN and ONNX Runtime, each against LibTorch, and (`int8`)
    the int8 file, calibrated on training images, checked in ONNX Runtime against the float
    model."""
    int8_flags = ["--int8", "--calibration", "32"] if int8 else []
    out = run([cli, "export", ckpt, "--data-from-checkpoint"] + int8_flags + list(extra))
    for runtime in ("OpenCV DNN", "ONNX Runtime"):
        if "parity passed (%s" % runtime not in out:
            sys.exit("task_flows: %s: the export's parity in %s did not pass:\n%s"
                     % (flow, runtime, out[-3000:]))
    if int8 and ("int8 checked (ONNX Runtime" not in out
                 or "calibrated on 32 training images" not in out):
        sys.exit("task_flows: %s: the int8 export was not checked:\n%s" % (flow, out[-3000:]))
    return out


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def close_cells(what, got, want, tol=1e-5):
    """Two CSV cells: numbers within tol, anything else as the same text."""
    try:
        a, b = float(got), float(want)
    except ValueError:
        if got != want:
            sys.exit("task_flows: %s: %r, eval wrote %r" % (what, got, want))
        return
    if not (abs(a - b) <= tol or (math.isnan(a) and math.isnan(b))):
        sys.exit("task_flows: %s: %r, eval wrote %r" % (what, got, want))


def predict_equals_eval(cli, work, ckpt, inputs, name, kind, evaluated, exported=False):
    """`predict` on the evaluated images (no labels read) gives what `eval --predictions` wrote
    for them: a CSV's every column but the truth's, the same mask PNGs, the same detections.
    Both batch by 256. `exported`: `ckpt` is its ONNX export, run in ONNX Runtime, whose outputs
    are LibTorch's to 1e-4 (checked by the export): numbers within 1e-4, masks the same but at
    ties (0.1% of pixels). Returns predict's JSON report."""
    if exported:
        name += "-onnx"
    tol = 1e-4 if exported else 1e-5
    out = os.path.join(work, name + "-predict" + {"csv": ".csv", "masks": "", "coco": ".json"}[kind])
    report = json.loads(run([cli, "predict", ckpt] + inputs +
                            ["--out", out, "--batch-size", "256", "--json"]))
    if report["skipped"]:
        sys.exit("task_flows: %s: predict skipped %s" % (name, report["skipped"]))
    if exported != report["runtime"].startswith("ONNX Runtime"):
        sys.exit("task_flows: %s: predict ran in %s" % (name, report["runtime"]))
    if kind == "csv":
        mine = {os.path.normpath(r["path"]): r for r in read_rows(out)}
        theirs = read_rows(evaluated)
        truth = [c for c in theirs[0] if c.startswith("true:") or c == "label"]
        if set(truth) & set(next(iter(mine.values()))):
            sys.exit("task_flows: %s: predict wrote truth columns %s" % (name, truth))
        for r in theirs:
            got = mine.get(os.path.normpath(r["path"]))
            if got is None:
                sys.exit("task_flows: %s: predict gave nothing for %s" % (name, r["path"]))
            if set(got) != set(r) - set(truth):
                sys.exit("task_flows: %s: predict's columns %s, eval's %s" % (name, list(got), list(r)))
            for column in got:
                close_cells("%s: predict's %s of %s" % (name, column, r["path"]), got[column],
                            r[column], tol)
        count = len(theirs)
    elif kind == "masks":
        import cv2
        mine = {os.path.normpath(r["path"]): r for r in read_rows(os.path.join(out, "predictions.csv"))}
        if os.path.exists(os.path.join(out, "truth")):
            sys.exit("task_flows: %s: predict wrote a truth folder" % name)
        theirs = read_rows(os.path.join(evaluated, "predictions.csv"))
        for r in theirs:
            got = mine.get(os.path.normpath(r["path"]))
            a = cv2.imread(os.path.join(out, got["prediction"]), cv2.IMREAD_UNCHANGED) if got else None
            b = cv2.imread(os.path.join(evaluated, r["prediction"]), cv2.IMREAD_UNCHANGED)
            if a is None or a.shape != b.shape or np.mean(a != b) > (1e-3 if exported else 0):
                sys.exit("task_flows: %s: predict's mask of %s differs from eval's" % (name, r["path"]))
            # The overlay: the image where the mask is background, tinted where it is a class.
            grey = cv2.imread(r["path"], cv2.IMREAD_GRAYSCALE)
            overlay = cv2.imread(os.path.join(out, got["overlay"]), cv2.IMREAD_COLOR)
            if overlay is None or overlay.shape[:2] != grey.shape or a.shape != grey.shape:
                sys.exit("task_flows: %s: the overlay of %s is missing or of another size" %
                         (name, r["path"]))
            plain = np.abs(overlay.astype(int) - grey[..., None].astype(int)).max(axis=2) <= 1
            if not plain[a == 0].all() or (a != 0).any() and plain[a != 0].all():
                sys.exit("task_flows: %s: the overlay of %s does not follow its mask" % (name, r["path"]))
        count = len(theirs)
    else:
        def by_file(results, images):
            # By file name: eval names a YOLO image as its folder does, predict by its path.
            files = {i["id"]: os.path.basename(i["file_name"]) for i in images["images"]}
            out = {f: [] for f in files.values()}
            for d in results:
                out[files[d["image_id"]]].append((d["category_id"], d["score"], d["bbox"]))
            return {f: sorted(v, key=lambda x: (-x[1], x[0])) for f, v in out.items()}
        stem = evaluated[:-len(".json")]
        with open(out) as f, open(out[:-len(".json")] + ".images.json") as g:
            mine = by_file(json.load(f), json.load(g))
        with open(evaluated) as f, open(stem + ".truth.json") as g:
            theirs = by_file(json.load(f), json.load(g))
        if os.path.exists(out[:-len(".json")] + ".truth.json"):
            sys.exit("task_flows: %s: predict wrote a truth file" % name)
        import cv2
        # Each image drawn, in the order predict read them, at its own size.
        drawn = sorted(glob.glob(os.path.join(out[:-len(".json")] + ".drawn", "*.png")))
        with open(out[:-len(".json")] + ".images.json") as g:
            sizes = [(i["height"], i["width"]) for i in json.load(g)["images"]]
        if [cv2.imread(d).shape[:2] for d in drawn] != sizes or len(sizes) != len(theirs):
            sys.exit("task_flows: %s: %d drawn images for %d images" % (name, len(drawn), len(theirs)))
        for path, want in theirs.items():
            got = mine.get(path)
            if got is None or len(got) != len(want) or any(
                    a[0] != b[0] or abs(a[1] - b[1]) > tol or
                    max(abs(p - q) for p, q in zip(a[2], b[2])) > 1e-3 for a, b in zip(got, want)):
                sys.exit("task_flows: %s: predict's detections of %s differ from eval's" % (name, path))
        count = len(theirs)
    if report["predicted"] != count:
        sys.exit("task_flows: %s: predict counted %d images, eval %d" % (name, report["predicted"], count))
    print("%s: predict gives eval's predictions on %d images" % (name, count))
    return report


def train_and_eval(cli, source, work, name, epochs, predictions_name=None, dataset=None,
                   loss=None, smoothing=None):
    data = os.path.join(work, dataset or name)
    if not os.path.isdir(data):
        run([cli, "make-dataset", dataset or name, "--out", data, "--train", "600", "--test",
             "200", "--seed", "3"])
    with open(os.path.join(source, "resources/examples/%s.netsmith.json" % name)) as f:
        project = json.load(f)
    if project["data"]["train"]["format"] == "mask_folders":
        for split in ("train", "test"):
            project["data"][split]["images"] = os.path.join(data, split, "images")
            project["data"][split]["masks"] = os.path.join(data, split, "masks")
    elif project["data"]["train"]["format"] == "yolo":
        for split in ("train", "test"):
            project["data"][split]["images"] = os.path.join(data, split, "images")
            project["data"][split]["labels"] = os.path.join(data, split, "labels")
    else:
        project["data"]["train"]["manifest"] = os.path.join(data, "train.csv")
        project["data"]["test"]["manifest"] = os.path.join(data, "test.csv")
    project["train"]["epochs"] = epochs
    if loss:
        project["train"]["loss"] = loss
    if smoothing is not None:
        project["train"]["label_smoothing"] = smoothing
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
    # eval's loss is the run's loss (its task built the same way: a Huber regression's test
    # loss is Huber in both). Relative 1e-3: detection's loss is normalised per batch, and eval
    # batches by 256 where the run's test pass used its own batch size; another loss function
    # differs by far more.
    got, want = finished["test"]["loss"], report["loss"]
    if not abs(got - want) <= 1e-3 * abs(want):
        sys.exit("task_flows: %s: the run's recorded test loss is %r, eval gives %r" %
                 (name, got, want))
    for key, value in report["figures"].items():
        if value is None:  # undefined (NaN): no box in an area range, printed as "-"
            if recorded[key] is not None or "%s -" % key not in out.splitlines()[-1]:
                sys.exit("task_flows: %s: %s is undefined in eval but not in the run" % (name, key))
            continue
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
    predict_equals_eval(cli, work, ckpt, [os.path.join(work, "mosaics", "images", "test")],
                        "mosaics", "csv", os.path.join(work, "mosaics-predictions.csv"))
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
    export = export_verified(cli, "mosaics", ckpt)
    onnx_path = os.path.join(os.path.dirname(os.path.dirname(ckpt)), "exports", "best.onnx")
    predict_equals_eval(cli, work, onnx_path, [os.path.join(work, "mosaics", "images", "test")],
                        "mosaics", "csv", os.path.join(work, "mosaics-predictions.csv"), True)
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


def bench_checked(cli, flow, onnx_path, project):
    """`bench MODEL.onnx --json`: its latency percentiles are numpy's of its own timed runs, its
    parameters the project summary's, and its MACs a count made here over the file's shapes
    from onnx's own shape inference. Returns the report."""
    import onnx
    from onnx import shape_inference
    report = json.loads(run([cli, "bench", onnx_path, "--json", "--runs", "20", "--seconds", "0.01",
                             "--batch-size", "4"]))[0]
    for r in report["runtimes"]:
        if "error" in r:
            continue
        if len(r["batch1_ms"]) < 20 or min(r["batch1_ms"]) <= 0:
            sys.exit("task_flows: %s: bench timed %s" % (flow, r["batch1_ms"]))
        for q, key in ((50, "batch1_p50_ms"), (95, "batch1_p95_ms")):
            want = float(np.percentile(r["batch1_ms"], q))
            if abs(r[key] - want) > 1e-9 * max(1.0, want):
                sys.exit("task_flows: %s: %s %s is %r, numpy gives %r"
                         % (flow, r["runtime"], key, r[key], want))
    summary = json.loads(run([cli, "summary", project, "--json"]))
    if report["parameters"] != summary["total_params"]:
        sys.exit("task_flows: %s: bench counts %d parameters, the summary %d"
                 % (flow, report["parameters"], summary["total_params"]))
    model = onnx.load(onnx_path)
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1
    graph = shape_inference.infer_shapes(model).graph
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in list(graph.value_info) + list(graph.input) + list(graph.output)}
    weights = {t.name: list(t.dims) for t in graph.initializer}
    macs = 0
    for n in graph.node:
        if n.op_type == "Conv":  # per output element: C_in / groups x kH x kW
            macs += int(np.prod(shapes[n.output[0]][1:])) * int(np.prod(weights[n.input[1]][1:]))
        elif n.op_type in ("Gemm", "MatMul"):
            macs += int(np.prod(shapes[n.output[0]][1:])) * shapes[n.input[0]][-1]
        elif n.op_type == "ConvTranspose":
            macs += int(np.prod(shapes[n.input[0]][1:])) * int(np.prod(weights[n.input[1]][1:]))
    if report["macs_per_image"] != macs:
        sys.exit("task_flows: %s: bench counts %d MACs, the file's shapes %d"
                 % (flow, report["macs_per_image"], macs))
    if report["file_bytes"] != os.path.getsize(onnx_path):
        sys.exit("task_flows: %s: bench's file size %d" % (flow, report["file_bytes"]))
    return report


def onnx_metadata(path):
    import onnx
    return {p.key: p.value for p in onnx.load(path).metadata_props}


def regression(cli, source, work):
    # Huber, not the example's MSE: eval once reported an MSE loss for it.
    report, rows, manifest, ckpt, project = train_and_eval(cli, source, work, "rotations", 6,
                                                           loss="huber")
    predict_equals_eval(cli, work, ckpt, [os.path.join(work, "rotations", "images", "test")],
                        "rotations", "csv", os.path.join(work, "rotations-predictions.csv"))
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
    # The unit-free headline: each target's MAE over its standard deviation on the split.
    nmae = [mean_absolute_error(y[:, k], p[:, k]) / np.std(y[:, k]) for k in range(len(targets))]
    close("normalised MAE", report["figures"]["nmae"], float(np.mean(nmae)))
    for k, t in enumerate(targets):
        close("normalised MAE of " + t, report["per_class_figures"]["nmae"][k], nmae[k])
        close("MAE of " + t, report["per_class_figures"]["mae"][k], mean_absolute_error(y[:, k], p[:, k]))
        close("RMSE of " + t, report["per_class_figures"]["rmse"][k],
              math.sqrt(mean_squared_error(y[:, k], p[:, k])))
        close("R2 of " + t, report["per_class_figures"]["r2"][k], r2_score(y[:, k], p[:, k]))
    refused(cli, work, project, "swapped", lambda p: p["data"].update(targets=["cos", "sin"]),
            ["eval", ckpt, "--data"], "are not the ones the model was trained on")
    refused(cli, work, project, "replace_head", lambda p: p["train"].update(replace_head=True),
            ["validate"], "train.replace_head: gives the last Linear one output per class")
    export_verified(cli, "rotations", ckpt)
    onnx_path = os.path.join(os.path.dirname(os.path.dirname(ckpt)), "exports", "best.onnx")
    # The file's output is in the targets' units (the scaling folded in): predict reads it so.
    predict_equals_eval(cli, work, onnx_path, [os.path.join(work, "rotations", "images", "test")],
                        "rotations", "csv", os.path.join(work, "rotations-predictions.csv"), True)
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
    predict_equals_eval(cli, work, ckpt, [os.path.join(data, "test", "images")], "scenes", "masks",
                        folder)
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
    # Into the data set's own folder (make-dataset names its masks as predictions are named):
    # refused before anything is written, and not one file there changes.
    own = os.path.join(data, "test")

    def tree(root):
        out = {}
        for d, _, files in os.walk(root):
            for name in files:
                with open(os.path.join(d, name), "rb") as f:
                    out[os.path.join(d, name)] = f.read()
        return out
    before = tree(own)
    done = subprocess.run([cli, "eval", ckpt, "--data", project, "--limit", "5", "--predictions",
                           own], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 2 or "is not empty" not in done.stdout:
        sys.exit("task_flows: scenes: eval --predictions into the data's folder was not refused "
                 "(%d):\n%s" % (done.returncode, done.stdout[-1500:]))
    if tree(own) != before:
        sys.exit("task_flows: scenes: eval --predictions changed files in the data's folder")
    refused(cli, work, project, "mixup", lambda q: q["augment"].append({"transform": "MixUp"}),
            ["validate"], "MixUp moves or mixes pixels but cannot move a mask")
    refused(cli, work, project, "narrow_head",
            lambda q: [n["params"].update(out_channels=4) for n in q["model"]["nodes"]
                       if n["id"] == "out"],
            ["validate"], "set out.out_channels to %d" % k)
    export_verified(cli, "scenes", ckpt)
    onnx_path = os.path.join(os.path.dirname(os.path.dirname(ckpt)), "exports", "best.onnx")
    # (eval's folder now holds a later run's 50: the checkpoint's predict wrote all 200.)
    predict_equals_eval(cli, work, onnx_path, [os.path.join(data, "test", "images")], "scenes",
                        "masks", os.path.join(work, "scenes-predict"), True)
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


def coco_eval(truth, results, classes, max_dets=100):
    """COCO's bbox evaluation written here from its definition (pycocotools' COCOeval, which
    Debian does not package), on a truth dataset and a results list as COCO files hold them:
    per image and class the detections, best score first (the first max_dets), take at each IoU
    threshold the unmatched true box of the highest IoU (ignored boxes: crowd, difficult or
    outside the area range, only when no other is left; a crowd box IoU over the detection's
    area and any number of matches); per class and range precision made monotone and read at
    the 101 recalls. Returns {figure: value} and per-class AP, AP50 and recall."""
    thresholds = np.linspace(0.5, 0.95, 10)
    recalls = np.linspace(0, 1, 101)
    ranges = {"all": (0, 1e10), "small": (0, 32 ** 2), "medium": (32 ** 2, 96 ** 2),
              "large": (96 ** 2, 1e10)}
    gts, dts = {}, {}
    for a in truth["annotations"]:
        gts.setdefault((a["image_id"], a["category_id"]), []).append(a)
    for d in results:
        dts.setdefault((d["image_id"], d["category_id"]), []).append(d)
    images = [i["id"] for i in truth["images"]]

    def iou(d, g, crowd):
        dx, dy, dw, dh = d
        gx, gy, gw, gh = g
        iw = max(0.0, min(dx + dw, gx + gw) - max(dx, gx))
        ih = max(0.0, min(dy + dh, gy + gh) - max(dy, gy))
        inter = iw * ih
        union = dw * dh if crowd else dw * dh + gw * gh - inter
        return inter / union if union > 0 else 0.0

    def evaluate(image, cat, lo, hi):
        g = gts.get((image, cat), [])
        d = sorted(dts.get((image, cat), []), key=lambda x: -x["score"])[:max_dets]
        ignore = [bool(x["iscrowd"] or x.get("difficult", 0) or not lo <= x["area"] <= hi)
                  for x in g]
        order = sorted(range(len(g)), key=lambda i: ignore[i])  # kept boxes first
        g = [g[i] for i in order]
        ignore = [ignore[i] for i in order]
        crowd = [bool(x["iscrowd"]) for x in g]
        T = len(thresholds)
        gt_match = np.zeros((T, len(g)), bool)
        dt_match = np.zeros((T, len(d)), bool)
        dt_ignore = np.zeros((T, len(d)), bool)
        for t, thr in enumerate(thresholds):
            for di, det in enumerate(d):
                best, m = min(thr, 1 - 1e-10), -1
                for gi, gt in enumerate(g):
                    if gt_match[t, gi] and not crowd[gi]:
                        continue
                    if m > -1 and not ignore[m] and ignore[gi]:
                        break
                    v = iou(det["bbox"], gt["bbox"], crowd[gi])
                    if v < best:
                        continue
                    best, m = v, gi
                if m == -1:
                    continue
                dt_ignore[t, di] = ignore[m]
                dt_match[t, di] = True
                gt_match[t, m] = True
        area = np.array([x["bbox"][2] * x["bbox"][3] for x in d])
        outside = (area < lo) | (area > hi) if len(d) else np.zeros(0, bool)
        dt_ignore |= ~dt_match & outside[None, :]
        return [x["score"] for x in d], dt_match, dt_ignore, sum(not i for i in ignore)

    cats = [c["id"] for c in truth["categories"]]
    out = {}
    per_class = {"ap": [], "ap50": [], "recall": []}
    for name, (lo, hi) in ranges.items():
        precision = -np.ones((len(thresholds), 101, len(cats)))
        recall = -np.ones((len(thresholds), len(cats)))
        for k, cat in enumerate(cats):
            scores, matches, ignores, npig = [], [], [], 0
            for image in images:
                s_, m_, i_, n_ = evaluate(image, cat, lo, hi)
                scores += s_
                matches.append(m_)
                ignores.append(i_)
                npig += n_
            if npig == 0:
                continue
            order = np.argsort(-np.array(scores), kind="mergesort")
            m = np.concatenate(matches, 1)[:, order]
            ig = np.concatenate(ignores, 1)[:, order]
            tps = np.cumsum(m & ~ig, 1).astype(float)
            fps = np.cumsum(~m & ~ig, 1).astype(float)
            for t in range(len(thresholds)):
                tp, fp = tps[t], fps[t]
                rc = tp / npig
                pr = tp / (fp + tp + np.spacing(1))
                recall[t, k] = rc[-1] if len(tp) else 0
                pr = pr.tolist()
                for i in range(len(pr) - 1, 0, -1):
                    pr[i - 1] = max(pr[i - 1], pr[i])
                q = np.zeros(101)
                for ri, pi in enumerate(np.searchsorted(rc, recalls, side="left")):
                    if pi < len(pr):
                        q[ri] = pr[pi]
                precision[t, :, k] = q

        def mean(v):
            v = v[v > -1]
            return float(v.mean()) if v.size else math.nan
        key = "map" if name == "all" else "map_" + name
        out[key] = mean(precision)
        if name == "all":
            out["map50"] = mean(precision[0])
            out["map75"] = mean(precision[5])
            out["recall"] = mean(recall)
            for k in range(len(cats)):
                per_class["ap"].append(mean(precision[:, :, k]))
                per_class["ap50"].append(mean(precision[0, :, k]))
                per_class["recall"].append(mean(recall[:, k]))
    return out, per_class


def decode_head(out, classes, stride, score_threshold=0.05, pre_nms=1000, nms_iou=0.6,
                max_dets=100):
    """The head's detections written here from its documented conventions
    (task/detection_head.h), with torchvision's batched_nms: one image's K+5 x H x W output ->
    [(class, [x0, y0, x1, y1], score)] best first."""
    import torch
    import torchvision
    k = classes
    _, h, w = out.shape
    sig = lambda x: 1 / (1 + np.exp(-x.astype(np.float64)))
    score = np.sqrt(sig(out[:k]) * sig(out[k + 4])[None])
    dist = np.exp(np.minimum(out[k:k + 4].astype(np.float64), 10)) * stride
    py, px = np.meshgrid((np.arange(h) + 0.5) * stride, (np.arange(w) + 0.5) * stride,
                         indexing="ij")
    boxes = np.stack([np.clip(px - dist[0], 0, w * stride), np.clip(py - dist[1], 0, h * stride),
                      np.clip(px + dist[2], 0, w * stride), np.clip(py + dist[3], 0, h * stride)])
    c, i, j = np.nonzero(score >= score_threshold)  # class, row, column order
    s = score[c, i, j]
    order = np.argsort(-s, kind="mergesort")[:pre_nms]
    c, i, j, s = c[order], i[order], j[order], s[order]
    b = boxes[:, i, j].T
    keep = (b[:, 2] > b[:, 0]) & (b[:, 3] > b[:, 1])
    c, b, s = c[keep], b[keep], s[keep]
    kept = torchvision.ops.batched_nms(torch.tensor(b), torch.tensor(s), torch.tensor(c),
                                       nms_iou).numpy()[:max_dets]
    return [(int(c[x]), b[x].tolist(), float(s[x])) for x in kept]


def coco_source_results(cli, work, project, ckpt, data, report):
    """The test split as a user's own COCO data set: the images at twice the size, image ids
    from 1000 and category ids in tens. eval --predictions must give results in those ids and
    in those images' pixels, so that they score against the user's own annotations file (as
    pycocotools users do) to the figures eval reports (IoUs do not change with the scale)."""
    import cv2
    with open(os.path.join(data, "test", "annotations.json")) as f:
        given = json.load(f)
    folder = os.path.join(work, "user_coco")
    os.makedirs(os.path.join(folder, "images"), exist_ok=True)
    image_id = {i["id"]: 1000 + n for n, i in enumerate(given["images"])}
    category_id = {c["id"]: 10 * (n + 1) for n, c in enumerate(given["categories"])}
    user = {"images": [], "annotations": [], "categories": []}
    for i in given["images"]:
        picture = cv2.imread(os.path.join(data, "test", "images", os.path.basename(i["file_name"])),
                             cv2.IMREAD_GRAYSCALE)
        name = "big_" + os.path.basename(i["file_name"])
        cv2.imwrite(os.path.join(folder, "images", name),
                    cv2.resize(picture, None, fx=2, fy=2, interpolation=cv2.INTER_NEAREST))
        user["images"].append({"id": image_id[i["id"]], "file_name": name,
                               "width": 2 * i["width"], "height": 2 * i["height"]})
    for a in given["annotations"]:
        user["annotations"].append(dict(a, image_id=image_id[a["image_id"]],
                                        category_id=category_id[a["category_id"]],
                                        bbox=[2 * v for v in a["bbox"]],
                                        area=4 * a.get("area", a["bbox"][2] * a["bbox"][3])))
    user["categories"] = [dict(c, id=category_id[c["id"]]) for c in given["categories"]]
    with open(os.path.join(folder, "instances.json"), "w") as f:
        json.dump(user, f)
    with open(project) as f:
        p = json.load(f)
    for split in ("train", "test"):
        p["data"][split] = {"format": "coco", "images": os.path.join(folder, "images"),
                            "annotations": os.path.join(folder, "instances.json")}
    p["data"].pop("classes", None)
    coco_project = os.path.join(work, "user_coco.netsmith.json")
    with open(coco_project, "w") as f:
        json.dump(p, f)
    dets = os.path.join(work, "user_coco-dets.json")
    mine = json.loads(run([cli, "eval", ckpt, "--data", coco_project, "--json", "--predictions",
                           dets]))
    with open(dets) as f:
        results = json.load(f)
    ids = {i["id"] for i in user["images"]}
    cats = {c["id"] for c in user["categories"]}
    if not results or any(r["image_id"] not in ids or r["category_id"] not in cats
                          for r in results):
        sys.exit("task_flows: detection: results name images or categories the user's file has "
                 "not")
    if max(r["bbox"][0] + r["bbox"][2] for r in results) <= 64:
        sys.exit("task_flows: detection: the results are in the model's 64 pixels, not the "
                 "images' 128")
    figures, _ = coco_eval(user, results, [c["name"] for c in user["categories"]])
    for key in ("map", "map50", "map75"):
        close("detection on the user's COCO file: " + key, mine["figures"][key], figures[key])
        # The same model on the same pictures at twice the size: the figures of the 64-pixel
        # evaluation, up to the resampling of the pictures.
        if abs(mine["figures"][key] - report["figures"][key]) > 0.02:
            sys.exit("task_flows: detection: %s %.4f at twice the size, %.4f at the model's" %
                     (key, mine["figures"][key], report["figures"][key]))
    print("detection: results in the user's COCO ids and pixels score mAP %.4f against their "
          "own file (eval: %.4f)" % (figures["map"], mine["figures"]["map"]))


def detection(cli, source, work):
    import cv2
    report, ckpt, project, predictions, data = train_and_eval(
        cli, source, work, "scenes_detection", 4, "scenes_detection-predictions.json", "scenes")
    predict_equals_eval(cli, work, ckpt, [os.path.join(data, "test", "images")], "scenes_detection",
                        "coco", predictions)
    with open(predictions) as f:
        results = json.load(f)
    with open(predictions[:-len(".json")] + ".truth.json") as f:
        truth = json.load(f)
    if report["samples"] != 200 or len(truth["images"]) != 200:
        sys.exit("task_flows: detection: %d samples, %d images" % (report["samples"],
                                                                    len(truth["images"])))
    # The truth is the data's: the test split's COCO file as make-dataset wrote it (the model's
    # size is the images', so the boxes are the same pixels).
    with open(os.path.join(data, "test", "annotations.json")) as f:
        given = json.load(f)
    by_name = {i["id"]: os.path.basename(i["file_name"]) for i in given["images"]}
    want = {}
    for a in given["annotations"]:
        want.setdefault(by_name[a["image_id"]], []).append((a["category_id"], a["bbox"]))
    name_of = {i["id"]: os.path.basename(i["file_name"]) for i in truth["images"]}
    got = {}
    for a in truth["annotations"]:
        got.setdefault(name_of[a["image_id"]], []).append((a["category_id"], a["bbox"]))
    given_cats = {c["id"]: c["name"] for c in given["categories"]}
    truth_cats = {c["id"]: c["name"] for c in truth["categories"]}
    for name in name_of.values():
        a = sorted((given_cats[c], b) for c, b in want.get(name, []))
        b = sorted((truth_cats[c], b) for c, b in got.get(name, []))
        if len(a) != len(b) or any(x[0] != y[0] or max(abs(p - q) for p, q in zip(x[1], y[1])) >
                                   1e-3 for x, y in zip(a, b)):
            sys.exit("task_flows: detection: %s: the true boxes %s differ from the data's %s"
                     % (name, b, a))
    figures, per_class = coco_eval(truth, results, [c["name"] for c in truth["categories"]])
    for key, value in figures.items():
        got = report["figures"][key]
        close("detection " + key, math.nan if got is None else got, value)
    for key, values in per_class.items():
        for c, value in enumerate(values):
            got = report["per_class_figures"][key][c]
            close("detection %s of class %d" % (key, c), math.nan if got is None else got, value)
    coco_source_results(cli, work, project, ckpt, data, report)
    refused(cli, work, project, "mixup", lambda q: q["augment"].append({"transform": "MixUp"}),
            ["validate"], "MixUp moves or mixes pixels but cannot move a mask or boxes")
    refused(cli, work, project, "narrow_head",
            lambda q: [n["params"].update(out_channels=7) for n in q["model"]["nodes"]
                       if n["id"] == "head"],
            ["validate"], "set head.out_channels to 15")
    # The export: the raw head in OpenCV DNN, decoded here, gives eval's detections.
    export_verified(cli, "detection", ckpt)
    # With the decoder and its NonMaxSuppression, which ONNX Runtime runs whole.
    nms = export_verified(cli, "detection", ckpt,
                          ["--nms", "--onnx", os.path.join(work, "nms.onnx")], int8=False)
    if "each within the boxes and over the score threshold" not in nms:
        sys.exit("task_flows: detection: ONNX Runtime did not check NMS's rows:\n" + nms[-3000:])
    # The file as shipped (decoder and NMS in it) predicts with its raw head's output.
    predict_equals_eval(cli, work, os.path.join(work, "nms.onnx"),
                        [os.path.join(data, "test", "images")], "scenes_detection", "coco",
                        predictions, True)
    onnx_path = os.path.join(os.path.dirname(os.path.dirname(ckpt)), "exports", "best.onnx")
    # What the model costs deployed: both runtimes time the raw head; only ONNX Runtime runs the
    # file with NonMaxSuppression, and OpenCV's refusal is said, not fatal.
    for r in bench_checked(cli, "detection", onnx_path, project)["runtimes"]:
        if "error" in r:
            sys.exit("task_flows: detection: bench: %s: %s" % (r["runtime"], r["error"]))
    with_nms = bench_checked(cli, "detection", os.path.join(work, "nms.onnx"), project)
    errors = [r.get("error", "") for r in with_nms["runtimes"]]
    if errors[0] or "NonMaxSuppression" not in errors[1]:
        sys.exit("task_flows: detection: bench of the file with NMS: %s" % with_nms)
    meta = onnx_metadata(onnx_path)
    if meta.get("task") != "detection":
        sys.exit("task_flows: detection: ONNX metadata %s" % meta)
    classes = len(truth["categories"])
    net = cv2.dnn.readNetFromONNX(onnx_path)
    mean = json.loads(meta["normalization_mean"])[0]
    std = json.loads(meta["normalization_std"])[0]
    # The truth names each image as the data does: its file in the images folder.
    files = [os.path.join(data, "test", "images", i["file_name"]) for i in truth["images"]]
    ids = [i["id"] for i in truth["images"]]
    images = np.stack([cv2.imread(p, cv2.IMREAD_GRAYSCALE) for p in files])
    net.setInput((images.astype(np.float32)[:, None] / 255 - mean) / std)
    heads = net.forward()
    stride = images.shape[1] // heads.shape[2]
    by_image = {}
    for r in results:
        by_image.setdefault(r["image_id"], []).append(r)
    same = 0
    for n, image_id in enumerate(ids):
        mine = decode_head(heads[n], classes, stride)
        theirs = by_image.get(image_id, [])
        if len(mine) == len(theirs) and all(
                c + 1 == r["category_id"] and abs(s - r["score"]) < 1e-4 and
                max(abs(p - q) for p, q in zip(b, [r["bbox"][0], r["bbox"][1],
                                                   r["bbox"][0] + r["bbox"][2],
                                                   r["bbox"][1] + r["bbox"][3]])) < 1e-2
                for (c, b, s), r in zip(mine, theirs)):
            same += 1
    # The exported model.py's decode() on the same head: eval's detections too.
    import importlib.util
    import torch
    spec = importlib.util.spec_from_file_location(
        "flow_detector", os.path.join(os.path.dirname(onnx_path), "best.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    decoded = module.decode(torch.from_numpy(heads))
    agree = 0
    for n, image_id in enumerate(ids):
        b, sc, c = decoded[n]
        theirs = by_image.get(image_id, [])
        if len(theirs) == len(sc) and all(
                int(c[i]) + 1 == r["category_id"] and abs(float(sc[i]) - r["score"]) < 1e-4
                for i, r in enumerate(theirs)):
            agree += 1
    if agree < 0.98 * len(ids):
        sys.exit("task_flows: detection: model.py's decode() gives eval's detections on %d of "
                 "%d images" % (agree, len(ids)))
    # Near-equal scores (ONNX vs LibTorch differ by ~1e-6) may reorder two detections.
    if same < 0.98 * len(ids):
        sys.exit("task_flows: detection: the ONNX head decoded with torchvision's NMS gives "
                 "eval's detections on %d of %d images" % (same, len(ids)))
    print("detection: mAP %.4f, mAP@.5 %.4f (the COCO definition here agrees); ONNX in OpenCV "
          "DNN decoded with torchvision's NMS gives eval's detections on %d of %d images, model.py's "
          "decode() on %d" % (report["figures"]["map"], report["figures"]["map50"], same,
                              len(ids), agree))


def losses(cli, source, work):
    """Every loss the flows above do not train (they train BCE, Huber, CE+Dice and FCOS): one
    short run each, and the test loss the run recorded equals eval's on its checkpoint (eval
    builds the task the way the run did, loss and label smoothing included)."""
    cases = [("mosaics", "focal", None), ("rotations", "mse", None), ("rotations", "l1", None),
             ("scenes", "cross_entropy", None), ("scenes", "dice", None),
             ("scenes", "ce_dice", 0.1)]
    for name, loss, smoothing in cases:
        tag = "%s-%s" % (name, loss)
        with open(os.path.join(source, "resources/examples/%s.netsmith.json" % name)) as f:
            example = json.load(f)
        folder = example["data"]["train"]["format"] == "mask_folders"
        train_and_eval(cli, source, work, name, 1,
                       predictions_name=tag + ("-predictions" if folder else "-predictions.csv"),
                       loss=loss, smoothing=smoothing)
        print("%s: the run's test loss equals eval's" % tag)
    # Classification: cross-entropy with label smoothing, on 600 Fashion-MNIST images.
    project = os.path.join(work, "fashion-smoothing.netsmith.json")
    with open(os.path.join(source, "resources/examples/fashion_mnist.netsmith.json")) as f:
        p = json.load(f)
    p["train"]["label_smoothing"] = 0.1
    p["train"]["epochs"] = 1
    with open(project, "w") as f:
        json.dump(p, f)
    runs = os.path.join(work, "runs-smoothing")
    run([cli, "train", project, "--limit-train", "600", "--out", runs])
    run_dir = os.path.join(runs, os.listdir(runs)[0])
    with open(os.path.join(run_dir, "events.jsonl")) as f:
        finished = [json.loads(line) for line in f if '"finished"' in line][-1]
    report = json.loads(run([cli, "eval", os.path.join(run_dir, "checkpoints", "best.safetensors"),
                             "--data", project, "--json"]))
    got, want = finished["test"]["loss"], report["loss"]
    if not abs(got - want) <= 1e-3 * abs(want):
        sys.exit("task_flows: classification with label smoothing: the run's recorded test loss "
                 "is %r, eval gives %r" % (got, want))
    print("classification (label smoothing 0.1): the run's test loss equals eval's")
    # predict on 60 test images written as PNGs, against eval on them (a CSV manifest).
    import cv2
    import gzip
    with gzip.open(os.path.join(FMNIST, "t10k-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)
    with gzip.open(os.path.join(FMNIST, "t10k-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    folder = os.path.join(work, "fashion-pngs")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(work, "fashion-pngs.csv"), "w") as f:
        f.write("path,label\n")
        for i in range(60):
            cv2.imwrite(os.path.join(folder, "%03d.png" % i), images[i])
            f.write("fashion-pngs/%03d.png,%d\n" % (i, labels[i]))
    manifest = {"format": "csv", "manifest": os.path.join(work, "fashion-pngs.csv")}
    p["data"] = {"train": manifest, "test": manifest}
    pngs = os.path.join(work, "fashion-pngs.netsmith.json")
    with open(pngs, "w") as f:
        json.dump(p, f)
    ckpt = os.path.join(run_dir, "checkpoints", "best.safetensors")
    evaluated = os.path.join(work, "fashion-pngs-eval.csv")
    run([cli, "eval", ckpt, "--data", pngs, "--predictions", evaluated])
    predict_equals_eval(cli, work, ckpt, [folder], "fashion-pngs", "csv", evaluated)
    # The class named is the most probable one, with its probability.
    for r in read_rows(os.path.join(work, "fashion-pngs-predict.csv")):
        probs = {c[len("prob:"):]: float(r[c]) for c in r if c.startswith("prob:")}
        best = max(probs, key=probs.get)
        if r["prediction"] != best or float(r["probability"]) != probs[best]:
            sys.exit("task_flows: fashion-pngs: %s: predicted %s (%s), the highest probability is "
                     "%s's" % (r["path"], r["prediction"], r["probability"], best))


def main():
    cli, source, work = sys.argv[1], sys.argv[2], sys.argv[3]
    if not os.path.exists(os.path.join(FMNIST, "train-images-idx3-ubyte.gz")):
        print("skipped: no Fashion-MNIST at " + FMNIST)
        sys.exit(77)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    # One task alone when named (ctest runs each as its own test, so none runs for minutes).
    flows = {"multilabel": multilabel, "regression": regression, "segmentation": segmentation,
             "detection": detection, "losses": losses}
    for name, flow in flows.items():
        if len(sys.argv) <= 4 or sys.argv[4] == name:
            flow(cli, source, work)


if __name__ == "__main__":
    main()
