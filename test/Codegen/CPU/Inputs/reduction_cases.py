"""Compiles and runs reductions whose shapes take every path of the CPU
reduction schedules (Reductions.cpp): along rows (whole vector steps, a
scalar tail, fused elementwise producers, rows too short to vectorize) and
along columns (a peeled column edge, reduction loops kept around a register
accumulator), checking each against float64 NumPy.

Usage: reduction_cases.py NNC NNC_RUN WORKDIR
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


def uniform(*shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


def silu(x):
    return x / (1 + np.exp(-x))


def axes(name, values):
    return (name, np.array(values, np.int64))


failed = 0


def case(name, nodes, inputs, expected, initializers=()):
    global failed
    if not run_case(nnc, nnc_run, work, name, nodes, inputs, ("y", expected), initializers):
        failed += 1


# Rows: global average pooling over 112x112 (H and W become one row of 12544,
# four vectors a step, no tail).
x = uniform(1, 32, 112, 112)
case("row_gap_112", helper.make_node("GlobalAveragePool", ["x"], ["y"]), [("x", x)],
     x.astype(np.float64).mean(axis=(2, 3), keepdims=True))

# SiLU fused into the pooling over 7x7: 49 = three vectors and a scalar tail.
x = uniform(1, 1280, 7, 7) * 4
case("row_silu_gap_7x7",
     [helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("Mul", ["x", "s"], ["m"]),
      helper.make_node("GlobalAveragePool", ["m"], ["y"])],
     [("x", x)], silu(x.astype(np.float64)).mean(axis=(2, 3), keepdims=True))

# 3x3 pools: H and W together are shorter than a vector, left to scalar
# loops (the op is not collapsed only to be given up).
x = uniform(2, 8, 3, 3)
case("row_gap_3x3", helper.make_node("GlobalAveragePool", ["x"], ["y"]), [("x", x)],
     x.astype(np.float64).mean(axis=(2, 3), keepdims=True))

# Softmax over rows of 1000: its maximum (neutral element -inf, all inputs
# negative) and its sum, 15 steps of 64 and a tail of 40.
x = uniform(64, 1000) * 8 - 20
e = np.exp(x.astype(np.float64) - x.astype(np.float64).max(axis=1, keepdims=True))
case("row_softmax_1000", helper.make_node("Softmax", ["x"], ["y"], axis=1), [("x", x)],
     e / e.sum(axis=1, keepdims=True))

# A maximum over rows of 100 whose values are all below zero.
x = uniform(37, 100) - 3
case("row_max_negative", helper.make_node("ReduceMax", ["x"], ["y"], axes=[1], keepdims=0),
     [("x", x)], x.astype(np.float64).max(axis=1))

# Rows of 20: one vector and a tail of four.
x = uniform(300, 20)
case("row_sum_20", helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=1),
     [("x", x)], x.astype(np.float64).sum(axis=1, keepdims=True), [axes("axes", [1])])

# Rows of 9, shorter than a vector: left to scalar loops.
x = uniform(100, 9)
case("row_sum_9", helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=1),
     [("x", x)], x.astype(np.float64).sum(axis=1, keepdims=True), [axes("axes", [1])])

# The sum of squares, its square in the row's body.
x = uniform(64, 333)
case("row_sum_square", helper.make_node("ReduceSumSquare", ["x"], ["y"], axes=[1], keepdims=0),
     [("x", x)], (x.astype(np.float64) ** 2).sum(axis=1))

# Pooling what a shifted-window convolution computed: its 16x16 output is a
# slice of 16x18 rows, whose H and W cannot be one row without a copy (in
# each thread chunk, which the memory plan refuses): the rows stay apart.
x = uniform(1, 32, 16, 16)
w = uniform(64, 32, 3, 3) * 0.1
xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
conv = sum(np.einsum("oc,nchw->nohw", w[:, :, i, j].astype(np.float64), xp[:, :, i:i + 16, j:j + 16])
           for i in range(3) for j in range(3))
case("row_gap_after_shifted_conv",
     [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
      helper.make_node("Relu", ["c"], ["r"]), helper.make_node("GlobalAveragePool", ["r"], ["y"])],
     [("x", x)], np.maximum(conv, 0).mean(axis=(2, 3), keepdims=True), [("w", w)])

# Columns: a 1x1 convolution's [49, 1280] result pooled after SiLU: the
# channels stay on the vector, 7x7 reduction steps around each column tile.
x = uniform(1, 320, 7, 7)
w = uniform(1280, 320, 1, 1) * 0.1
b = uniform(1280)
conv = np.einsum("oi,nihw->nohw", w[:, :, 0, 0].astype(np.float64), x.astype(np.float64)) \
    + b.astype(np.float64)[None, :, None, None]
case("column_conv_silu_gap",
     [helper.make_node("Conv", ["x", "w", "b"], ["c"]), helper.make_node("Sigmoid", ["c"], ["s"]),
      helper.make_node("Mul", ["c", "s"], ["m"]), helper.make_node("GlobalAveragePool", ["m"], ["y"])],
     [("x", x)], silu(conv).mean(axis=(2, 3), keepdims=True), [("w", w), ("b", b)])

# A sum over the leading axis: 300 steps down columns of 70 (one tile of 64
# and a peeled edge of 6).
x = uniform(300, 70)
case("column_sum_axis0", helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0),
     [("x", x)], x.astype(np.float64).sum(axis=0), [axes("axes", [0])])

# A minimum over the middle axis, columns of 40 (32 and a peeled 8).
x = uniform(4, 50, 40)
case("column_min_axis1", helper.make_node("ReduceMin", ["x"], ["y"], axes=[1], keepdims=1),
     [("x", x)], x.astype(np.float64).min(axis=1, keepdims=True))

sys.exit(1 if failed else 0)
