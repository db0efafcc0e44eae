#!/usr/bin/python3
"""The data and model doctor with the real CLI, every figure against numpy or OpenCV:

- calibration: a short Fashion-MNIST run evaluated with --fit-temperature; the ECE and MCE it
  prints equal numpy's over the same 15 bins of its --predictions file; the fitted temperature
  lowers the validation NLL; the ONNX file exported with that temperature gives, in OpenCV
  DNN, the probabilities of the predictions file;
- embedding: `eval --embedding` on that run's checkpoint: one row per evaluated sample, labels
  and predictions as its --predictions file has them, and a layout whose trustworthiness
  (scikit-learn, 10 neighbours) of the features it lists is as high as scikit-learn's own
  t-SNE reaches on them;
- test-time augmentation: `eval --tta crops` on that checkpoint gives, in its predictions file,
  the mean of OpenCV DNN's probabilities (the exported ONNX file) over the picture, its mirror
  and four shifted copies, and the accuracy without and with it that numpy counts;
- duplicates: image folders of Fashion-MNIST items with exact and near copies (resized,
  re-encoded as JPEG, brightened) planted across train and test: `doctor --no-labels` reports
  exactly those pairs as leakage; the same folders without the copies give no pair.

  doctor_flow.py NETSMITH_CLI WORK_DIR
"""
import csv
import gzip
import json
import os
import shutil
import subprocess
import sys

import cv2
import numpy as np

from flow_support import run as run_flow

DATA = "/usr/share/datasets/fashion-mnist"
FLOW = "doctor_flow"
HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd):
    return run_flow(FLOW, cmd)


def run_json(cmd):
    """`cmd`'s standard output as JSON (its progress on stderr left out)."""
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit("%s: %s failed (%d):\n%s" % (FLOW, " ".join(cmd), done.returncode,
                                              done.stderr[-3000:]))
    return json.loads(done.stdout)


def close(what, got, want, tol=1e-6):
    if abs(got - want) > tol:
        sys.exit("%s: %s is %.9g, numpy gives %.9g" % (FLOW, what, got, want))


def idx_images(name):
    with gzip.open(os.path.join(DATA, name)) as f:
        raw = f.read()
    return np.frombuffer(raw, np.uint8, offset=16).reshape(-1, 28, 28)


def ece_mce(probs, labels, bins=15):
    conf = probs.max(1)
    hit = probs.argmax(1) == labels
    b = np.clip(np.ceil(conf * bins).astype(int) - 1, 0, bins - 1)
    ece, mce = 0.0, 0.0
    for k in range(bins):
        m = b == k
        if m.any():
            gap = abs(hit[m].mean() - conf[m].mean())
            ece += m.sum() / len(conf) * gap
            mce = max(mce, gap)
    return ece, mce


def calibration(cli, work):
    project = os.path.join(HERE, "..", "..", "resources", "examples", "fashion_mnist.netsmith.json")
    runs = os.path.join(work, "runs")
    run([cli, "train", project, "--epochs", "1", "--limit-train", "3000", "--limit-val", "2000",
         "--out", runs])
    (name,) = os.listdir(runs)
    ckpt = os.path.join(runs, name, "checkpoints", "best.safetensors")
    predictions = os.path.join(work, "predictions.csv")
    out = run_json([cli, "eval", ckpt, "--fit-temperature", "--limit", "2000",
                    "--predictions", predictions, "--json"])
    rows = list(csv.DictReader(open(predictions)))
    classes = [c for c in rows[0] if c.startswith("prob:")]
    probs = np.array([[float(r[c]) for c in classes] for r in rows])
    labels = np.array([int(r["label"]) for r in rows])
    ece, mce = ece_mce(probs, labels)
    close("ECE", out["calibration"]["ece"], ece)
    close("MCE", out["calibration"]["mce"], mce)
    if out["calibration"]["samples"] != len(rows):
        sys.exit("%s: calibration over %d samples, predictions hold %d" %
                 (FLOW, out["calibration"]["samples"], len(rows)))
    from sklearn.metrics import average_precision_score
    for k, per in enumerate(out["per_class"]):
        want = average_precision_score(labels == k, probs[:, k])
        close("class %d's average precision" % k, per["average_precision"], want, 1e-4)
    nll = -np.log(probs[np.arange(len(labels)), labels]).mean()
    close("test NLL (the loss)", out["loss"], nll, 1e-5)
    fit = out["temperature_fit"]
    if not fit["nll_after"] < fit["nll_before"]:
        sys.exit("%s: the temperature did not lower the validation NLL: %s" % (FLOW, fit))
    recorded = json.load(open(os.path.join(runs, name, "checkpoints", "best.calibration.json")))
    close("recorded temperature", recorded["temperature"], out["temperature"], 0)
    # The ONNX file with the temperature gives the scaled probabilities.
    onnx_path = os.path.join(work, "calibrated.onnx")
    run([cli, "export", ckpt, "--onnx", onnx_path, "--softmax", "--temperature",
         os.path.join(runs, name, "checkpoints", "best.calibration.json")])
    net = cv2.dnn.readNetFromONNX(onnx_path)
    images = idx_images("t10k-images-idx3-ubyte.gz")
    positions = [int(r["path"].rsplit("#", 1)[1]) for r in rows[:200]]
    x = (images[positions].astype(np.float32) / 255.0 - 0.286) / 0.353
    net.setInput(x[:, None, :, :], "input")
    onnx_probs = net.forward("probabilities")
    diff = np.abs(onnx_probs - probs[:200]).max()
    if diff > 1e-4:
        sys.exit("%s: the calibrated ONNX file's probabilities differ from eval's by %g" %
                 (FLOW, diff))
    print("calibration: ECE %.4f MCE %.4f as numpy; T %.3f lowers the validation NLL %.4f -> "
          "%.4f; ONNX within %.1e" % (ece, mce, out["temperature"], fit["nll_before"],
                                      fit["nll_after"], diff))
    return ckpt


