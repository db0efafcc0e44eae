#!/usr/bin/env python3
"""The Python half of bench/gpu_check.sh: figures that need PyTorch (and onnxruntime).

    gpu_check.py memory CLI PROJECT DEVICE OUTDIR   Netsmith's memory chart figure (the peak
        allocated bytes its events record) against torch.cuda.max_memory_allocated for the
        same model (its exported model.py), batch size and optimizer, on the same device.
        On a CPU device only Netsmith's figure (process RSS) is printed.
    gpu_check.py onnx CLI CHECKPOINT OUTDIR          ONNX parity: the exported ONNX run in
        onnxruntime against the exported model.py with the same weights, on one random batch.

Each prints one JSON line and exits 1 when a check fails.
"""
import glob
import importlib.util
import json
import os
import subprocess
import sys

import torch
import torch.nn.functional as F


def run(cmd):
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit("gpu_check: %s failed (%d):\n%s%s" % (" ".join(cmd), done.returncode,
                                                       done.stdout[-4000:], done.stderr[-4000:]))
    return done.stdout


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def memory(cli, project, device, out):
    steps = 20
    runs = os.path.join(out, "memory-runs")
    run([cli, "train", project, "--device", device, "--max-batches", str(steps), "--epochs", "1",
         "--limit-train", "20000", "--limit-val", "256", "--limit-test", "256", "--out", runs])
    run_dir = sorted(glob.glob(os.path.join(runs, "*")))[-1]
    peak = 0
    batch = None
    with open(os.path.join(run_dir, "events.jsonl")) as f:
        for line in f:
            e = json.loads(line)
            mem = e.get("memory") or {}
            # CUDA: the allocator's peak; CPU: the process RSS (no peak is kept there).
            peak = max(peak, int(mem.get("peak_bytes", 0) or mem.get("bytes", 0) or 0))
            batch = batch or e.get("batch_size")
    with open(os.path.join(run_dir, "project.json")) as f:
        train = json.load(f).get("train", {})
    batch = int(train.get("batch_size", batch or 128))
    result = {"check": "memory", "device": device, "netsmith_peak_bytes": peak,
              "netsmith_figure": "cuda peak allocated" if device.startswith("cuda") else "process RSS",
              "batch_size": batch, "run": run_dir}
    if device.startswith("cuda"):
        model_py = os.path.join(out, "memory_model.py")
        run([cli, "export", os.path.join(run_dir, "checkpoints", "last.safetensors"),
             "--pytorch", model_py])
        m = load_module(model_py, "gpu_check_memory_model")
        torch.cuda.reset_peak_memory_stats()
        net = m.Model().to(device).train()
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        x = torch.randn((batch,) + tuple(m.INPUT_SIZE), device=device)
        y = torch.randint(0, net(x[:2]).shape[1], (batch,), device=device)
        for _ in range(steps):
            opt.zero_grad()
            loss = F.cross_entropy(net(x), y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), float("inf"))
            opt.step()
        torch.cuda.synchronize()
        theirs = torch.cuda.max_memory_allocated()
        result["pytorch_max_memory_allocated"] = theirs
        result["ratio"] = peak / theirs if theirs else None
        # The two differ by what each holds besides the step (the loader's batch, the
        # evaluation pass): within 25% is a pass, and both figures are printed.
        result["ok"] = bool(theirs) and abs(peak / theirs - 1) <= 0.25
    else:
        result["ok"] = peak > 0
    print(json.dumps(result))
    return 0 if result["ok"] else 1


def onnx(cli, checkpoint, out):
    model_onnx = os.path.join(out, "model.onnx")
    model_py = os.path.join(out, "model.py")
    weights = os.path.join(out, "model.safetensors")
    run([cli, "export", checkpoint, "--onnx", model_onnx, "--pytorch", model_py,
         "--safetensors", weights])
    try:
        import onnxruntime as ort
    except ImportError:
        print(json.dumps({"check": "onnx", "ok": True, "skipped": "no onnxruntime here"}))
        return 0
    m = load_module(model_py, "gpu_check_onnx_model")
    net = m.Model()
    net.load_state_dict(m.load_safetensors(weights), strict=True)
    net.eval()
    x = torch.randn((8,) + tuple(m.INPUT_SIZE), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        ref = net(x).numpy()
    session = ort.InferenceSession(model_onnx, providers=["CPUExecutionProvider"])
    got = session.run(None, {session.get_inputs()[0].name: x.numpy()})[0]
    diff = float(abs(got - ref).max())
    result = {"check": "onnx", "onnxruntime": ort.__version__, "max_abs_diff": diff,
              "ok": diff < 1e-4}
    print(json.dumps(result))
    return 0 if result["ok"] else 1


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "memory":
        return memory(*sys.argv[2:6])
    if len(sys.argv) == 5 and sys.argv[1] == "onnx":
        return onnx(*sys.argv[2:5])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
