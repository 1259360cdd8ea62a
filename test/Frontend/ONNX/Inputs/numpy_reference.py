"""Writes an ONNX test data set (input_<i>.pb, output_<i>.pb) for a text-format
model, with reference outputs computed here in NumPy, for nnc-run --test-data.

usage: numpy_reference.py MODEL.onnxtext OUT_DIR

The model names its input values in comment lines, one per graph input:

    # INPUT x = np.array([[1.0, -2.0], [0.5, 3.0]])

(a NumPy expression, converted to the input's declared element type and
checked against its declared shape). The nodes are then evaluated in order
with the implementations below, each written from the ONNX operator
specification with explicit loops where that keeps it independent of how nnc
composes the op (reshape/transpose, pooling, gathers).
"""

import math
import os
import re
import sys

import numpy as np
from onnx import helper, numpy_helper, parser

try:
    np_dtype = helper.tensor_dtype_to_np_dtype  # ONNX >= 1.13
except AttributeError:
    from onnx import mapping

    def np_dtype(data_type):
        return mapping.TENSOR_TYPE_TO_NP_TYPE[data_type]


def attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def text(value):
    return value.decode() if isinstance(value, bytes) else value


# Unary math.
UNARY = {
    "Tan": np.tan,
    "Asin": np.arcsin,
    "Acos": np.arccos,
    "Atan": np.arctan,
    "Sinh": np.sinh,
    "Cosh": np.cosh,
    "Asinh": np.arcsinh,
    "Acosh": np.arccosh,
    "Atanh": np.arctanh,
    "Softsign": lambda x: x / (1 + np.abs(x)),
}


def constant(a):
    if "value" in a:
        return numpy_helper.to_array(a["value"])
    if "value_float" in a:
        return np.array(a["value_float"], dtype=np.float32)
    if "value_int" in a:
        return np.array(a["value_int"], dtype=np.int64)
    if "value_ints" in a:
        return np.array(a["value_ints"], dtype=np.int64)
    raise ValueError("unsupported Constant")


def is_inf(x, a):
    pos = a.get("detect_positive", 1) != 0
    neg = a.get("detect_negative", 1) != 0
    return ((x == np.inf) & pos) | ((x == -np.inf) & neg)


def shrink(x, a):
    lambd, bias = a.get("lambd", 0.5), a.get("bias", 0.0)
    y = np.zeros_like(x)
    for i, v in np.ndenumerate(x):
        y[i] = v + bias if v < -lambd else v - bias if v > lambd else 0
    return y


def celu(x, a):
    alpha = np.float32(a.get("alpha", 1.0))
    return np.maximum(0, x) + np.minimum(0, alpha * (np.exp(x / alpha) - 1))


def gather_elements(x, idx, a):
    axis = a.get("axis", 0) % x.ndim
    y = np.empty(idx.shape, dtype=x.dtype)
    for pos, i in np.ndenumerate(idx):
        src = list(pos)
        src[axis] = i + x.shape[axis] if i < 0 else i
        y[pos] = x[tuple(src)]
    return y


def nll_loss(x, target, weight, a):
    """x: [N, C, d...], target: [N, d...]; the ONNX reference loop."""
    reduction = text(a.get("reduction", b"mean"))
    ignore = a.get("ignore_index")
    loss = np.zeros(target.shape, dtype=x.dtype)
    w = np.zeros(target.shape, dtype=x.dtype)
    for pos, t in np.ndenumerate(target):
        if ignore is not None and t == ignore:
            continue
        wt = weight[t] if weight is not None else 1.0
        loss[pos] = -x[(pos[0], t) + pos[1:]] * wt
        w[pos] = wt
    if reduction == "none":
        return loss
    if reduction == "sum":
        return np.array(loss.sum(dtype=np.float64), dtype=x.dtype)
    return np.array(loss.sum(dtype=np.float64) / w.sum(dtype=np.float64), dtype=x.dtype)


def log_softmax(x, axis):
    x = x.astype(np.float64)
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def hardmax(x, a, opset):
    if opset >= 13:
        axis = a.get("axis", -1) % x.ndim
        y = np.zeros_like(x)
        moved = np.moveaxis(x, axis, -1)
        out = np.moveaxis(y, axis, -1)  # a view: writes land in y
        for pos in np.ndindex(moved.shape[:-1]):
            out[pos + (int(np.argmax(moved[pos])),)] = 1  # argmax: the first maximum
        return y
    axis = a.get("axis", 1) % x.ndim
    rows = x.reshape(math.prod(x.shape[:axis]), -1)
    y = np.zeros_like(rows)
    for r in range(rows.shape[0]):
        y[r, int(np.argmax(rows[r]))] = 1
    return y.reshape(x.shape)


