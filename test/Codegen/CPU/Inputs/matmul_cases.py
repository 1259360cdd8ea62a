"""Compiles and runs MatMul/Gemm models whose shapes hit every path of the
CPU matmul schedule (cache tiles with edges, peeled register tiles, packed and
unpacked B, batch-1 rows, batched matmuls), checking each against a float64
NumPy product.

Usage: matmul_cases.py NNC NNC_RUN WORKDIR
Prints one line per case: '<name> ok' or '<name> FAIL ...'.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

nnc, nnc_run, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(7)

# name: (A shape, B shape, transB); names starting with "const" make B an
# initializer (its panels are laid out at compile time, zero-padded when 32
# does not divide N).
CASES = {
    "gemv_1x512x1000": ((1, 512), (512, 1000), False),
    "packed_64x784x512": ((64, 784), (784, 512), False),
    "edges_100x70x50": ((100, 70), (70, 50), False),
    "tiny_7x3x33": ((7, 3), (3, 33), False),
    "cache_edges_300x600x290": ((300, 600), (600, 290), False),
    "packed_edges_257x130x160": ((257, 130), (130, 160), False),
    "gemm_transb_64x256x96": ((64, 256), (96, 256), True),
    "batched_2x3x17x40x33": ((2, 3, 17, 40), (2, 3, 40, 33), False),
    "broadcast_b_5x37x64x48": ((5, 37, 64), (64, 48), False),
    "const_gemv_1x300x1000": ((1, 300), (300, 1000), False),
    "const_ragged_40x70x50": ((40, 70), (70, 50), False),
    "const_transb_64x256x10": ((64, 256), (10, 256), True),
}

failed = 0
for name, (a_shape, b_shape, trans_b) in CASES.items():
    a = rng.uniform(-1, 1, a_shape).astype(np.float32)
    b = rng.uniform(-1, 1, b_shape).astype(np.float32)
    bb = b.astype(np.float64).T if trans_b else b.astype(np.float64)
    c = np.matmul(a.astype(np.float64), bb).astype(np.float32)
    if trans_b:
        node = helper.make_node("Gemm", ["a", "b"], ["c"], transB=1)
    else:
        node = helper.make_node("MatMul", ["a", "b"], ["c"])
    constant = name.startswith("const")
    inputs = [helper.make_tensor_value_info("a", TensorProto.FLOAT, a_shape)]
    if not constant:
        inputs.append(helper.make_tensor_value_info("b", TensorProto.FLOAT, b_shape))
    graph = helper.make_graph(
        [node], name, inputs,
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, c.shape)],
        [numpy_helper.from_array(b, "b")] if constant else [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    base = os.path.join(work, name)
    onnx.save(model, base + ".onnx")
    data = base + "_data"
    os.makedirs(data, exist_ok=True)
    for i, (n, v) in enumerate([("a", a)] if constant else [("a", a), ("b", b)]):
        with open(f"{data}/input_{i}.pb", "wb") as f:
            f.write(numpy_helper.from_array(v, n).SerializeToString())
    with open(f"{data}/output_0.pb", "wb") as f:
        f.write(numpy_helper.from_array(c, "c").SerializeToString())
    build = subprocess.run([nnc, base + ".onnx", "-o", base + ".so"],
                           capture_output=True, text=True)
    if build.returncode != 0:
        print(f"{name} FAIL compile: {build.stderr.strip()}")
        failed += 1
        continue
    run = subprocess.run([nnc_run, base + ".so", "--test-data", data, "--threads", "2",
                          "--atol", "1e-4", "--rtol", "1e-4"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        print(f"{name} FAIL run: {run.stdout.strip()} {run.stderr.strip()}")
        failed += 1
    else:
        print(f"{name} ok")
sys.exit(1 if failed else 0)
