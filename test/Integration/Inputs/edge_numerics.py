#!/usr/bin/python3
"""Numerics at the edges: NaN, infinities, denormals, extreme magnitudes and
zero-size tensors through compiled code, against float64 references
computed here with numpy (the stable formulations, rounded once to float32).

    edge_numerics.py --out DIR                      write the cases
    edge_numerics.py --out DIR --check NNC NNC_RUN  compile, run and compare
        [--target cuda --device cuda-emulated]

Each case is an ONNX model with one test data set (ONNX's layout);
nnc-run --test-data compares with atol 1e-5 + rtol 1e-4 (or the case's own
tolerance), NaN only matching NaN and an infinity only the same infinity. Prints PASS/FAIL per case and a
summary line.
"""

import argparse
import math
import struct
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, mapping, numpy_helper

F32 = TensorProto.FLOAT
INF, NAN = np.inf, np.nan
# The smallest normal float32 is 1.18e-38; these are below it.
DENORMALS = np.array([1e-39, -3e-40, 1.4e-45, 5e-42], dtype=np.float32)


def model(nodes, inputs, outputs, opset=17, initializers=(), elem=F32):
    """elem None: each input's element type is its array's."""
    graph = helper.make_graph(
        nodes, "edge",
        [helper.make_tensor_value_info(n, a.data_type, list(a.dims))
         if isinstance(a, TensorProto) else
         helper.make_tensor_value_info(
             n, elem or mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], list(a.shape))
         for n, a in inputs],
        [helper.make_tensor_value_info(n, t, list(a.shape)) for n, t, a in outputs],
        list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def bfloat16(name, values):
    """A BFLOAT16 tensor of `values` rounded once to nearest even (exactly,
    with fractions), as later ONNX versions specify a Cast to it: the sign,
    f32's exponent range and 8 significant bits; beyond its largest finite
    value, an infinity."""
    bits = []
    for v in np.asarray(values).ravel().tolist():
        v = float(v) if not isinstance(v, int) else v
        if v != v:
            bits.append(0x7FC0)
            continue
        sign = 0x8000 if math.copysign(1.0, v) < 0 else 0
        a = abs(Fraction(v)) if math.isfinite(v) else None
        if a is None:
            bits.append(sign | 0x7F80)
            continue
        if a == 0:
            bits.append(sign)
            continue
        exponent = max(math.floor(math.log2(a)), -126)
        while Fraction(2) ** exponent > a and exponent > -126:
            exponent -= 1
        while Fraction(2) ** (exponent + 1) <= a:
            exponent += 1
        quantum = Fraction(2) ** (exponent - 7)
        rounded = round(a / quantum) * quantum  # round() on a Fraction: ties to even
        if rounded >= Fraction(2) ** 128:
            bits.append(sign | 0x7F80)
        else:
            f32 = struct.unpack("<I", struct.pack("<f", float(rounded)))[0]
            assert f32 & 0xFFFF == 0
            bits.append(sign | (f32 >> 16))
    return helper.make_tensor(name, TensorProto.BFLOAT16, list(np.shape(values)),
                              np.array(bits, dtype=np.uint16).tobytes(), raw=True)