def one_hot(indices, depth, values, a):
    depth = int(depth.reshape(()))
    axis = a.get("axis", -1)
    rank = indices.ndim + 1
    axis = axis + rank if axis < 0 else axis
    shape = list(indices.shape)
    shape.insert(axis, depth)
    values = values.reshape(2)
    y = np.full(shape, values[0], dtype=values.dtype)
    for pos, i in np.ndenumerate(indices):
        i = int(i)  # float indices are cast to int64 (toward zero)
        if i < 0:
            i += depth
        if 0 <= i < depth:
            out = list(pos)
            out.insert(axis, i)
            y[tuple(out)] = values[1]
    return y


def eye_like(x, a):
    dtype = np_dtype(a["dtype"]) if "dtype" in a else x.dtype
    k = a.get("k", 0)
    y = np.zeros(x.shape, dtype=dtype)
    for i in range(x.shape[0]):
        if 0 <= i + k < x.shape[1]:
            y[i, i + k] = 1
    return y


def depth_to_space(x, a):
    bs = a["blocksize"]
    mode = text(a.get("mode", b"DCR"))
    n, c, h, w = x.shape
    oc = c // (bs * bs)
    y = np.empty((n, oc, h * bs, w * bs), dtype=x.dtype)
    for b_, o, i, j, hh, ww in np.ndindex(n, oc, bs, bs, h, w):
        # DCR: depth is (block row, block column, channel); CRD: (channel, block row, block column).
        src = (i * bs + j) * oc + o if mode == "DCR" else o * bs * bs + i * bs + j
        y[b_, o, hh * bs + i, ww * bs + j] = x[b_, src, hh, ww]
    return y