def test_time_augmentation(cli, ckpt, work):
    predictions = os.path.join(work, "tta-predictions.csv")
    out = run_json([cli, "eval", ckpt, "--limit", "300", "--tta", "crops", "--predictions",
                    predictions, "--json"])
    onnx_path = os.path.join(work, "plain.onnx")
    run([cli, "export", ckpt, "--onnx", onnx_path, "--softmax"])
    rows = list(csv.DictReader(open(predictions)))
    classes = [c for c in rows[0] if c.startswith("prob:")]
    probs = np.array([[float(r[c]) for c in classes] for r in rows])
    labels = np.array([int(r["label"]) for r in rows])
    images = idx_images("t10k-images-idx3-ubyte.gz")
    positions = [int(r["path"].rsplit("#", 1)[1]) for r in rows]
    x = ((images[positions].astype(np.float32) / 255.0 - 0.286) / 0.353)[:, None, :, :]
    p = 28 // 14
    padded = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    views = [x, x[..., ::-1]] + [padded[:, :, dy:dy + 28, dx:dx + 28]
                                 for dy, dx in ((0, 0), (0, 2 * p), (2 * p, 0), (2 * p, 2 * p))]
    net = cv2.dnn.readNetFromONNX(onnx_path)
    outs = []
    for v in views:
        net.setInput(np.ascontiguousarray(v), "input")
        outs.append(net.forward("probabilities").copy())
    mean = np.mean(outs, 0)
    diff = np.abs(mean - probs).max()
    if diff > 1e-4:
        sys.exit("%s: --tta crops probabilities differ from the mean over OpenCV's views by %g" %
                 (FLOW, diff))
    if out["tta"]["count"] != 6:
        sys.exit("%s: --tta crops averaged %s views, not 6" % (FLOW, out["tta"]["count"]))
    n = len(rows)
    without = float((outs[0].argmax(1) == labels).mean())
    with_tta = float((mean.argmax(1) == labels).mean())
    close("accuracy without TTA", out["tta"]["accuracy_without"], without, 1.5 / n)
    close("accuracy with TTA", out["accuracy"], with_tta, 1.5 / n)
    print("test-time augmentation (crops): probabilities within %.1e of OpenCV's mean over 6 "
          "views; accuracy %.4f -> %.4f as numpy counts" % (diff, without, with_tta))


def embedding(cli, ckpt, work):
    from sklearn.manifold import TSNE, trustworthiness
    layout = os.path.join(work, "embedding.csv")
    predictions = os.path.join(work, "embedding-predictions.csv")
    run([cli, "eval", ckpt, "--limit", "600", "--embedding", layout, "--predictions",
         predictions])
    rows = list(csv.DictReader(open(layout)))
    if len(rows) != 600:
        sys.exit("%s: the embedding holds %d rows for 600 samples" % (FLOW, len(rows)))
    truth = {}
    for r in csv.DictReader(open(predictions)):
        probs = [float(r[c]) for c in r if c.startswith("prob:")]
        truth[r["path"]] = (int(r["label"]), int(np.argmax(probs)), max(probs))
    for r in rows:
        label, predicted, confidence = truth[r["sample"]]
        if (int(r["label"]), int(r["predicted"])) != (label, predicted):
            sys.exit("%s: embedding row %s: label/prediction %s/%s, the predictions file "
                     "says %d/%d" % (FLOW, r["position"], r["label"], r["predicted"], label,
                                     predicted))
        close("confidence of sample " + r["position"], float(r["confidence"]), confidence, 1e-5)
    features = np.array([[float(r[c]) for c in r if c.startswith("f")] for r in rows])
    xy = np.array([[float(r["x"]), float(r["y"])] for r in rows])
    ours = trustworthiness(features, xy, n_neighbors=10)
    theirs = trustworthiness(features, TSNE(perplexity=30, init="pca", random_state=0)
                             .fit_transform(features), n_neighbors=10)
    if ours < 0.9 or ours < theirs - 0.02:
        sys.exit("%s: the layout's trustworthiness is %.4f; scikit-learn's t-SNE reaches %.4f" %
                 (FLOW, ours, theirs))
    print("embedding: %d samples of %d features; trustworthiness %.4f (scikit-learn's t-SNE "
          "%.4f)" % (len(rows), features.shape[1], ours, theirs))