def bfloat16_values(values):
    """float64 values rounded to bfloat16 (as the values a bfloat16 tensor
    of them holds)."""
    raw = np.frombuffer(bfloat16("v", np.array(values, dtype=np.float64)).raw_data, np.uint16)
    return (raw.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def softmax64(x, axis=-1):
    x = x.astype(np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore"):
        e = np.exp(x - m)
        return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax64(x, axis=-1):
    x = x.astype(np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))


# Rows a naive exp(x) / sum(exp(x)) gets wrong: exp overflows above 88.7 and
# underflows below -103; -inf entries are masked positions; a row of only
# -inf has no defined distribution (NaN in ONNX Runtime and PyTorch).
SOFTMAX_ROWS = np.array([
    [1000.0, 0.0, -1000.0, 999.0],
    [88.0, 89.0, 90.0, 91.0],
    [-1e4, -1e4 + 1, -1e4 + 2, -1e4 + 3],
    [-INF, 0.0, 1.0, -INF],
    [3e38, 3e38, -3e38, 0.0],
    [-INF, -INF, -INF, -INF],
], dtype=np.float32)


def layer_norm64(x, scale, bias, eps):
    x = x.astype(np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * scale + bias


def cases():
    out = {}

    x = SOFTMAX_ROWS
    out["softmax_extreme"] = (
        model([helper.make_node("Softmax", ["x"], ["y"], axis=-1)], [("x", x)],
              [("y", F32, x)]),
        [x], [softmax64(x).astype(np.float32)])
    # -inf entries have log-probability -inf; the all -inf row is NaN.
    out["log_softmax_extreme"] = (
        model([helper.make_node("LogSoftmax", ["x"], ["y"], axis=-1)], [("x", x)],
              [("y", F32, x)]),
        [x], [log_softmax64(x).astype(np.float32)])

    # Rows a one-pass E[x^2] - E[x]^2 variance gets wrong: a large offset
    # (cancellation), magnitudes whose sum of squares overflows float32 in
    # that form (nnc squares deviations from the mean, so only deviations
    # above 1.8e19, whose squares themselves overflow, give 0 where the
    # float64 reference does not), and a constant row (zero variance: the
    # output is the bias).
    rows = np.array([
        [1e4 + 0.5, 1e4 - 0.5, 1e4 + 0.25, 1e4 - 0.25],
        [3e18, -3e18, 1e18, -1e18],
        [7.0, 7.0, 7.0, 7.0],
        [1e-30, -1e-30, 2e-30, 0.0],
    ], dtype=np.float32)
    scale = np.array([1.0, 2.0, 0.5, -1.0], dtype=np.float32)
    bias = np.array([0.0, 0.1, -0.2, 0.3], dtype=np.float32)
    eps = 1e-5
    out["layer_norm_extreme"] = (
        model([helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=-1,
                                epsilon=eps)],
              [("x", rows)], [("y", F32, rows)],
              initializers=[numpy_helper.from_array(scale, "s"),
                            numpy_helper.from_array(bias, "b")]),
        [rows], [layer_norm64(rows, scale, bias, eps).astype(np.float32)])

    # exp and log over their whole range: overflow to inf, underflow through
    # the denormals to 0, log of 0, of negatives and of denormals.
    e = np.array([-1e4, -104.0, -100.0, -88.0, 0.0, 88.0, 88.7, 89.0, INF, -INF, NAN],
                 dtype=np.float32)
    with np.errstate(over="ignore"):
        out["exp_extreme"] = (
            model([helper.make_node("Exp", ["x"], ["y"])], [("x", e)], [("y", F32, e)]),
            [e], [np.exp(e.astype(np.float64)).astype(np.float32)])
    lg = np.array([0.0, -0.0, -1.0, 1e-45, 1e-39, 1.2e-38, 1.0, 3.4e38, INF, -INF, NAN],
                  dtype=np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["log_extreme"] = (
            model([helper.make_node("Log", ["x"], ["y"])], [("x", lg)], [("y", F32, lg)]),
            [lg], [np.log(lg.astype(np.float64)).astype(np.float32)])

    # Denormals are kept, not flushed to zero, in arithmetic and in sqrt.
    d = DENORMALS
    two = np.array([2.0], dtype=np.float32)
    out["denormals"] = (
        model([helper.make_node("Mul", ["x", "two"], ["m"]),
               helper.make_node("Abs", ["x"], ["a"]),
               helper.make_node("Sqrt", ["a"], ["s"])],
              [("x", d)], [("m", F32, d), ("s", F32, d)],
              initializers=[numpy_helper.from_array(two, "two")]),
        [d], [(d.astype(np.float64) * 2).astype(np.float32),
              np.sqrt(np.abs(d.astype(np.float64))).astype(np.float32)])

    # NaN semantics (ONNX leaves them open; nnc follows numpy and PyTorch):
    # Max, Min, ReduceMax and ReduceMin propagate a NaN; ArgMax and ArgMin
    # take a NaN as the extreme and return the first NaN's index; Relu and
    # Clip pass a NaN through.
    a = np.array([[1.0, NAN, 3.0, -INF], [NAN, 2.0, INF, 0.0], [4.0, 5.0, NAN, NAN]],
                 dtype=np.float32)
    b = np.array([[NAN, 0.0, 5.0, 1.0], [1.0, NAN, -INF, 0.0], [4.0, 6.0, 1.0, 2.0]],
                 dtype=np.float32)
    argmax = np.where(np.isnan(a).any(axis=1), np.argmax(np.isnan(a), axis=1),
                      np.argmax(np.nan_to_num(a, nan=-INF), axis=1)).astype(np.int64)
    argmin = np.where(np.isnan(a).any(axis=1), np.argmax(np.isnan(a), axis=1),
                      np.argmin(np.nan_to_num(a, nan=INF), axis=1)).astype(np.int64)
    lo, hi = np.array(-1.0, np.float32), np.array(1.0, np.float32)
    out["nan_semantics"] = (
        model([helper.make_node("Max", ["a", "b"], ["max"]),
               helper.make_node("Min", ["a", "b"], ["min"]),
               helper.make_node("ReduceMax", ["a"], ["rmax"], axes=[1], keepdims=0),
               helper.make_node("ReduceMin", ["a"], ["rmin"], axes=[1], keepdims=0),
               helper.make_node("ArgMax", ["a"], ["amax"], axis=1, keepdims=0),
               helper.make_node("ArgMin", ["a"], ["amin"], axis=1, keepdims=0),
               helper.make_node("Relu", ["a"], ["relu"]),
               helper.make_node("Clip", ["a", "lo", "hi"], ["clip"])],
              [("a", a), ("b", b)],
              [("max", F32, a), ("min", F32, a), ("rmax", F32, a[:, 0]),
               ("rmin", F32, a[:, 0]), ("amax", TensorProto.INT64, a[:, 0]),
               ("amin", TensorProto.INT64, a[:, 0]), ("relu", F32, a), ("clip", F32, a)],
              opset=13,
              initializers=[numpy_helper.from_array(lo, "lo"), numpy_helper.from_array(hi, "hi")]),
        [a, b], [np.maximum(a, b), np.minimum(a, b), np.max(a, axis=1), np.min(a, axis=1),
                 argmax, argmin, np.where(np.isnan(a), a, np.maximum(a, 0)),
                 np.where(np.isnan(a), a, np.clip(a, -1, 1))])

    # MaxPool propagates a NaN in any tap of a window (PyTorch's max_pool2d
    # does), for odd and even tap counts, strides 1 and 2, and rows wider
    # than a vector (a ragged edge).
    rng = np.random.default_rng(7)
    p = rng.standard_normal((1, 3, 9, 37)).astype(np.float32)
    p.flat[rng.choice(p.size, 12, replace=False)] = NAN
    p.flat[rng.choice(p.size, 4, replace=False)] = INF
    p.flat[rng.choice(p.size, 4, replace=False)] = -INF

    def max_pool64(x, k, s, pad):
        x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)),
                   constant_values=-INF)
        oh, ow = (x.shape[2] - k) // s + 1, (x.shape[3] - k) // s + 1
        y = np.empty(x.shape[:2] + (oh, ow))
        for i in range(oh):
            for j in range(ow):
                y[:, :, i, j] = np.max(x[:, :, i * s:i * s + k, j * s:j * s + k], axis=(2, 3))
        return y.astype(np.float32)

    pools = [("pool3s1", 3, 1, 1), ("pool3s2", 3, 2, 1), ("pool2s2", 2, 2, 0)]
    out["nan_max_pool"] = (
        model([helper.make_node("MaxPool", ["p"], [name], kernel_shape=[k, k], strides=[s, s],
                                pads=[pad] * 4) for name, k, s, pad in pools],
              [("p", p)],
              [(name, F32, max_pool64(p, k, s, pad)) for name, k, s, pad in pools]),
        [p], [max_pool64(p, k, s, pad) for name, k, s, pad in pools])

    # Math that has to be exact or double precision on every target (CUDA
    # kernels expand it without libdevice): fmod (Mod with fmod=1) over
    # magnitudes far apart, signs, zeros, infinities and denormals, exactly;
    # exp and log in f64 over their whole range, to 1e-14 relative.
    pairs = [(7.5, 2.0), (-7.5, 2.0), (7.5, -2.0), (-0.0, 3.0), (5.0, INF), (INF, 2.0),
             (3.0, 0.0), (NAN, 1.0), (1.0, NAN), (3e38, 1.1), (1e38, 1.4e-45), (1e-40, 3e-41),
             (-2.5e-39, 7e-45), (1.0, 3.0), (6.0, 3.0), (16777217.0, 3.0), (0.1, 0.01),
             (3.4e38, 3.3e38), (1e-45, 3.0)]
    for name, dtype, tensor in (("fmod_f32", np.float32, F32),
                                ("fmod_f64", np.float64, TensorProto.DOUBLE)):
        x = np.array([p[0] for p in pairs], dtype=dtype)
        y = np.array([p[1] for p in pairs], dtype=dtype)
        if dtype == np.float64:
            x = np.concatenate([x, [1e308, -1.7e308, 1e-310]])
            y = np.concatenate([y, [5e-324, 3.3e-321, 4.9e-324]])
        with np.errstate(invalid="ignore"):
            out[name] = (
                model([helper.make_node("Mod", ["x", "y"], ["z"], fmod=1)],
                      [("x", x), ("y", y)], [("z", tensor, x)], elem=tensor),
                [x, y], [np.fmod(x, y)], (0.0, 0.0))
    ex = np.concatenate([[-800.0, -745.2, -744.0, -720.0, -708.5, -708.3, -20.5, -1e-300, 0.0,
                          1e-10, 0.34657359, 1.0, 709.7, 709.79, 710.0, INF, -INF, NAN],
                         np.linspace(-707.0, 709.0, 997)])
    lx = np.concatenate([[0.0, -0.0, -1.0, 5e-324, 1e-310, 2.2250738585072014e-308, 0.5,
                          1.0 - 2.0 ** -53, 1.0, 1.0 + 2.0 ** -52, 1.4142135623730951, 2.0,
                          1.7976931348623157e308, INF, -INF, NAN],
                         np.logspace(-307.0, 308.0, 999)])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out["exp_log_f64"] = (
            model([helper.make_node("Exp", ["x"], ["e"]), helper.make_node("Log", ["l"], ["g"])],
                  [("x", ex), ("l", lx)],
                  [("e", TensorProto.DOUBLE, ex), ("g", TensorProto.DOUBLE, lx)],
                  elem=TensorProto.DOUBLE),
            [ex, lx], [np.exp(ex), np.log(lx)], (1e-14, 1e-300))

    # Pow as C's pow: negative bases with integer exponents, NaN for a
    # fractional one, zeros and infinities, x^0 = 1 and 1^y = 1 even for NaN;
    # sinh, asinh and atanh near 0, where their textbook formulas cancel, and
    # sinh, cosh and asinh far from it.
    bases = [-2.0, -2.0, -3.0, -1.0, -1.0, -0.0, -0.0, 0.0, -0.0, -INF, -INF, INF, 2.0, 0.5,
             0.5, -0.5, NAN, 1.0, -8.0, 1e-3, 10.0, -1.5, -2.0]
    exponents = [3.0, 2.0, 0.5, INF, -INF, -1.0, 3.0, -2.0, 2.0, 3.0, -2.0, -0.5, INF, INF,
                 -INF, INF, 0.0, NAN, 1.0 / 3.0, 4.5, -30.0, 41.0, -1075.0]
    small = [1e-30, -1e-20, 1e-8, -3e-6, 1e-3, -0.05, 0.12, 0.3, -0.45, 0.7, 0.0, -0.0]
    # Far from 0: sinh and cosh up to where they overflow (e^|x| alone would
    # overflow first), asinh of large and negative x.
    wide = [0.2, -3.0, 20.5, -50.0, 89.0, -100.0, 709.0, -710.0, 711.0, 1e10, -1e30, INF, -INF]
    for suffix, dtype, tensor, tolerance in (("f32", np.float32, F32, (1e-6, 0.0)),
                                            ("f64", np.float64, TensorProto.DOUBLE, (1e-13, 0.0))):
        b = np.array(bases, dtype=dtype)
        e = np.array(exponents, dtype=dtype)
        x = np.array(small, dtype=dtype)
        x64 = x.astype(np.float64)
        w = np.array(wide, dtype=dtype)
        w64 = w.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            out["pow_sinh_asinh_atanh_" + suffix] = (
                model([helper.make_node("Pow", ["b", "e"], ["p"]),
                       helper.make_node("Sinh", ["x"], ["s"]),
                       helper.make_node("Asinh", ["x"], ["a"]),
                       helper.make_node("Atanh", ["x"], ["t"]),
                       helper.make_node("Sinh", ["w"], ["ws"]),
                       helper.make_node("Cosh", ["w"], ["wc"]),
                       helper.make_node("Asinh", ["w"], ["wa"])],
                      [("b", b), ("e", e), ("x", x), ("w", w)],
                      [("p", tensor, b), ("s", tensor, x), ("a", tensor, x), ("t", tensor, x),
                       ("ws", tensor, w), ("wc", tensor, w), ("wa", tensor, w)],
                      elem=tensor),
                [b, e, x, w],
                [np.power(b.astype(np.float64), e.astype(np.float64)).astype(dtype),
                 np.sinh(x64).astype(dtype), np.arcsinh(x64).astype(dtype),
                 np.arctanh(x64).astype(dtype), np.sinh(w64).astype(dtype),
                 np.cosh(w64).astype(dtype), np.arcsinh(w64).astype(dtype)],
                tolerance)

    # Casts to bfloat16, rounded once to nearest even from f32, f64, int32
    # and f16: ties both ways, values that round to infinity, denormals,
    # NaN; f64 values just off a bf16 tie that rounding to f32 first would
    # move onto it (and then to even, the wrong way).
    tie = 1.0 + 2.0 ** -8  # halfway between bf16's 1 and 1 + 2^-7
    f = np.array([1.0, tie, 1.0 + 3 * 2.0 ** -8, -tie, 0.48046875, 1 / 3, -0.0, INF, -INF, NAN,
                  3.3961e38, 3.3895e38, 1e-39, -1.4e-45, 65504.0], dtype=np.float32)
    d = np.array([tie + 2.0 ** -40, tie - 2.0 ** -40, -(tie + 2.0 ** -40), 1e300, 1e-300, 0.1,
                  -2.5e-39, NAN], dtype=np.float64)
    i = np.array([0, 1, -1, 257, 259, -(2 ** 31), 2 ** 31 - 1, 16777217, 12345], dtype=np.int32)
    h = np.array([1.0, 1.0009765625, -65504.0, 6e-8, INF, NAN], dtype=np.float16)
    # 64-bit: ties and near-ties far past 32 bits, the extremes.
    big = [2 ** 40 + 2 ** 32, 2 ** 40 + 2 ** 32 + 1, 2 ** 40 + 2 ** 32 - 1, 2 ** 40 + 3 * 2 ** 32,
           2 ** 62 + 2 ** 54 + 1]
    q = np.array([0, -1, 2 ** 63 - 1, -(2 ** 63)] + big + [-v for v in big], dtype=np.int64)
    u = np.array([0, 2 ** 64 - 1, 2 ** 63 + 2 ** 55] + big, dtype=np.uint64)
    b8 = np.array([0, 255, 129], dtype=np.uint8)
    sources = (("f", f), ("d", d), ("i", i), ("h", h), ("q", q), ("u", u), ("b", b8))
    out["cast_to_bfloat16"] = (
        model([helper.make_node("Cast", [n], [n + "_bf16"], to=TensorProto.BFLOAT16)
               for n, _ in sources],
              list(sources),
              [(n + "_bf16", TensorProto.BFLOAT16, a) for n, a in sources],
              opset=13, elem=None),
        [a for _, a in sources],
        [bfloat16(n + "_bf16", a) for n, a in sources],
        (0.0, 0.0))

    # Arithmetic on bfloat16 (computed in f32 and rounded once, which gives
    # the correctly rounded bfloat16 result): the reference in float64,
    # whose 53 bits make rounding it to bfloat16 round once too.
    x = bfloat16_values([1.0, 1.0078125, 3.3895e38, -2.5, 1.2e-38, NAN, INF, 0.1, 7.0, -0.0])
    y = bfloat16_values([1.0078125, 2 ** -9, 3.3895e38, 0.3, -1.2e-38, 1.0, 2.0, 3.0, -0.0, 5.0])
    ops = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
           "max": np.maximum}
    onnx_ops = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "max": "Max"}
    with np.errstate(all="ignore"):
        refs = {k: f(x, y) for k, f in ops.items()}
        refs["sqrt"] = np.sqrt(x)
    out["bfloat16_arithmetic"] = (
        model([helper.make_node(onnx_ops[k], ["x", "y"], [k]) for k in ops] +
              [helper.make_node("Sqrt", ["x"], ["sqrt"])],
              [("x", bfloat16("x", x)), ("y", bfloat16("y", y))],
              [(k, TensorProto.BFLOAT16, x) for k in refs],
              opset=13),
        [bfloat16("x", x), bfloat16("y", y)],
        [bfloat16(k, r) for k, r in refs.items()],
        (0.0, 0.0))

    # Zero-size tensors: elementwise ops, a matmul with an empty batch and one
    # with an empty contraction (zeros), reductions over an empty axis (the
    # identity: 0 for a sum, 1 for a product), a concat with an empty input.
    empty = np.zeros((0, 4), dtype=np.float32)
    left = np.arange(6, dtype=np.float32).reshape(2, 3)
    w = np.ones((4, 3), dtype=np.float32)
    none = np.zeros((2, 0), dtype=np.float32)
    none_w = np.zeros((0, 3), dtype=np.float32)
    out["zero_size"] = (
        model([helper.make_node("Relu", ["e"], ["relu"]),
               helper.make_node("MatMul", ["e", "w"], ["mm"]),
               helper.make_node("MatMul", ["n", "nw"], ["mm0"]),
               helper.make_node("ReduceSum", ["e", "axis0"], ["sum"], keepdims=0),
               helper.make_node("ReduceProd", ["e"], ["prod"], axes=[0], keepdims=0),
               helper.make_node("Concat", ["l", "n"], ["cat"], axis=1)],
              [("e", empty), ("n", none), ("l", left)],
              [("relu", F32, empty), ("mm", F32, np.zeros((0, 3))), ("mm0", F32, np.zeros((2, 3))),
               ("sum", F32, np.zeros(4)), ("prod", F32, np.zeros(4)), ("cat", F32, left)],
              opset=13,
              initializers=[numpy_helper.from_array(w, "w"),
                            numpy_helper.from_array(none_w, "nw"),
                            numpy_helper.from_array(np.array([0], dtype=np.int64), "axis0")]),
        [empty, none, left],
        [empty, np.zeros((0, 3), np.float32), np.zeros((2, 3), np.float32),
         np.zeros(4, np.float32), np.ones(4, np.float32), left])
    return out