def space_to_depth(x, a):
    bs = a["blocksize"]
    n, c, h, w = x.shape
    y = np.empty((n, c * bs * bs, h // bs, w // bs), dtype=x.dtype)
    for b_, ch, i, j, hh, ww in np.ndindex(n, c, bs, bs, h // bs, w // bs):
        y[b_, (i * bs + j) * c + ch, hh, ww] = x[b_, ch, hh * bs + i, ww * bs + j]
    return y


def lrn(x, a):
    size = a["size"]
    alpha, beta, bias = a.get("alpha", 1e-4), a.get("beta", 0.75), a.get("bias", 1.0)
    c = x.shape[1]
    xd = x.astype(np.float64)
    y = np.empty_like(xd)
    for ch in range(c):
        lo = max(0, ch - (size - 1) // 2)
        hi = min(c - 1, ch + math.ceil((size - 1) / 2))
        square_sum = (xd[:, lo:hi + 1] ** 2).sum(axis=1)
        y[:, ch] = xd[:, ch] / (bias + alpha / size * square_sum) ** beta
    return y.astype(x.dtype)


# Activations of RNN, GRU and LSTM: f(x, alpha, beta), default alpha and
# beta, and whether the function takes alpha and beta (those that do consume
# activation_alpha / activation_beta values in order).
RECURRENT_ACTIVATIONS = {
    "relu": (lambda x, al, be: np.maximum(x, 0), 0, 0, False, False),
    "tanh": (lambda x, al, be: np.tanh(x), 0, 0, False, False),
    "sigmoid": (lambda x, al, be: 1 / (1 + np.exp(-x)), 0, 0, False, False),
    "affine": (lambda x, al, be: al * x + be, 1.0, 0.0, True, True),
    "leakyrelu": (lambda x, al, be: np.where(x < 0, al * x, x), 0.01, 0, True, False),
    "thresholdedrelu": (lambda x, al, be: np.where(x > al, x, 0), 1.0, 0, True, False),
    "scaledtanh": (lambda x, al, be: al * np.tanh(be * x), 1.0, 1.0, True, True),
    "hardsigmoid": (lambda x, al, be: np.clip(al * x + be, 0, 1), 0.2, 0.5, True, True),
    "elu": (lambda x, al, be: np.where(x < 0, al * (np.exp(x) - 1), x), 1.0, 0, True, False),
    "softsign": (lambda x, al, be: x / (1 + np.abs(x)), 0, 0, False, False),
    "softplus": (lambda x, al, be: np.log1p(np.exp(x)), 0, 0, False, False),
}


def recurrent(op, args, a):
    """RNN, GRU and LSTM from the ONNX spec, one batch entry and step at a
    time in float64: a batch entry runs its first sequence_lens steps (a
    reverse direction from its last one down), and its later outputs are 0."""
    arg = lambda i: args[i].astype(np.float64) if len(args) > i and args[i] is not None else None
    x, w, r = arg(0), arg(1), arg(2)
    layout = a.get("layout", 0)
    h0, c0 = arg(5), arg(6) if op == "LSTM" else None
    if layout:
        x = x.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    steps, batch, _ = x.shape
    dirs, hidden = w.shape[0], r.shape[2]
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    bias = arg(3) if arg(3) is not None else np.zeros((dirs, 2 * gates * hidden))
    lens = args[4] if len(args) > 4 and args[4] is not None else np.full(batch, steps)
    h0 = h0 if h0 is not None else np.zeros((dirs, batch, hidden))
    c0 = c0 if c0 is not None else np.zeros((dirs, batch, hidden))
    peep = arg(7) if op == "LSTM" and arg(7) is not None else np.zeros((dirs, 3 * hidden))
    clip = a.get("clip")
    cl = (lambda v: np.clip(v, -clip, clip)) if clip is not None else (lambda v: v)
    direction = text(a.get("direction", b"forward"))

    per_dir = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"]}[op]
    names = [text(n) for n in a.get("activations", [])] or per_dir * dirs
    if len(names) == len(per_dir) and dirs == 2:
        names = names * 2
    alphas, betas = list(a.get("activation_alpha", [])), list(a.get("activation_beta", []))
    acts = []
    for name in names:
        f, al, be, takes_alpha, takes_beta = RECURRENT_ACTIVATIONS[name.lower()]
        al = alphas.pop(0) if takes_alpha and alphas else al
        be = betas.pop(0) if takes_beta and betas else be
        acts.append(lambda v, f=f, al=al, be=be: f(v, al, be))

    H = hidden
    y = np.zeros((steps, dirs, batch, hidden))
    y_h = np.zeros((dirs, batch, hidden))
    y_c = np.zeros((dirs, batch, hidden))
    for d in range(dirs):
        act = acts[d * len(per_dir):(d + 1) * len(per_dir)]
        reverse = direction == "reverse" or d == 1
        wd, rd = w[d], r[d]
        wb, rb = bias[d][:gates * H], bias[d][gates * H:]
        pi, po, pf = peep[d][:H], peep[d][H:2 * H], peep[d][2 * H:]
        for b in range(batch):
            h, c = h0[d, b], c0[d, b]
            length = int(lens[b])
            for t in (range(length - 1, -1, -1) if reverse else range(length)):
                xt = x[t, b]
                gx = lambda k: wd[k * H:(k + 1) * H] @ xt + wb[k * H:(k + 1) * H]
                gh = lambda k, hin: rd[k * H:(k + 1) * H] @ hin + rb[k * H:(k + 1) * H]
                if op == "RNN":
                    h = act[0](cl(gx(0) + gh(0, h)))
                elif op == "GRU":
                    z = act[0](cl(gx(0) + gh(0, h)))
                    reset = act[0](cl(gx(1) + gh(1, h)))
                    if a.get("linear_before_reset", 0):
                        cand = act[1](cl(gx(2) + reset * gh(2, h)))
                    else:
                        cand = act[1](cl(gx(2) + gh(2, reset * h)))
                    h = (1 - z) * cand + z * h
                else:
                    i = act[0](cl(gx(0) + gh(0, h) + pi * c))
                    if a.get("input_forget", 0):
                        f = 1 - i
                    else:
                        f = act[0](cl(gx(2) + gh(2, h) + pf * c))
                    cand = act[1](cl(gx(3) + gh(3, h)))
                    c = f * c + i * cand
                    o = act[0](cl(gx(1) + gh(1, h) + po * c))
                    h = o * act[2](c)
                y[t, d, b] = h
            y_h[d, b], y_c[d, b] = h, c
    if layout:
        y, y_h, y_c = y.transpose(2, 0, 1, 3), y_h.transpose(1, 0, 2), y_c.transpose(1, 0, 2)
    dtype = args[0].dtype
    return [y.astype(dtype), y_h.astype(dtype), y_c.astype(dtype)]


def grid_sample_nearest(x, grid, a):
    """GridSample, nearest mode with zeros padding only: the input pixel at
    each grid point's unnormalized coordinates rounded half to even."""
    if a.get("mode", b"bilinear") != b"nearest" or a.get("padding_mode", b"zeros") != b"zeros":
        raise SystemExit("numpy_reference: GridSample: only nearest with zeros padding")
    n, c, h, w = x.shape
    g = grid.astype(np.float64)
    if a.get("align_corners", 0):
        px, py = (g[..., 0] + 1) / 2 * (w - 1), (g[..., 1] + 1) / 2 * (h - 1)
    else:
        px, py = ((g[..., 0] + 1) * w - 1) / 2, ((g[..., 1] + 1) * h - 1) / 2
    ix, iy = np.rint(px).astype(np.int64), np.rint(py).astype(np.int64)
    out = np.zeros((n, c) + grid.shape[1:3], x.dtype)
    for b in range(n):
        for i, j in np.ndindex(*grid.shape[1:3]):
            if 0 <= ix[b, i, j] < w and 0 <= iy[b, i, j] < h:
                out[b, :, i, j] = x[b, :, iy[b, i, j], ix[b, i, j]]
    return out


def centered(x, zero_point, axis):
    """x - zero_point in int64; a 1-D zero point runs along `axis` of x."""
    x = x.astype(np.int64)
    if zero_point is None:
        return x
    zp = np.asarray(zero_point).astype(np.int64)
    if zp.ndim == 1 and zp.size > 1:
        shape = [1] * x.ndim
        shape[axis] = zp.size
        zp = zp.reshape(shape)
    return x - zp.reshape(-1)[0] if zp.size == 1 else x - zp


def integer_conv(x, w, a):
    """Conv in int64, one output element at a time (group, strides, pads, dilations)."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    group = a.get("group", 1)
    sh, sw = a.get("strides", [1, 1])
    dh, dw = a.get("dilations", [1, 1])
    pt, pl, pb, pr = a.get("pads", [0, 0, 0, 0])
    oh = (h + pt + pb - (kh - 1) * dh - 1) // sh + 1
    ow = (wd + pl + pr - (kw - 1) * dw - 1) // sw + 1
    y = np.zeros((n, m, oh, ow), np.int64)
    per_group = m // group
    for b, o, i, j in np.ndindex(n, m, oh, ow):
        g = o // per_group
        total = 0
        for ci, u, v in np.ndindex(cg, kh, kw):
            r, q = i * sh - pt + u * dh, j * sw - pl + v * dw
            if 0 <= r < h and 0 <= q < wd:
                total += int(x[b, g * cg + ci, r, q]) * int(w[o, ci, u, v])
        y[b, o, i, j] = total
    return y


def requantize(real, zero_point):
    """round half to even, add the zero point, saturate to its 8-bit type."""
    info = np.iinfo(zero_point.dtype)
    q = np.rint(real).astype(np.int64) + int(zero_point.reshape(-1)[0])
    return np.clip(q, info.min, info.max).astype(zero_point.dtype)


def per_axis(v, axis, ndim):
    v = np.asarray(v)
    if v.ndim == 1 and v.size > 1:
        shape = [1] * ndim
        shape[axis] = v.size
        return v.reshape(shape)
    return v.reshape(())


def quantized(op, args, a):
    """MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv: the integer
    product exactly in int64; the QLinear ops scale it by the real multiplier
    in float32, as ONNX Runtime does."""
    if op == "MatMulInteger":
        A, B, azp, bzp = (args + [None, None])[:4]
        return [(centered(A, azp, A.ndim - 2) @ centered(B, bzp, B.ndim - 1)).astype(np.int32)]
    if op == "ConvInteger":
        x, w, xzp, wzp = (args + [None, None])[:4]
        return [integer_conv(centered(x, xzp, 1), centered(w, wzp, 0), a).astype(np.int32)]
    if op == "QLinearMatMul":
        A, sa, azp, B, sb, bzp, sy, yzp = args
        acc = centered(A, azp, A.ndim - 2) @ centered(B, bzp, B.ndim - 1)
        scale = per_axis(sa, 0, 2).astype(np.float32) * per_axis(sb, 0, 1).astype(np.float32)
        scale = scale / np.float32(np.asarray(sy).reshape(-1)[0])
        return [requantize(acc.astype(np.float32) * scale, yzp)]
    x, sx, xzp, w, sw, wzp, sy, yzp = args[:8]
    bias = args[8] if len(args) > 8 and args[8] is not None else None
    acc = integer_conv(centered(x, xzp, 1), centered(w, wzp, 0), a)
    if bias is not None:
        acc = acc + bias.astype(np.int64).reshape(1, -1, 1, 1)
    scale = np.float32(np.asarray(sx).reshape(-1)[0]) * per_axis(sw, 1, 4).astype(np.float32)
    scale = scale / np.float32(np.asarray(sy).reshape(-1)[0])
    return [requantize(acc.astype(np.float32) * scale, yzp)]


def optimizer(op, args, a):
    """Adagrad, Momentum, Adam (ai.onnx.preview.training) from their specs."""
    r, t = float(args[0]), int(args[1])
    rest = args[2:]
    groups = 3 if op in ("Adagrad", "Momentum") else 4
    k = len(rest) // groups
    tensors = [rest[i * k:(i + 1) * k] for i in range(groups)]
    outs = [[] for _ in range(groups - 1)]
    norm = a.get("norm_coefficient", 0.0)
    for i in range(k):
        x, g = tensors[0][i].astype(np.float64), tensors[1][i].astype(np.float64)
        g = norm * x + g
        if op == "Adagrad":
            h = tensors[2][i] + g * g
            rate = r / (1 + t * a.get("decay_factor", 0.0))
            outs[0].append(x - rate * g / (np.sqrt(h) + a.get("epsilon", 1e-6)))
            outs[1].append(h)
        elif op == "Momentum":
            alpha, beta = a["alpha"], a["beta"] if t > 0 else 1.0
            v = alpha * tensors[2][i] + beta * g
            step = v if text(a["mode"]) == "standard" else g + alpha * v
            outs[0].append(x - r * step)
            outs[1].append(v)
        else:
            alpha, beta = a.get("alpha", 0.9), a.get("beta", 0.999)
            v = alpha * tensors[2][i] + (1 - alpha) * g
            h = beta * tensors[3][i] + (1 - beta) * g * g
            rate = r * math.sqrt(1 - beta**t) / (1 - alpha**t) if t > 0 else r
            xn = x - rate * v / (np.sqrt(h) + a.get("epsilon", 1e-6))
            outs[0].append((1 - a.get("norm_coefficient_post", 0.0)) * xn)
            outs[1].append(v)
            outs[2].append(h)
    dtype = rest[0].dtype
    return [o.astype(dtype) for group in outs for o in group]


def reverse_sequence(x, lens, a):
    """A length beyond the time dim (ONNX forbids it) reverses all of it."""
    batch_axis, time_axis = a.get("batch_axis", 1), a.get("time_axis", 0)
    y = x.copy()
    for b in range(x.shape[batch_axis]):
        length = min(int(lens[b]), x.shape[time_axis])
        for t in range(length):
            dst, src = [slice(None)] * x.ndim, [slice(None)] * x.ndim
            dst[batch_axis] = src[batch_axis] = b
            dst[time_axis], src[time_axis] = t, length - 1 - t
            y[tuple(dst)] = x[tuple(src)]
    return y


def mean_variance_normalization(x, a):
    axes = tuple(a.get("axes", [0, 2, 3]))
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=axes, keepdims=True)
    std = np.sqrt(((x64 - mean) ** 2).mean(axis=axes, keepdims=True))
    return ((x64 - mean) / (std + 1e-9)).astype(x.dtype)


def batch_norm_training(x, scale, bias, mean, var, a):
    """training_mode = 1: the batch's statistics (variance without Bessel's
    correction) and the running statistics updated by momentum."""
    axes = (0,) + tuple(range(2, x.ndim))
    shape = [1, x.shape[1]] + [1] * (x.ndim - 2)
    x64 = x.astype(np.float64)
    m, v = x64.mean(axis=axes), x64.var(axis=axes)
    eps, momentum = a.get("epsilon", 1e-5), a.get("momentum", 0.9)
    y = (x64 - m.reshape(shape)) / np.sqrt(v.reshape(shape) + eps) * scale.reshape(shape) + bias.reshape(shape)
    return [y.astype(x.dtype), (mean * momentum + m * (1 - momentum)).astype(mean.dtype),
            (var * momentum + v * (1 - momentum)).astype(var.dtype)]


def dft(x, dft_length, a):
    """ONNX's DFT through NumPy's FFT (a different algorithm: an independent check)."""
    signal = x[..., 0].astype(np.float64)
    if x.shape[-1] == 2:
        signal = signal + 1j * x[..., 1]
    axis = a.get("axis", 1)
    axis = axis if axis >= 0 else axis + x.ndim  # counted with the component dim
    n = int(dft_length) if dft_length is not None else None
    if a.get("inverse", 0):
        y = np.fft.ifft(signal, n=n, axis=axis)
    elif a.get("onesided", 0):
        y = np.fft.rfft(signal, n=n, axis=axis)
    else:
        y = np.fft.fft(signal, n=n, axis=axis)
    return np.stack([y.real, y.imag], axis=-1).astype(x.dtype)


def stft(x, step, window, frame_length, a):
    """ONNX's STFT: frames cut in a Python loop, each windowed and put
    through NumPy's FFT in float64."""
    size = len(window) if window is not None else int(frame_length)
    step = int(step)
    signal = x[..., 0].astype(np.float64)
    if x.shape[-1] == 2:
        signal = signal + 1j * x[..., 1]
    frames = []
    for start in range(0, signal.shape[1] - size + 1, step):
        frame = signal[:, start:start + size]
        if window is not None:
            frame = frame * window.astype(np.float64)
        frames.append(np.fft.rfft(frame, axis=-1) if a.get("onesided", 1) else np.fft.fft(frame, axis=-1))
    y = np.stack(frames, axis=1)
    return np.stack([y.real, y.imag], axis=-1).astype(x.dtype)


def tfidf_vectorizer(x, a):
    """Counts each pool n-gram over every start position and skip, one row at a
    time (unigrams once: skips do not apply to them). As ONNX's reference
    implementation: a pool n-gram listed twice counts at its last entry, and
    IDF's clip and the weights apply per output column."""
    pool, starts, indexes = list(a["pool_int64s"]), list(a["ngram_counts"]), list(a["ngram_indexes"])
    column_of = {}
    entry = 0
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(pool)
        for p in range(start, end, i + 1):
            column_of[tuple(pool[p:p + i + 1])] = indexes[entry]
            entry += 1
    rows = x.reshape(-1, x.shape[-1]).astype(np.int64)
    y = np.zeros((rows.shape[0], max(indexes) + 1), np.float32)
    mode = text(a["mode"])
    for r, row in enumerate(rows):
        for n in range(a["min_gram_length"], a["max_gram_length"] + 1):
            for skip in range(a.get("max_skip_count", 0) + 1 if n > 1 else 1):
                for i in range(len(row)):
                    taken = tuple(int(t) for t in row[i:i + (n - 1) * (skip + 1) + 1:skip + 1])
                    if len(taken) < n:
                        break
                    if taken in column_of:
                        y[r, column_of[taken]] += 1
    if mode == "IDF":
        y = np.minimum(y, 1)
    if mode != "TF" and "weights" in a:
        y = y * np.array(a["weights"][: y.shape[1]], np.float32)
    return y.reshape(x.shape[:-1] + (y.shape[-1],))


def crop_and_resize(x, roi, sizes, a, lengths):
    """Resize with tf_crop_and_resize, one output element at a time in
    float64: each dim's source coordinate from the crop (over the resized
    length: in * scale unrounded when scales are given, as ONNX's reference
    divides), the extrapolation value where one falls outside the input, else
    nearest, linear or cubic taps (indices beyond the edge read the edge)
    multiplied across dims."""
    mode, nearest = text(a.get("mode", "nearest")), text(a.get("nearest_mode", "round_prefer_floor"))
    cubic_a, fill = a.get("cubic_coeff_a", -0.75), a.get("extrapolation_value", 0.0)
    rank = x.ndim
    roi = roi.astype(np.float64)
    y = np.zeros(tuple(int(s) for s in sizes), x.dtype)

    def cubic(t):
        t = abs(t)
        if t <= 1:
            return (cubic_a + 2) * t**3 - (cubic_a + 3) * t**2 + 1
        if t < 2:
            return cubic_a * t**3 - 5 * cubic_a * t**2 + 8 * cubic_a * t - 4 * cubic_a
        return 0.0

    for index in np.ndindex(*y.shape):
        taps = []
        outside = False
        for d, o in enumerate(index):
            n_in, n_out = x.shape[d], y.shape[d]
            start, end = roi[d], roi[rank + d]
            if n_out > 1:
                src = start * (n_in - 1) + o * (end - start) * (n_in - 1) / (lengths[d] - 1)
            else:
                src = 0.5 * (start + end) * (n_in - 1)
            if src < 0 or src > n_in - 1:
                outside = True
                break
            edge = lambda i: min(max(i, 0), n_in - 1)
            if mode == "nearest":
                if nearest == "round_prefer_floor":
                    i = math.ceil(src - 0.5)
                elif nearest == "round_prefer_ceil":
                    i = math.floor(src + 0.5)
                elif nearest == "floor":
                    i = math.floor(src)
                else:
                    i = math.ceil(src)
                taps.append([(edge(i), 1.0)])
            elif mode == "linear":
                i0 = math.floor(src)
                t = src - i0
                taps.append([(edge(i0), 1 - t), (edge(i0 + 1), t)])
            else:
                i0 = math.floor(src)
                t = src - i0
                taps.append([(edge(i0 + k), cubic(t - k)) for k in (-1, 0, 1, 2)])
        if outside:
            y[index] = fill
            continue
        total = 0.0
        for combo in np.ndindex(*[len(t) for t in taps]):
            w = 1.0
            at = []
            for d, c in enumerate(combo):
                i, wd = taps[d][c]
                at.append(i)
                w *= wd
            total += w * float(x[tuple(at)])
        y[index] = total
    return y


def roi_align(x, rois, batch_indices, a, opset):
    """RoiAlign in float64, one bin and one sample at a time, from the
    operator's definition: sample (iy, ix) of bin (ph, pw) at
    start + ph * bin size + (iy + 0.5) * bin size / grid; a sample more than
    a pixel outside the map counts as zero; bilinear corners clamped to the
    map; max mode takes the largest weighted corner of any sample."""
    mode = text(a.get("mode", "avg"))
    default_transform = "half_pixel" if opset >= 16 else "output_half_pixel"
    half_pixel = text(a.get("coordinate_transformation_mode", default_transform)) == "half_pixel"
    out_h, out_w = a.get("output_height", 1), a.get("output_width", 1)
    grid, scale = a.get("sampling_ratio", 0), a.get("spatial_scale", 1.0)
    _, channels, height, width = x.shape
    data = x.astype(np.float64)
    y = np.zeros((len(rois), channels, out_h, out_w))

    def value(img, c, py, px):
        if py < -1 or py > height or px < -1 or px > width:
            return [0.0] * 4
        py, px = min(max(py, 0.0), height - 1.0), min(max(px, 0.0), width - 1.0)
        y0, x0 = math.floor(py), math.floor(px)
        y1, x1 = min(y0 + 1, height - 1), min(x0 + 1, width - 1)
        ly, lx = py - y0, px - x0
        return [(1 - ly) * (1 - lx) * data[img, c, y0, x0], (1 - ly) * lx * data[img, c, y0, x1],
                ly * (1 - lx) * data[img, c, y1, x0], ly * lx * data[img, c, y1, x1]]

    for r, box in enumerate(rois.astype(np.float64)):
        offset = 0.5 if half_pixel else 0.0
        x_start, y_start, x_end, y_end = (v * scale - offset for v in box)
        box_w, box_h = x_end - x_start, y_end - y_start
        if not half_pixel:
            box_w, box_h = max(box_w, 1.0), max(box_h, 1.0)
        bin_h, bin_w = box_h / out_h, box_w / out_w
        img = min(max(int(batch_indices[r]), 0), x.shape[0] - 1)
        for c in range(channels):
            for ph in range(out_h):
                for pw in range(out_w):
                    samples = []
                    for iy in range(grid):
                        for ix in range(grid):
                            py = y_start + ph * bin_h + (iy + 0.5) * bin_h / grid
                            px = x_start + pw * bin_w + (ix + 0.5) * bin_w / grid
                            samples.append(value(img, c, py, px))
                    if mode == "avg":
                        y[r, c, ph, pw] = sum(sum(s) for s in samples) / len(samples)
                    elif mode == "max":
                        y[r, c, ph, pw] = max(max(s) for s in samples)
                    else:
                        raise NotImplementedError(f"RoiAlign mode {mode}")
    return y.astype(x.dtype)


def evaluate(node, args, opset):
    a = attrs(node)
    op = node.op_type
    if op == "Constant":
        return [constant(a)]
    if op in UNARY:
        return [UNARY[op](args[0]).astype(args[0].dtype)]
    if op == "IsNaN":
        return [np.isnan(args[0])]
    if op == "IsInf":
        return [is_inf(args[0], a)]
    if op == "ThresholdedRelu":
        x = args[0]
        return [np.where(x > np.float32(a.get("alpha", 1.0)), x, 0).astype(x.dtype)]
    if op == "Shrink":
        return [shrink(args[0], a)]
    if op == "PRelu":
        x, slope = args
        return [np.where(x < 0, x * slope, x).astype(x.dtype)]
    if op == "Celu":
        return [celu(args[0], a).astype(args[0].dtype)]
    if op == "CastLike":
        return [args[0].astype(args[1].dtype)]
    if op == "GatherElements":
        return [gather_elements(args[0], args[1], a)]
    if op == "GridSample":
        return [grid_sample_nearest(args[0], args[1], a)]
    if op == "NegativeLogLikelihoodLoss":
        weight = args[2] if len(args) > 2 else None
        return [nll_loss(args[0], args[1], weight, a)]
    if op == "SoftmaxCrossEntropyLoss":
        weight = args[2] if len(args) > 2 else None
        log_prob = log_softmax(args[0], 1)
        loss = nll_loss(log_prob, args[1], weight, a)
        return [loss.astype(args[0].dtype), log_prob.astype(args[0].dtype)]
    if op == "Hardmax":
        return [hardmax(args[0], a, opset)]
    if op == "OneHot":
        return [one_hot(*args, a)]
    if op == "EyeLike":
        return [eye_like(args[0], a)]
    if op == "DepthToSpace":
        return [depth_to_space(args[0], a)]
    if op == "SpaceToDepth":
        return [space_to_depth(args[0], a)]
    if op == "LRN":
        return [lrn(args[0], a)]
    if op in ("RNN", "GRU", "LSTM"):
        return recurrent(op, args, a)
    if op in ("MatMulInteger", "ConvInteger", "QLinearMatMul", "QLinearConv"):
        return quantized(op, args, a)
    if op in ("Adagrad", "Momentum", "Adam"):
        return optimizer(op, args, a)
    if op == "ReverseSequence":
        return [reverse_sequence(args[0], args[1], a)]
    if op == "BatchNormalization" and a.get("training_mode", 0):
        return batch_norm_training(*args, a)
    if op == "STFT":
        args = args + [None] * (4 - len(args))
        return [stft(args[0], args[1], args[2], args[3], a)]
    if op == "DFT":
        return [dft(args[0], args[1] if len(args) > 1 else None, a)]
    if op == "Resize":
        if text(a.get("coordinate_transformation_mode", "")) != "tf_crop_and_resize":
            raise NotImplementedError("Resize without tf_crop_and_resize")
        x, roi = args[0], args[1]
        if len(node.input) > 3 and node.input[3]:
            sizes = lengths = [int(n) for n in args[2]]
        else:  # scales
            lengths = [n * float(np.float32(s)) for n, s in zip(x.shape, args[2])]
            sizes = [math.floor(length) for length in lengths]
        return [crop_and_resize(x, roi, sizes, a, lengths)]
    if op == "TfIdfVectorizer":
        return [tfidf_vectorizer(args[0], a)]
    if op == "RoiAlign":
        return [roi_align(*args, a, opset)]
    if op == "Det":
        x = args[0]
        return [np.linalg.det(x.astype(np.float64)).astype(x.dtype)]
    if op == "MeanVarianceNormalization":
        return [mean_variance_normalization(args[0], a)]
    raise NotImplementedError(op)


def main():
    model_path, out_dir = sys.argv[1:3]
    with open(model_path) as f:
        source = f.read()
    model = parser.parse_model(source)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    given = dict(re.findall(r"^#\s*INPUT\s+(\w+)\s*=\s*(.+)$", source, re.M))

    values = {}
    os.makedirs(out_dir, exist_ok=True)
    for i, info in enumerate(model.graph.input):
        t = info.type.tensor_type
        dtype = np_dtype(t.elem_type)
        # A symbolic dim (dim_param) takes any size.
        shape = tuple(d.dim_value if not d.dim_param else None for d in t.shape.dim)
        array = np.asarray(eval(given[info.name], {"np": np, "inf": np.inf, "nan": np.nan}), dtype=dtype)
        assert len(array.shape) == len(shape) and all(
            want is None or got == want for got, want in zip(array.shape, shape)
        ), f"input {info.name}: shape {array.shape}, declared {shape}"
        values[info.name] = array
        with open(os.path.join(out_dir, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, info.name).SerializeToString())

    with np.errstate(all="ignore"):
        for node in model.graph.node:
            # Recurrent ops' optional inputs are positional: an omitted one is None.
            if node.op_type in ("RNN", "GRU", "LSTM", "MatMulInteger", "ConvInteger", "QLinearConv", "STFT"):
                args = [values[name] if name else None for name in node.input]
            else:
                args = [values[name] for name in node.input if name]
            results = evaluate(node, args, opset)
            for name, result in zip(node.output, results):
                if name:
                    values[name] = result

    for i, info in enumerate(model.graph.output):
        t = info.type.tensor_type
        array = values[info.name]
        expected = np_dtype(t.elem_type)
        assert array.dtype == expected, f"output {info.name}: {array.dtype}, declared {expected}"
        with open(os.path.join(out_dir, f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, info.name).SerializeToString())


if __name__ == "__main__":
    main()
