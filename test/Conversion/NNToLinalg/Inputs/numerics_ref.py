"""Float64 NumPy references for numerics.test.

Usage: numerics_ref.py MODEL.onnxtext OUT_DIR

Writes an ONNX test data set for the model (OUT_DIR/input_<i>.pb with the
inputs, OUT_DIR/output_<i>.pb with the expected outputs) that nnc-run checks
with --test-data. The case is picked by the model's file name; every reference
below is written from the ONNX operator definitions, computed in float64 (or
exactly, for integers) and only then cast to the output's element type. The
model's declared input and output types and shapes are checked against the
generated arrays, so a model edited out of step with its reference fails here.
"""
import os
import sys

import numpy as np
import onnx
import onnx.parser
from onnx import mapping, numpy_helper

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def f32(a):
    return np.asarray(a, dtype=np.float32)


def rand(rng, *shape):
    """Float32 values in [-2, 2) with a few decimals, so ties stay ties."""
    return f32(np.round(rng.uniform(-2, 2, size=shape), 3))


# --- Mod ---------------------------------------------------------------------


@case
def mod(rng):
    a = np.array([[7, -7, 7, -7, 0, 13], [5, -5, -6, 6, 9, -9]], dtype=np.int32)
    b = np.array([3, 3, -3, -3, 4, -4], dtype=np.int32)
    p = f32([5.5, -5.5, 5.5, -5.5, 1.25, -7.0])
    q = f32([2.0, 2.0, -2.0, -2.0, 0.5, 3.0])
    c = np.array([[-10, 10, -1], [17, -17, 4]], dtype=np.int64)
    d = np.array([[4], [-5]], dtype=np.int64)
    u = np.array([250, 7, 0, 129], dtype=np.uint8)
    v = np.array([7, 250, 3, 128], dtype=np.uint8)
    # fmod = 0: the sign of the divisor (Python's %, np.mod); fmod = 1: the
    # sign of the dividend (C's fmod, np.fmod).
    outputs = [np.mod(a, b), np.fmod(a, b), np.fmod(p.astype(np.float64), q.astype(np.float64)),
               np.mod(c, d), np.mod(u, v)]
    return [a, b, p, q, c, d, u, v], outputs


# --- Resize ------------------------------------------------------------------


def keys(d, a):
    """The cubic convolution kernel with coefficient a at distance d >= 0."""
    if d <= 1:
        return (a + 2) * d**3 - (a + 3) * d**2 + 1
    if d < 2:
        return a * d**3 - 5 * a * d**2 + 8 * a * d - 4 * a
    return 0.0


def resize_matrix(n_in, n_out, scale, mode, ctm, a=-0.75, exclude_outside=False):
    """The n_out x n_in matrix of one dim's interpolation weights."""
    w = np.zeros((n_out, n_in))
    for x in range(n_out):
        if ctm == "half_pixel":
            s = (x + 0.5) / scale - 0.5
        elif ctm == "pytorch_half_pixel":
            s = (x + 0.5) / scale - 0.5 if n_out > 1 else 0.0
        elif ctm == "align_corners":
            s = x * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        elif ctm == "asymmetric":
            s = x / scale
        else:
            raise ValueError(ctm)
        if mode == "linear":
            # Outside [0, n_in - 1] the input is extended by its edge values.
            s = min(max(s, 0.0), n_in - 1)
            i0 = int(np.floor(s))
            t = s - i0
            w[x, i0] += 1 - t
            w[x, min(i0 + 1, n_in - 1)] += t
        else:  # cubic: 4 taps around s, the input extended by its edges
            base = int(np.floor(s))
            taps = [base + k for k in (-1, 0, 1, 2)]
            ws = np.array([keys(abs(s - i), a) for i in taps])
            if exclude_outside:
                ws = np.where([0 <= i < n_in for i in taps], ws, 0.0)
                ws = ws / ws.sum()
            for i, wi in zip(taps, ws):
                w[x, min(max(i, 0), n_in - 1)] += wi
    return w


