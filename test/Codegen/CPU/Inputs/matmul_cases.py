"""Compiles and runs MatMul/Gemm models whose shapes hit every path of the
CPU matmul schedule (cache tiles with edges, peeled register tiles, packed and
unpacked B, batch-1 rows, batched matmuls), checking each against a float64
NumPy product.

Usage: matmul_cases.py NNC NNC_RUN WORKDIR
Prints one line per case: '<name> ok' or '<name> FAIL ...'.
"""
import os
import sys

import numpy as np
from onnx import helper

from case_runner import run_case

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
    "const_classifier_1x1280x1000": ((1, 1280), (1000, 1280), True),
    "rows7_196x64x96": ((196, 64), (64, 96), False),
    "const_rows7_49x300x64": ((49, 300), (300, 64), False),
    "unpacked_24x144x256": ((24, 144), (144, 256), False),
    "packed_strided_24x144x16384": ((24, 144), (144, 16384), False),
    "unpacked_row_1x144x16384": ((1, 144), (144, 16384), False),
}

failed = 0
for name, (a_shape, b_shape, trans_b) in CASES.items():
    a = rng.uniform(-1, 1, a_shape).astype(np.float32)
    b = rng.uniform(-1, 1, b_shape).astype(np.float32)
    bb = b.astype(np.float64).T if trans_b else b.astype(np.float64)
    c = np.matmul(a.astype(np.float64), bb)
    if trans_b:
        node = helper.make_node("Gemm", ["a", "b"], ["c"], transB=1)
    else:
        node = helper.make_node("MatMul", ["a", "b"], ["c"])
    constant = name.startswith("const")
    inputs = [("a", a)] if constant else [("a", a), ("b", b)]
    if not run_case(nnc, nnc_run, work, name, node, inputs, ("c", c),
                    [("b", b)] if constant else []):
        failed += 1
sys.exit(1 if failed else 0)
