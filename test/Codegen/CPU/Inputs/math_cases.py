"""Exp, Erf and Tanh over extreme and ordinary inputs (overflow, underflow,
signed zeros, NaN, infinities), compiled by nnc (which computes them as f32
polynomial approximations, vectorized) and checked against float64 NumPy.

Usage: math_cases.py NNC NNC_RUN WORKDIR
"""
import math
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

nnc, nnc_run, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
special = [-1000, -104, -100, -88, -20, -9, -4, -1, -1e-8, -0.0, 0.0, 1e-8, 0.5, 1, 3, 9,
           20, 88, 88.7, 89, 100, np.nan, np.inf, -np.inf]
rng = np.random.default_rng(3)
# 24 special values, then 1000 ordinary ones: full vectors and a peeled edge.
x = np.concatenate([np.array(special, np.float64), rng.uniform(-12, 12, 1000)]).astype(np.float32)
refs = {
    "Exp": np.exp,
    "Erf": np.vectorize(math.erf, otypes=[np.float64]),
    "Tanh": np.tanh,
}
failed = 0
for op, ref in refs.items():
    with np.errstate(over="ignore", invalid="ignore"):
        y = ref(x.astype(np.float64)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"])], op,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    base = os.path.join(work, op)
    onnx.save(model, base + ".onnx")
    os.makedirs(base, exist_ok=True)
    with open(f"{base}/input_0.pb", "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(f"{base}/output_0.pb", "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())
    build = subprocess.run([nnc, base + ".onnx", "-o", base + ".so"], capture_output=True, text=True)
    run = build.returncode == 0 and subprocess.run(
        [nnc_run, base + ".so", "--test-data", base, "--rtol", "1e-5", "--atol", "1e-6"],
        capture_output=True, text=True)
    if build.returncode != 0 or run.returncode != 0:
        print(f"{op} FAIL {build.stderr.strip()} {run.stdout.strip() if run else ''}")
        failed += 1
    else:
        print(f"{op} ok")
sys.exit(1 if failed else 0)