def resize(x, out_shape, mode, ctm, scales=None, a=-0.75, exclude_outside=False):
    y = x.astype(np.float64)
    for axis, (n_in, n_out) in enumerate(zip(x.shape, out_shape)):
        scale = scales[axis] if scales is not None else n_out / n_in
        if n_in == n_out and scale == 1:
            continue
        m = resize_matrix(n_in, n_out, scale, mode, ctm, a, exclude_outside)
        y = np.moveaxis(np.tensordot(m, np.moveaxis(y, axis, 0), axes=1), 0, axis)
    return y


@case
def resize_modes(rng):
    x = rand(rng, 1, 1, 3, 4)
    return [x], [
        resize(x, (1, 1, 5, 7), "linear", "align_corners"),
        resize(x, (1, 1, 2, 6), "linear", "half_pixel"),
        resize(x, (1, 1, 6, 6), "linear", "half_pixel", scales=[1, 1, 2, 1.5]),
        resize(x, (1, 1, 1, 6), "linear", "pytorch_half_pixel"),
        resize(x, (1, 1, 7, 3), "cubic", "half_pixel", a=-0.5, exclude_outside=True),
        resize(x, (1, 1, 6, 8), "cubic", "asymmetric", scales=[1, 1, 2, 2]),
        resize(x, (1, 1, 5, 7), "cubic", "align_corners"),
    ]


# --- Pad ---------------------------------------------------------------------


def pad(x, pads, mode, value=0.0):
    """ONNX Pad: pads = [begin..., end...]; negative pads remove elements."""
    rank = x.ndim
    begin, end = pads[:rank], pads[rank:]
    x = x[tuple(slice(max(-b, 0), x.shape[d] - max(-e, 0)) for d, (b, e) in enumerate(zip(begin, end)))]
    width = [(max(b, 0), max(e, 0)) for b, e in zip(begin, end)]
    if mode == "constant":
        return np.pad(x, width, mode="constant", constant_values=value)
    if mode == "wrap":
        # The input repeats periodically (a torus), however wide the pad.
        # (np.pad's "wrap" only does that from NumPy 2.0 on.)
        for d, (b, e) in enumerate(width):
            x = np.take(x, (np.arange(-b, x.shape[d] + e)) % x.shape[d], axis=d)
        return x
    return np.pad(x, width, mode=mode)


@case
def pad_modes(rng):
    x = rand(rng, 3, 4)
    return [x], [
        pad(x, [1, 2, 2, 3], "reflect"),
        pad(x, [2, 0, 1, 3], "edge"),
        pad(x, [-1, 2, 1, -2], "constant", 9.5),
    ]


@case
def pad_wrap(rng):
    x = rand(rng, 3, 4)
    return [x], [pad(x, [2, 5, 4, 1], "wrap")]


# --- ConvTranspose -------------------------------------------------------------


def conv_transpose(x, w, b, strides, dilations, pads, output_padding, group):
    """The scatter form: every input element adds input * filter to the
    output positions in * stride + k * dilation, then the pads are cut off."""
    n, c = x.shape[:2]
    mg = w.shape[1]
    cg = c // group
    spatial = x.ndim - 2
    kernel = w.shape[2:]
    full = [strides[i] * (x.shape[2 + i] - 1) + (kernel[i] - 1) * dilations[i] + 1 + output_padding[i]
            for i in range(spatial)]
    y = np.zeros((n, mg * group, *full))
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    for ci in range(c):
        g = ci // cg
        for pos in np.ndindex(*x.shape[2:]):
            for k in np.ndindex(*kernel):
                o = tuple(pos[i] * strides[i] + k[i] * dilations[i] for i in range(spatial))
                y[(slice(None), slice(g * mg, (g + 1) * mg)) + o] += np.outer(x[(slice(None), ci) + pos], w[(ci, slice(None)) + k])
    y = y[(slice(None), slice(None)) + tuple(slice(pads[i], full[i] - pads[spatial + i]) for i in range(spatial))]
    if b is not None:
        y = y + b.astype(np.float64).reshape(1, -1, *([1] * spatial))
    return y