def write_folder(root, items, labels, images):
    for k, i in enumerate(items):
        folder = os.path.join(root, str(labels[i]))
        os.makedirs(folder, exist_ok=True)
        cv2.imwrite(os.path.join(folder, "item%05d.png" % i), images[i])


def duplicates(cli, work):
    images = idx_images("train-images-idx3-ubyte.gz")
    with gzip.open(os.path.join(DATA, "train-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    train_items, test_items = range(0, 300), range(300, 400)
    project = os.path.join(HERE, "..", "..", "resources", "examples", "fashion_mnist.netsmith.json")
    base = json.load(open(project))

    def doctor(tag, plant):
        root = os.path.join(work, tag)
        shutil.rmtree(root, ignore_errors=True)
        write_folder(os.path.join(root, "train"), train_items, labels, images)
        write_folder(os.path.join(root, "test"), test_items, labels, images)
        planted = set()
        if plant:
            # Exact copies and near copies (resized to 40x40, JPEG at quality 85, +12).
            for n, i in enumerate([3, 50]):
                path = os.path.join(root, "test", str(labels[i]), "copy%d.png" % n)
                cv2.imwrite(path, images[i])
                planted.add((i, path, "exact"))
            for n, i in enumerate([7, 120, 250]):
                big = cv2.resize(images[i], (40, 40), interpolation=cv2.INTER_LINEAR)
                ok, jpeg = cv2.imencode(".jpg", big, [cv2.IMWRITE_JPEG_QUALITY, 85])
                near = np.clip(cv2.imdecode(jpeg, cv2.IMREAD_GRAYSCALE).astype(int) + 12, 0, 255)
                path = os.path.join(root, "test", str(labels[i]), "near%d.jpg" % n)
                cv2.imwrite(path, near.astype(np.uint8))
                planted.add((i, path, "near"))
        p = dict(base)
        p["data"] = {"train": {"format": "image_folder", "root": os.path.join(root, "train")},
                     "test": {"format": "image_folder", "root": os.path.join(root, "test")},
                     "fit": "resize", "normalize": "none"}
        path = os.path.join(root, "p.netsmith.json")
        json.dump(p, open(path, "w"))
        out = run_json([cli, "doctor", path, "--no-labels", "--json", "--out",
                        os.path.join(root, "doctor")])
        return out, planted

    clean, _ = doctor("clean", False)
    if clean["duplicates"]["pairs"]:
        sys.exit("%s: pairs reported on data with none: %s" %
                 (FLOW, clean["duplicates"]["pairs"][:3]))
    out, planted = doctor("planted", True)
    found = set()
    for p in out["duplicates"]["pairs"]:
        if not p["leak"]:
            sys.exit("%s: a pair within one split was reported: %s" % (FLOW, p))
        train_item = int(os.path.basename(p["a"]["item"])[4:9])
        found.add((train_item, p["b"]["item"], p["kind"]))
    if found != planted:
        sys.exit("%s: planted %s, found %s" % (FLOW, sorted(planted), sorted(found)))
    if out["duplicates"]["leaks"] != 5 or out["duplicates"]["exact"] != 2:
        sys.exit("%s: counts %s" % (FLOW, out["duplicates"]))
    print("duplicates: the 2 exact and 3 near copies planted across train and test found, "
          "nothing else; none on the clean folders")


def main():
    cli, work = sys.argv[1], sys.argv[2]
    if not os.path.exists(os.path.join(DATA, "train-images-idx3-ubyte.gz")):
        print("Fashion-MNIST is not installed")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    duplicates(cli, work)
    ckpt = calibration(cli, work)
    embedding(cli, ckpt, work)
    test_time_augmentation(cli, ckpt, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