def write(out_dir):
    for name, (proto, inputs, outputs, *_) in cases().items():
        case = out_dir / name
        data = case / "test_data_set_0"
        data.mkdir(parents=True, exist_ok=True)
        onnx.checker.check_model(proto)
        onnx.save(proto, str(case / "model.onnx"))
        for i, (info, value) in enumerate(zip(proto.graph.input, inputs)):
            if not isinstance(value, TensorProto):
                value = numpy_helper.from_array(value, info.name)
            (data / f"input_{i}.pb").write_bytes(value.SerializeToString())
        for i, (info, value) in enumerate(zip(proto.graph.output, outputs)):
            if not isinstance(value, TensorProto):
                value = numpy_helper.from_array(np.asarray(value), info.name)
            (data / f"output_{i}.pb").write_bytes(value.SerializeToString())


def check(out_dir, nnc, nnc_run, target, device):
    failed = 0
    all_cases = cases()
    names = list(all_cases)
    for name in names:
        case = out_dir / name
        library = str(case / f"{target}.so")
        tolerance = []
        if len(all_cases[name]) > 3:
            rtol, atol = all_cases[name][3]
            tolerance = ["--rtol", str(rtol), "--atol", str(atol)]
        steps = [[nnc, str(case / "model.onnx"), f"-target={target}", "-o", library],
                 [nnc_run, library, f"--device={device}", "--test-data",
                  str(case / "test_data_set_0")] + tolerance]
        for step in steps:
            result = subprocess.run(step, capture_output=True, text=True)
            if result.returncode != 0:
                print(f"FAIL {name}:\n{result.stdout}{result.stderr}")
                failed += 1
                break
        else:
            print(f"PASS {name}")
    print(f"edge numerics ({device}): {len(names)} cases, {len(names) - failed} passed, {failed} failed")
    return failed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--check", nargs=2, metavar=("NNC", "NNC_RUN"))
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    if args.check:
        sys.exit(1 if check(args.out, *args.check, args.target, args.device) else 0)
    write(args.out)


if __name__ == "__main__":
    main()