@case
def conv_transpose_cases(rng):
    x, w, b = rand(rng, 1, 4, 3, 3), rand(rng, 4, 3, 3, 3), rand(rng, 6)
    x1, w1 = rand(rng, 1, 1, 4), rand(rng, 1, 1, 2)
    x2, w2 = rand(rng, 1, 2, 3), rand(rng, 2, 1, 3)
    return [x, w, b, x1, w1, x2, w2], [
        conv_transpose(x, w, b, [2, 2], [1, 2], [1, 0, 2, 1], [1, 0], 2),
        conv_transpose(x1, w1, None, [1], [1], [2, 1], [0], 1),
        conv_transpose(x2, w2, None, [3], [1], [0, 1], [2], 2),
    ]


# --- CumSum ------------------------------------------------------------------


def cumsum(x, axis, exclusive=False, reverse=False):
    y = np.flip(x, axis) if reverse else x
    c = np.cumsum(y, axis=axis)
    if exclusive:
        c = c - y
    return np.flip(c, axis) if reverse else c


@case
def cumsum_modes(rng):
    x = rand(rng, 2, 5).astype(np.float64)
    i = rng.integers(-50, 50, size=(3, 4)).astype(np.int32)
    x32 = f32(x)
    x = x32.astype(np.float64)
    return [x32, i], [
        cumsum(x, 1, exclusive=True, reverse=True),
        cumsum(x, 1, exclusive=True),
        cumsum(x, 1, reverse=True),
        cumsum(i, 0, exclusive=True, reverse=True),
    ]


@case
def reduce_mean_unsigned(rng):
    u = np.array([[3000000000, 0], [7, 4]], dtype=np.uint32)
    i = np.array([[-7, 0], [9, 4]], dtype=np.int32)
    # ONNX's reference: the float mean, cast back (truncating toward zero).
    return [u, i], [np.trunc(u.astype(np.float64).mean(axis=1)), np.trunc(i.astype(np.float64).mean(axis=1))]


# --- ArgMin / ArgMax -----------------------------------------------------------


def arg(x, axis, keepdims, last, fn):
    if last:
        r = x.shape[axis] - 1 - fn(np.flip(x, axis), axis=axis)
    else:
        r = fn(x, axis=axis)
    r = r.astype(np.int64)
    return np.expand_dims(r, axis) if keepdims else r


@case
def arg_ties(rng):
    x = f32([[1, -2, 3, -2, 5, -2],
             [0, 0, 0, 0, 0, 0],
             [4, 1, 4, 1, 4, 2]])
    k = np.array([[3, -1, 7, 7], [9, -1, 7, -5], [9, 2, -8, 7]], dtype=np.int32)
    return [x, k], [
        arg(x, 1, False, True, np.argmin),
        arg(x, 1, False, False, np.argmin),
        arg(k, 0, True, True, np.argmax),
        arg(k, 1, True, False, np.argmax),
    ]


# --- Einsum ------------------------------------------------------------------


@case
def einsum_diagonal(rng):
    a, b, c = rand(rng, 4, 4), rand(rng, 2, 3, 3), rand(rng, 3, 3, 2)
    d, e = rand(rng, 3, 3), rand(rng, 3, 5)
    d64 = lambda v: v.astype(np.float64)
    return [a, b, c, d, e], [
        np.einsum("ii->i", d64(a)),
        np.einsum("bii->b", d64(b)),
        np.einsum("iij->j", d64(c)),
        np.einsum("ii,ij->j", d64(d), d64(e)),
    ]


# --- Pooling -----------------------------------------------------------------


