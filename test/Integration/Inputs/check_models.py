"""Compiles each model gen_models.py wrote under MODELS_DIR and runs it on its
test data set (PyTorch's float64 outputs) at the model's tolerance
(tolerance.json, from its float32 conditioning), on two threads.

Usage: check_models.py NNC NNC_RUN MODELS_DIR WORKDIR NAME...
Prints '<name> ok' or '<name> FAIL ...' per model, in the order given.
"""
import json
import os
import subprocess
import sys

nnc, nnc_run, models, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
failed = 0
for name in sys.argv[5:]:
    model_dir = os.path.join(models, name)
    so = os.path.join(work, name + ".so")
    build = subprocess.run([nnc, os.path.join(model_dir, "model.onnx"), "-o", so],
                           capture_output=True, text=True)
    if build.returncode != 0:
        print(f"{name} FAIL compile: {build.stderr.strip()}")
        failed += 1
        continue
    with open(os.path.join(model_dir, "tolerance.json")) as f:
        atol = json.load(f)["atol"]
    run = subprocess.run([nnc_run, so, "--test-data", os.path.join(model_dir, "test_data_set_0"),
                          "--atol", str(atol), "--threads", "2"], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"{name} FAIL run: {run.stdout.strip()} {run.stderr.strip()}")
        failed += 1
    else:
        print(f"{name} ok")
    os.remove(so)
sys.exit(1 if failed else 0)