def pool(x, kernel, strides, pads, dilations, out_shape, kind, count_include_pad=False):
    """Each output reads the window positions o * stride + k * dilation - pad.
    Max ignores positions outside the input. Average divides the sum of the
    real elements by the number of positions inside the input, or with
    count_include_pad inside the padded input (the extra positions a ceil_mode
    window has past the end pad never count)."""
    spatial = len(kernel)
    y = np.zeros(x.shape[:2] + tuple(out_shape))
    for o in np.ndindex(*out_shape):
        vals, count = [], 0
        for k in np.ndindex(*kernel):
            p = [o[i] * strides[i] + k[i] * dilations[i] - pads[i] for i in range(spatial)]
            inside = all(0 <= p[i] < x.shape[2 + i] for i in range(spatial))
            padded = all(-pads[i] <= p[i] < x.shape[2 + i] + pads[spatial + i] for i in range(spatial))
            if inside:
                vals.append(x[(slice(None), slice(None)) + tuple(p)].astype(np.float64))
            count += inside if not count_include_pad else padded
        if kind == "max":
            y[(slice(None), slice(None)) + o] = np.max(vals, axis=0)
        else:
            y[(slice(None), slice(None)) + o] = np.sum(vals, axis=0) / count
    return y


@case
def pool_cases(rng):
    x = rand(rng, 1, 1, 4, 4)
    u = rng.integers(0, 256, size=(1, 2, 4, 5)).astype(np.uint8)
    s = np.array([[[-100, -7, -128, -3, -50]]], dtype=np.int8)
    y = rand(rng, 1, 3, 9, 13)
    return [x, u, s, y], [
        pool(x, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], (3, 3), "avg", count_include_pad=True),
        pool(x, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], (3, 3), "avg"),
        pool(u, [2, 2], [2, 2], [1, 1, 1, 1], [1, 1], (3, 3), "max"),
        pool(s, [3], [2], [2, 2], [2], (3,), "max"),
        pool(y, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], (5, 7), "max"),
        pool(y, [2, 3], [1, 1], [0, 0, 0, 0], [2, 1], (7, 11), "max"),
    ]


# --- Gather ------------------------------------------------------------------


@case
def gather_negative(rng):
    x = rand(rng, 3, 5)
    i = np.array([[-1, 0], [4, -5]], dtype=np.int32)
    y = rand(rng, 4, 3)
    j = np.array([[-4, 3, 1], [0, -1, 2]], dtype=np.int64)
    return [x, i, y, j], [
        np.take(x, np.where(i < 0, i + 5, i), axis=1),
        np.take_along_axis(y, np.where(j < 0, j + 4, j), axis=0),
    ]


# --- Driver ------------------------------------------------------------------


def value_info(v):
    t = v.type.tensor_type
    return mapping.TENSOR_TYPE_TO_NP_TYPE[t.elem_type], tuple(d.dim_value for d in t.shape.dim)


def main():
    model_path, out_dir = sys.argv[1:]
    name = os.path.splitext(os.path.basename(model_path))[0]
    graph = onnx.parser.parse_model(open(model_path).read()).graph
    inputs, outputs = CASES[name](np.random.default_rng(0))
    if len(inputs) != len(graph.input) or len(outputs) != len(graph.output):
        sys.exit(f"{name}: {len(inputs)} inputs and {len(outputs)} outputs, the model has "
                 f"{len(graph.input)} and {len(graph.output)}")
    os.makedirs(out_dir, exist_ok=True)
    for kind, arrays, infos in (("input", inputs, graph.input), ("output", outputs, graph.output)):
        for i, (array, info) in enumerate(zip(arrays, infos)):
            dtype, shape = value_info(info)
            if array.shape != shape:
                sys.exit(f"{name}: {kind} {i} '{info.name}' has shape {array.shape}, the model says {shape}")
            if kind == "input" and array.dtype != dtype:
                sys.exit(f"{name}: input {i} '{info.name}' is {array.dtype}, the model says {dtype}")
            tensor = numpy_helper.from_array(np.asarray(array).astype(dtype), info.name)
            with open(os.path.join(out_dir, f"{kind}_{i}.pb"), "wb") as f:
                f.write(tensor.SerializeToString())


if __name__ == "__main__":
    main()
