"""Writes one tiny float64 model per differentiable op, with gradient references
from central finite differences.

usage: vjp_models.py OUT_DIR [CASE ...]
       vjp_models.py --list

For each case, OUT_DIR/<case>/ holds:
  model.onnx            a float64 (TensorProto.DOUBLE) ONNX model, opset 17, of
                        one op under test whose differentiable operands are
                        initializers (nnc --train's parameters), plus an Add of
                        a small graph input so that the model has one
  data/input_<i>.pb     the model's inputs, then the labels
  data/loss.pb          the MSE loss mean((output - labels)^2), as f32
  data/grad_<name>.pb   the loss's gradient for each parameter, float64

The gradients are central finite differences, (L(p + h) - L(p - h)) / 2h per
element with h = 1e-6 * max(1, |p|), of the loss computed in float64 by a
small interpreter of the model (FORWARD: one PyTorch float64 function per ONNX
op). The generator checks them against torch.autograd's float64 gradient of
the same interpreter (|fd - autograd| <= 1e-6 |autograd| + 1e-9 per element)
and stops if they disagree, so a reference is never just one computation.

Values stay away from the points where an op is not differentiable (relu,
leaky relu and abs at 0, max/min ties, floor at integers) and inside its
domain (log, sqrt and pow's base positive, division away from 0).
"""

import os
import sys
import zlib

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
DOUBLE = TensorProto.DOUBLE
FD_RTOL, FD_ATOL = 1e-6, 1e-9

# ---------------------------------------------------------------------------
# The forward table: ONNX op -> PyTorch float64 implementation. `ins` are the
# node's inputs (torch tensors; None for an omitted optional input), `at` its
# attributes. `exact` is False while finite differencing: Cast to float then
# runs in float64 (the chain double -> float -> double is the identity, whose
# derivative is 1; rounding to float32 would drown a 1e-6 step).


def _axes(values, rank):
    return sorted(int(a) + rank if a < 0 else int(a) for a in values)


def _reduce(fn):
    def run(ins, at, axes):
        x = ins[0]
        if axes is None or len(axes) == 0:
            if at.get("noop_with_empty_axes", 0):
                return x
            axes = list(range(x.dim()))
        axes = _axes(axes, x.dim())
        return fn(x, dim=axes, keepdim=bool(at.get("keepdims", 1)))
    return run


def _reshape(x, shape):
    shape = [int(s) for s in shape]
    shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return x.reshape(shape)


def _squeeze(x, axes):
    axes = _axes(axes, x.dim()) if axes is not None else [d for d in range(x.dim()) if x.shape[d] == 1]
    for a in reversed(axes):
        x = x.squeeze(a)
    return x


def _unsqueeze(x, axes):
    for a in _axes(axes, x.dim() + len(axes)):
        x = x.unsqueeze(a)
    return x


def _expand(x, shape):
    out = torch.broadcast_shapes(tuple(x.shape), tuple(int(s) for s in shape))
    return x.expand(out)


def _gemm(ins, at):
    a, b = ins[0], ins[1]
    c = ins[2] if len(ins) > 2 else None
    if at.get("transA", 0):
        a = a.t()
    if at.get("transB", 0):
        b = b.t()
    y = at.get("alpha", 1.0) * (a @ b)
    if c is not None:
        y = y + at.get("beta", 1.0) * c
    return y


def _slice(ins):
    x, starts, ends = ins[0], ins[1], ins[2]
    axes = ins[3] if len(ins) > 3 and ins[3] is not None else list(range(len(starts)))
    steps = ins[4] if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
    index = [slice(None)] * x.dim()
    for s, e, a, st in zip(starts, ends, axes, steps):
        a = int(a) + x.dim() if a < 0 else int(a)
        index[a] = slice(int(s), int(e), int(st))  # Python clamps as ONNX does for step 1
    return x[tuple(index)]


def _layer_norm(ins, at):
    x, scale = ins[0], ins[1]
    bias = ins[2] if len(ins) > 2 else None
    axis = at.get("axis", -1)
    axis = axis + x.dim() if axis < 0 else axis
    dims = list(range(axis, x.dim()))
    mean = x.mean(dim=dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=dims, keepdim=True)
    y = (x - mean) / torch.sqrt(var + at.get("epsilon", float(np.float32(1e-5)))) * scale
    return y + bias if bias is not None else y


def _cast(ins, at, exact):
    to = at["to"]
    if to == TensorProto.FLOAT:
        return ins[0].float() if exact else ins[0]
    if to == TensorProto.DOUBLE:
        return ins[0].double()
    raise ValueError("Cast to %d" % to)


def _split(ins, at, count):
    x = ins[0]
    sizes = ins[1] if len(ins) > 1 and ins[1] is not None else [x.shape[at.get("axis", 0)] // count] * count
    return torch.split(x, [int(s) for s in sizes], dim=at.get("axis", 0))


def _gather(x, ids, axis):
    axis %= x.dim()
    flat = torch.as_tensor([k % x.shape[axis] for k in _np(ids)])
    shape = list(x.shape[:axis]) + list(ids.shape) + list(x.shape[axis + 1:])
    return torch.index_select(x, axis, flat).reshape(shape)


def _window_args(x, at):
    """Kernel, strides, symmetric pads and dilations of a windowed op."""
    spatial = x.dim() - 2
    pads = at.get("pads", [0] * 2 * spatial)
    if list(pads[:spatial]) != list(pads[spatial:]):
        raise ValueError("asymmetric pads")
    return (at.get("strides", [1] * spatial), list(pads[:spatial]),
            at.get("dilations", [1] * spatial))


def _conv(ins, at):
    x, w = ins[0], ins[1]
    strides, pads, dilations = _window_args(x, at)
    conv = (F.conv1d, F.conv2d, F.conv3d)[x.dim() - 3]
    return conv(x, w, ins[2] if len(ins) > 2 else None, strides, pads, dilations,
                at.get("group", 1))


def _conv_transpose(ins, at):
    x, w = ins[0], ins[1]
    strides, pads, dilations = _window_args(x, at)
    conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[x.dim() - 3]
    return conv(x, w, ins[2] if len(ins) > 2 else None, strides, pads,
                at.get("output_padding", [0] * (x.dim() - 2)), at.get("group", 1), dilations)


def _resize(ins, at):
    """The ONNX Resize forms PyTorch's interpolate computes."""
    x = ins[0]
    scales = ins[2] if len(ins) > 2 and ins[2] is not None and len(ins[2]) else None
    sizes = ins[3] if len(ins) > 3 and ins[3] is not None else None
    size = ([int(s) for s in sizes[2:]] if sizes is not None
            else [int(np.floor(n * float(f))) for n, f in zip(x.shape[2:], scales[2:])])
    form = (at.get("mode", b"nearest").decode(),
            at.get("coordinate_transformation_mode", b"half_pixel").decode(),
            at.get("nearest_mode", b"round_prefer_floor").decode())
    spatial = ("linear", "bilinear", "trilinear")[x.dim() - 3]
    if form == ("nearest", "asymmetric", "floor"):
        return F.interpolate(x, size=size, mode="nearest")
    if form[:2] == ("nearest", "half_pixel") and form[2] == "round_prefer_ceil":
        return F.interpolate(x, size=size, mode="nearest-exact")
    if form[:2] in (("linear", "half_pixel"), ("linear", "pytorch_half_pixel")):
        return F.interpolate(x, size=size, mode=spatial, align_corners=False)
    if form[:2] == ("linear", "align_corners"):
        return F.interpolate(x, size=size, mode=spatial, align_corners=True)
    if form[:2] == ("cubic", "half_pixel") and at.get("cubic_coeff_a") == -0.75:
        return F.interpolate(x, size=size, mode="bicubic", align_corners=False)
    raise ValueError("Resize form %s" % (form,))


def _pad(ins, at):
    x, pads = ins[0], [int(p) for p in np.asarray(ins[1])]
    rank = x.dim()
    torch_pads = []
    for d in reversed(range(rank)):
        torch_pads += [pads[d], pads[d + rank]]
    if len(ins) < 3 or ins[2] is None:
        return F.pad(x, torch_pads)
    # The fill value times the padding's mask: differentiable in the value.
    value = torch.as_tensor(ins[2], dtype=x.dtype)
    return F.pad(x, torch_pads) + value * F.pad(torch.zeros_like(x), torch_pads, value=1.0)


def _max_pool(ins, at):
    x = ins[0]
    strides, pads, dilations = _window_args(x, at)
    pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[x.dim() - 3]
    return pool(x, at["kernel_shape"], strides, pads, dilations, bool(at.get("ceil_mode", 0)))


def _avg_pool(ins, at):
    x = ins[0]
    strides, pads, _ = _window_args(x, at)
    pool = (F.avg_pool1d, F.avg_pool2d, F.avg_pool3d)[x.dim() - 3]
    return pool(x, at["kernel_shape"], strides, pads, bool(at.get("ceil_mode", 0)),
                bool(at.get("count_include_pad", 0)))


def _np(v):
    return [int(i) for i in v.reshape(-1)]


FORWARD = {
    "Add": lambda i, a: i[0] + i[1],
    "Sub": lambda i, a: i[0] - i[1],
    "Mul": lambda i, a: i[0] * i[1],
    "Div": lambda i, a: i[0] / i[1],
    "Pow": lambda i, a: torch.pow(i[0], i[1]),
    "Max": lambda i, a: torch.maximum(i[0], i[1]),
    "Min": lambda i, a: torch.minimum(i[0], i[1]),
    "Where": lambda i, a: torch.where(i[0], i[1], i[2]),
    "Neg": lambda i, a: -i[0],
    "Exp": lambda i, a: torch.exp(i[0]),
    "Log": lambda i, a: torch.log(i[0]),
    "Sqrt": lambda i, a: torch.sqrt(i[0]),
    "Reciprocal": lambda i, a: torch.reciprocal(i[0]),
    "Tanh": lambda i, a: torch.tanh(i[0]),
    "Sigmoid": lambda i, a: torch.sigmoid(i[0]),
    "Softplus": lambda i, a: torch.log1p(torch.exp(i[0])),
    "Abs": lambda i, a: torch.abs(i[0]),
    "Sin": lambda i, a: torch.sin(i[0]),
    "Cos": lambda i, a: torch.cos(i[0]),
    "Erf": lambda i, a: torch.erf(i[0]),
    "Relu": lambda i, a: torch.relu(i[0]),
    "LeakyRelu": lambda i, a: F.leaky_relu(i[0], a.get("alpha", 0.01)),
    "Floor": lambda i, a: torch.floor(i[0]),
    "Reshape": lambda i, a: _reshape(i[0], _np(i[1])),
    "Flatten": lambda i, a: i[0].reshape(int(np.prod(i[0].shape[:a.get("axis", 1)])), -1),
    "Squeeze": lambda i, a: _squeeze(i[0], _np(i[1]) if len(i) > 1 and i[1] is not None else None),
    "Unsqueeze": lambda i, a: _unsqueeze(i[0], _np(i[1])),
    "Expand": lambda i, a: _expand(i[0], _np(i[1])),
    "Transpose": lambda i, a: i[0].permute(a.get("perm", list(range(i[0].dim() - 1, -1, -1)))),
    "MatMul": lambda i, a: torch.matmul(i[0], i[1]),
    "Gemm": _gemm,
    "ReduceSum": lambda i, a: _reduce(torch.sum)(i, a, _np(i[1]) if len(i) > 1 and i[1] is not None else None),
    "ReduceMean": lambda i, a: _reduce(torch.mean)(i, a, a.get("axes")),
    "Softmax": lambda i, a: torch.softmax(i[0], a.get("axis", -1)),
    "LogSoftmax": lambda i, a: torch.log_softmax(i[0], a.get("axis", -1)),
    "Concat": lambda i, a: torch.cat(i, a["axis"]),
    "Slice": lambda i, a: _slice([i[0]] + [None if v is None else _np(v) for v in i[1:]]),
    "LayerNormalization": _layer_norm,
    "Gather": lambda i, a: _gather(i[0], i[1], a.get("axis", 0)),
    "GatherElements": lambda i, a: torch.gather(
        i[0], a.get("axis", 0) % i[0].dim(),
        torch.as_tensor(np.asarray(i[1], np.int64) % i[0].shape[a.get("axis", 0)])),
    "Conv": _conv,
    "ConvTranspose": _conv_transpose,
    "MaxPool": _max_pool,
    "AveragePool": _avg_pool,
    "Resize": _resize,
    "Pad": _pad,
    "GridSample": lambda i, a: F.grid_sample(
        i[0], torch.as_tensor(i[1]), mode=a.get("mode", b"bilinear").decode(),
        padding_mode=a.get("padding_mode", b"zeros").decode(),
        align_corners=bool(a.get("align_corners", 0))),
}


def run_graph(graph, values, exact=True):
    """Evaluates `graph` on `values` (name -> torch tensor or numpy integer
    or bool array) with FORWARD; returns the first output."""
    env = dict(values)
    for op in graph.node:
        at = {a.name: helper.get_attribute_value(a) for a in op.attribute}
        ins = [env[n] if n else None for n in op.input]
        if op.op_type == "Cast":
            outs = [_cast(ins, at, exact)]
        elif op.op_type == "Split":
            outs = list(_split(ins, at, len(op.output)))
        else:
            # Integer operands (shapes, axes, bounds) are read as numbers.
            if op.op_type in ("Reshape", "Squeeze", "Unsqueeze", "Expand", "ReduceSum", "Slice",
                              "Resize"):
                ins = [ins[0]] + [None if v is None else np.asarray(v) for v in ins[1:]]
            outs = [FORWARD[op.op_type](ins, at)]
        for name, value in zip(op.output, outs):
            env[name] = value
    return env[graph.output[0].name]


# ---------------------------------------------------------------------------
# The cases: name -> (nodes, parameters, constants, graph inputs). Parameters
# are float64 initializers (trainable); constants are integer or bool
# initializers; graph inputs are fed from data/input_<i>.pb. Every model's
# first output is named "y".

RNG = np.random.default_rng(20240917)


def uniform(shape, lo=-1.5, hi=1.5):
    return RNG.uniform(lo, hi, size=shape)


def away(shape, lo=0.2, hi=1.5):
    """Values with magnitude in [lo, hi] and a random sign: away from 0."""
    return RNG.uniform(lo, hi, size=shape) * RNG.choice([-1.0, 1.0], size=shape)


def apart(a, shape, gap=0.1):
    """Values of `shape` at least `gap` from every element of `a` they meet
    under broadcasting: no ties for max and min."""
    while True:
        b = uniform(shape, -0.5, 0.5)
        if np.abs(a - b).min() >= gap:
            return b


def i64(values):
    return np.array(values, dtype=np.int64)


def node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs if isinstance(outputs, list) else [outputs], **attrs)


def binary(op, a, b):
    """y = op(A, B) + x, A and B parameters with the given values, x a graph
    input shaped like the result's last dim."""
    out = np.broadcast_shapes(a.shape, b.shape)
    x = uniform(out[-1:] if out else ())
    return ([node(op, ["A", "B"], "r"), node("Add", ["r", "x"], "y")],
            {"A": a, "B": b}, {}, {"x": x})


def unary(op, z, **attrs):
    """y = op(P + x), P [3,4] a parameter and x [4] a graph input, with P
    chosen so that P + x = z (the values the op sees)."""
    x = uniform(z.shape[-1:])
    return ([node("Add", ["P", "x"], "s"), node(op, ["s"], "y", **attrs)],
            {"P": z - x}, {}, {"x": x})


def through(nodes, params, consts=None, last="r"):
    """The op's nodes (last output `last`), then y = last + x, x a graph input
    shaped like the result's last dim."""
    out = run_graph(make_graph(nodes, params, consts or {}, {}, extra_outputs=[last]),
                    {**{k: torch.from_numpy(v) for k, v in params.items()}, **feeds({}, consts or {})})
    return (nodes + [node("Add", [last, "x"], "y")], params, consts or {},
            {"x": uniform(tuple(out.shape[-1:]))})


def cases():
    c = {}
    # Binary elementwise ops with broadcasting.
    c["add"] = binary("Add", uniform((3, 4)), uniform((4,)))
    c["add_both_broadcast"] = binary("Add", uniform((2, 1, 4)), uniform((3, 1)))
    c["add_scalar"] = binary("Add", uniform((3, 4)), uniform(()))
    c["sub"] = binary("Sub", uniform((3, 4)), uniform((4,)))
    c["sub_broadcast_lhs"] = binary("Sub", uniform((3, 1)), uniform((2, 3, 4)))
    c["mul"] = binary("Mul", uniform((2, 3, 4)), uniform((3, 1)))
    c["mul_both_broadcast"] = binary("Mul", uniform((4,)), uniform((2, 3, 1)))
    # Both operands one parameter: the two halves of the gradient add up.
    c["mul_same_operand"] = ([node("Mul", ["A", "A"], "r"), node("Add", ["r", "x"], "y")],
                             {"A": uniform((3, 4))}, {}, {"x": uniform((4,))})
    c["div"] = binary("Div", uniform((3, 4)), away((3, 1), 0.5, 2.0))
    c["div_broadcast_lhs"] = binary("Div", uniform((4,)), away((2, 3, 4), 0.5, 2.0))
    c["pow"] = binary("Pow", uniform((2, 3), 0.5, 2.0), uniform((3,), -1.5, 2.0))
    c["pow_broadcast_base"] = binary("Pow", uniform((3,), 0.5, 2.0), uniform((2, 3), -1.5, 2.0))
    b = uniform((4,))
    c["max"] = binary("Max", b + away((3, 4), 0.1, 1.0), b)
    a = uniform((2, 1, 4), -0.5, 0.5)
    c["min"] = binary("Min", a, apart(a, (3, 4)))
    # Where: the condition a bool graph input (then X, Y broadcast to it) or a
    # bool constant.
    cond = RNG.random((3, 4)) < 0.5
    c["where_input_condition"] = (
        [node("Where", ["cond", "X", "Y"], "r"), node("Add", ["r", "x"], "y")],
        {"X": uniform((2, 1, 4)), "Y": uniform((4,))}, {}, {"cond": cond, "x": uniform((4,))})
    c["where_constant_condition"] = (
        [node("Where", ["cond", "X", "Y"], "r"), node("Add", ["r", "x"], "y")],
        {"X": uniform((3, 4)), "Y": uniform((1, 4))}, {"cond": RNG.random((2, 3, 1)) < 0.5},
        {"x": uniform((4,))})
    c["where_scalar"] = (
        [node("Where", ["cond", "X", "Y"], "r"), node("Add", ["r", "x"], "y")],
        {"X": uniform((3, 4)), "Y": uniform(())}, {"cond": RNG.random((3, 4)) < 0.5},
        {"x": uniform((4,))})

    # Unary elementwise ops on P + x.
    c["neg"] = unary("Neg", uniform((3, 4)))
    c["exp"] = unary("Exp", uniform((3, 4)))
    c["log"] = unary("Log", uniform((3, 4), 0.3, 3.0))
    c["sqrt"] = unary("Sqrt", uniform((3, 4), 0.3, 3.0))
    c["reciprocal"] = unary("Reciprocal", away((3, 4), 0.5, 2.0))
    c["tanh"] = unary("Tanh", uniform((3, 4), -2.0, 2.0))
    c["sigmoid"] = unary("Sigmoid", uniform((3, 4), -3.0, 3.0))
    c["softplus"] = unary("Softplus", uniform((3, 4), -3.0, 3.0))
    c["abs"] = unary("Abs", away((3, 4)))
    c["sin"] = unary("Sin", uniform((3, 4), -3.0, 3.0))
    c["cos"] = unary("Cos", uniform((3, 4), -3.0, 3.0))
    c["erf"] = unary("Erf", uniform((3, 4), -2.0, 2.0))
    c["relu"] = unary("Relu", away((3, 4)))
    c["leaky_relu"] = unary("LeakyRelu", away((3, 4)), alpha=0.125)
    # floor(P + x) * Q: P's gradient is 0, Q's floor(P + x).
    z = RNG.integers(-3, 3, size=(3, 4)) + uniform((3, 4), 0.2, 0.8)
    x = uniform((4,))
    c["floor"] = ([node("Add", ["P", "x"], "s"), node("Floor", ["s"], "f"),
                   node("Mul", ["f", "Q"], "y")], {"P": z - x, "Q": uniform((3, 4))}, {}, {"x": x})
    c["cast"] = ([node("Add", ["P", "x"], "s"), node("Cast", ["s"], "f", to=TensorProto.FLOAT),
                  node("Cast", ["f"], "y", to=TensorProto.DOUBLE)],
                 {"P": uniform((3, 4))}, {}, {"x": uniform((4,))})

    # Shape ops: y = op(P) + x.
    c["reshape"] = through([node("Reshape", ["P", "shape"], "r")], {"P": uniform((2, 3, 4))},
                           {"shape": i64([4, -1])})
    c["reshape_copy_dim"] = through([node("Reshape", ["P", "shape"], "r")],
                                    {"P": uniform((2, 3, 4))}, {"shape": i64([0, -1])})
    c["flatten"] = through([node("Flatten", ["P"], "r", axis=2)], {"P": uniform((2, 3, 4))})
    c["flatten_axis0"] = through([node("Flatten", ["P"], "r", axis=0)], {"P": uniform((2, 3, 4))})
    c["squeeze"] = through([node("Squeeze", ["P", "axes"], "r")], {"P": uniform((3, 1, 4))},
                           {"axes": i64([-2])})
    c["squeeze_all"] = through([node("Squeeze", ["P"], "r")], {"P": uniform((1, 3, 1, 4))})
    c["unsqueeze"] = through([node("Unsqueeze", ["P", "axes"], "r")], {"P": uniform((3, 4))},
                             {"axes": i64([0, -1])})
    c["expand"] = through([node("Expand", ["P", "shape"], "r")], {"P": uniform((3, 1))},
                          {"shape": i64([2, 3, 4])})
    c["expand_bidirectional"] = through([node("Expand", ["P", "shape"], "r")],
                                        {"P": uniform((2, 1, 4))}, {"shape": i64([3, 1])})
    c["transpose"] = through([node("Transpose", ["P"], "r", perm=[2, 0, 1])], {"P": uniform((2, 3, 4))})
    c["transpose_default"] = through([node("Transpose", ["P"], "r")], {"P": uniform((2, 3, 4))})

    # MatMul: y = A @ B + x.
    def matmul(a, b):
        return through([node("MatMul", ["A", "B"], "r")], {"A": uniform(a), "B": uniform(b)})
    c["matmul_2d"] = matmul((3, 4), (4, 5))
    c["matmul_batch_broadcast"] = matmul((2, 3, 4), (4, 5))
    c["matmul_batch_broadcast_rhs"] = matmul((3, 4), (2, 4, 5))
    c["matmul_batch_both"] = matmul((2, 1, 3, 4), (3, 4, 5))
    c["matmul_1d_lhs"] = matmul((4,), (4, 5))
    c["matmul_1d_lhs_batch"] = matmul((4,), (2, 4, 5))
    c["matmul_1d_rhs"] = matmul((3, 4), (4,))
    c["matmul_1d_rhs_batch"] = matmul((2, 3, 4), (4,))
    c["matmul_1d_both"] = matmul((4,), (4,))

    # Gemm: y = alpha op(A) op(B) + beta C + x (alpha, beta exact in float32).
    c["gemm"] = through([node("Gemm", ["A", "B", "C"], "r")],
                        {"A": uniform((3, 4)), "B": uniform((4, 5)), "C": uniform((5,))})
    c["gemm_trans_alpha_beta"] = through(
        [node("Gemm", ["A", "B", "C"], "r", transA=1, transB=1, alpha=0.5, beta=1.5)],
        {"A": uniform((4, 3)), "B": uniform((5, 4)), "C": uniform((3, 1))})
    c["gemm_transa_full_c"] = through(
        [node("Gemm", ["A", "B", "C"], "r", transA=1, beta=0.25)],
        {"A": uniform((4, 3)), "B": uniform((4, 5)), "C": uniform((3, 5))})
    c["gemm_scalar_c"] = through([node("Gemm", ["A", "B", "C"], "r", beta=-2.0)],
                                 {"A": uniform((3, 4)), "B": uniform((4, 5)), "C": uniform(())})
    c["gemm_no_c"] = through([node("Gemm", ["A", "B"], "r", transB=1, alpha=2.0)],
                             {"A": uniform((3, 4)), "B": uniform((5, 4))})

    # Reductions of P + x (ReduceSum's axes an input at opset 17, ReduceMean's
    # an attribute).
    def reduce(op, keepdims, axes):
        x = uniform((4,))
        consts, inputs, attrs = {}, ["s"], {"keepdims": keepdims}
        if axes is not None and op == "ReduceSum":
            consts["axes"] = i64(axes)
            inputs.append("axes")
        elif axes is not None:
            attrs["axes"] = axes
        return ([node("Add", ["P", "x"], "s"), node(op, inputs, "y", **attrs)],
                {"P": uniform((2, 3, 4))}, consts, {"x": x})
    c["reduce_sum_axis1"] = reduce("ReduceSum", 0, [1])
    c["reduce_sum_axes_keepdims"] = reduce("ReduceSum", 1, [0, -1])
    c["reduce_sum_all"] = reduce("ReduceSum", 0, None)
    c["reduce_mean_last"] = reduce("ReduceMean", 0, [-1])
    c["reduce_mean_axes_keepdims"] = reduce("ReduceMean", 1, [0, 1])
    c["reduce_mean_all_keepdims"] = reduce("ReduceMean", 1, None)

    # Softmax and LogSoftmax of P + x along the last and a middle axis.
    def softmax(op, axis):
        return ([node("Add", ["P", "x"], "s"), node(op, ["s"], "y", axis=axis)],
                {"P": uniform((2, 3, 4), -2.0, 2.0)}, {}, {"x": uniform((4,))})
    c["softmax_last"] = softmax("Softmax", -1)
    c["softmax_axis1"] = softmax("Softmax", 1)
    c["log_softmax_last"] = softmax("LogSoftmax", -1)
    c["log_softmax_axis1"] = softmax("LogSoftmax", 1)

    # Concat, Split, Slice.
    c["concat"] = through([node("Concat", ["A", "B", "C"], "r", axis=1)],
                          {"A": uniform((2, 1, 4)), "B": uniform((2, 3, 4)), "C": uniform((2, 2, 4))})
    c["concat_same_input"] = through([node("Concat", ["A", "B", "A"], "r", axis=0)],
                                     {"A": uniform((1, 4)), "B": uniform((2, 4))})
    c["concat_last"] = through([node("Concat", ["A", "B"], "r", axis=-1)],
                               {"A": uniform((3, 2)), "B": uniform((3, 5))})
    # Split into [2, 1, 3] along the last axis; the middle part unused (its
    # gradient is zeros), the others concatenated in reverse order.
    c["split_unused_part"] = through(
        [node("Split", ["P", "split"], ["s0", "s1", "s2"], axis=-1),
         node("Concat", ["s2", "s0"], "r", axis=-1)],
        {"P": uniform((2, 6))}, {"split": i64([2, 1, 3])})
    c["split_equal"] = through(
        [node("Split", ["P"], ["s0", "s1"], axis=0), node("Mul", ["s0", "s1"], "r")],
        {"P": uniform((4, 3))})
    c["slice_negative"] = through(
        [node("Slice", ["P", "starts", "ends", "axes"], "r")], {"P": uniform((4, 3, 5))},
        {"starts": i64([-4, 1]), "ends": i64([-1, 1000]), "axes": i64([2, 0])})
    c["slice_default_axes"] = through(
        [node("Slice", ["P", "starts", "ends"], "r")], {"P": uniform((4, 5))},
        {"starts": i64([1, 0]), "ends": i64([3, -2])})
    c["slice_steps"] = through(
        [node("Slice", ["P", "starts", "ends", "axes", "steps"], "r")], {"P": uniform((3, 6))},
        {"starts": i64([2]), "ends": i64([-1]), "axes": i64([-1]), "steps": i64([1])})

    # Gather (embeddings): repeated and negative indices add up in one row.
    c["gather_rows"] = through(
        [node("Gather", ["P", "ids"], "r", axis=0)], {"P": uniform((5, 3))},
        {"ids": i64([[1, 3, 1], [0, -1, 1]])})
    c["gather_axis1"] = through(
        [node("Gather", ["P", "ids"], "r", axis=1)], {"P": uniform((2, 4, 3))},
        {"ids": i64([2, 0, 2])})
    # GridSample (imported as gathers): the input's and the grid's gradients,
    # with points outside the input.
    c["grid_sample_bilinear"] = through(
        [node("GridSample", ["X", "G"], "r", mode="bilinear", padding_mode="zeros")],
        {"X": uniform((1, 2, 4, 5)), "G": uniform((1, 3, 2, 2), -1.2, 1.2)})
    c["grid_sample_bicubic_reflection"] = through(
        [node("GridSample", ["X", "G"], "r", mode="bicubic", padding_mode="reflection",
              align_corners=1)],
        {"X": uniform((1, 2, 4, 5)), "G": uniform((1, 2, 3, 2), -1.4, 1.4)})
    c["grid_sample_nearest_border"] = through(
        [node("GridSample", ["X", "G"], "r", mode="nearest", padding_mode="border")],
        {"X": uniform((2, 1, 3, 4))}, {"G": uniform((2, 2, 2, 2), -1.3, 1.3)})
    # GatherElements: elements picked twice (and by a negative index) sum.
    c["gather_elements_axis1"] = through(
        [node("GatherElements", ["P", "ids"], "r", axis=1)], {"P": uniform((3, 4))},
        {"ids": i64([[1, 1], [3, -4], [2, 0]])})
    c["gather_elements_axis0"] = through(
        [node("GatherElements", ["P", "ids"], "r", axis=0)], {"P": uniform((3, 2, 2))},
        {"ids": i64([[[2, 0], [1, 1]]])})

    # LayerNormalization of X + x over the last axis or axes 1.. of a 3-D input.
    def layer_norm(axis, bias, **attrs):
        norm_shape = (4,) if axis == -1 else (3, 4)
        params = {"X": uniform((2, 3, 4)), "scale": uniform(norm_shape, 0.5, 1.5)}
        inputs = ["s", "scale"]
        if bias:
            params["bias"] = uniform(norm_shape)
            inputs.append("bias")
        return ([node("Add", ["X", "x"], "s"),
                 node("LayerNormalization", inputs, "y", axis=axis, **attrs)],
                params, {}, {"x": uniform((4,))})
    c["layer_norm_last_bias"] = layer_norm(-1, True)
    c["layer_norm_last"] = layer_norm(-1, False)
    c["layer_norm_axis1_bias"] = layer_norm(1, True, epsilon=1e-3)
    c["layer_norm_axis1"] = layer_norm(1, False)

    # Conv: strided with bias, grouped and dilated, 1-D (the filter gradient
    # is a convolution with batch and channels swapped, the input gradient a
    # transposed one).
    c["conv_strided_bias"] = through(
        [node("Conv", ["X", "W", "B"], "r", strides=[2, 2], pads=[1, 1, 1, 1])],
        {"X": uniform((2, 3, 7, 6)), "W": uniform((4, 3, 3, 3)), "B": uniform((4,))})
    c["conv_grouped_dilated"] = through(
        [node("Conv", ["X", "W"], "r", group=2, dilations=[2, 1], pads=[2, 1, 2, 1])],
        {"X": uniform((1, 4, 7, 6)), "W": uniform((6, 2, 3, 3))})
    c["conv_1d_strided"] = through(
        [node("Conv", ["X", "W"], "r", strides=[3], pads=[1, 1])],
        {"X": uniform((2, 2, 10)), "W": uniform((3, 2, 4))})

    # ConvTranspose: strided with output padding, groups and bias; dilated.
    c["conv_transpose_strided_groups"] = through(
        [node("ConvTranspose", ["X", "W", "B"], "r", strides=[2, 2], pads=[1, 0, 1, 0],
              output_padding=[1, 1], group=2)],
        {"X": uniform((2, 4, 3, 4)), "W": uniform((4, 3, 3, 2)), "B": uniform((6,))})
    c["conv_transpose_dilated"] = through(
        [node("ConvTranspose", ["X", "W"], "r", dilations=[2, 1], strides=[1, 2])],
        {"X": uniform((1, 3, 4, 3)), "W": uniform((3, 2, 2, 3))})

    # MaxPool: the gradient goes back phase by phase of the stride; windows
    # that overlap, strides larger than the kernel, dilation, ceil mode, 1-D.
    c["max_pool_overlapping"] = through(
        [node("MaxPool", ["X"], "r", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])],
        {"X": uniform((2, 3, 9, 8))})
    c["max_pool_stride1"] = through(
        [node("MaxPool", ["X"], "r", kernel_shape=[3, 2], pads=[1, 0, 1, 0])],
        {"X": uniform((1, 2, 5, 6))})
    c["max_pool_gaps_dilated_ceil"] = through(
        [node("MaxPool", ["X"], "r", kernel_shape=[2, 3], strides=[3, 2], dilations=[2, 1],
              ceil_mode=1)],
        {"X": uniform((1, 2, 10, 9))})
    c["max_pool_stride_above_kernel"] = through(
        [node("MaxPool", ["X"], "r", kernel_shape=[2, 2], strides=[3, 3])],
        {"X": uniform((1, 2, 8, 7))})
    # Windows that do not overlap, 9x9: 81 phases, each reached by one tap.
    c["max_pool_nonoverlapping_9x9"] = through(
        [node("MaxPool", ["X"], "r", kernel_shape=[9, 9], strides=[9, 9])],
        {"X": uniform((1, 1, 18, 9))})
    c["max_pool_1d"] = through(
        [node("MaxPool", ["X"], "r", kernel_shape=[3], strides=[2], pads=[1, 1])],
        {"X": uniform((2, 3, 11))})

    # AveragePool: padding counted or not (divisors differ at the borders),
    # ceil mode, strides above the kernel, 1-D.
    c["avg_pool_pads_excluded"] = through(
        [node("AveragePool", ["X"], "r", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])],
        {"X": uniform((2, 3, 9, 8))})
    c["avg_pool_pads_counted"] = through(
        [node("AveragePool", ["X"], "r", kernel_shape=[3, 2], pads=[1, 1, 1, 1],
              count_include_pad=1)],
        {"X": uniform((1, 2, 5, 6))})
    c["avg_pool_ceil_gaps"] = through(
        [node("AveragePool", ["X"], "r", kernel_shape=[2, 2], strides=[3, 3], ceil_mode=1)],
        {"X": uniform((1, 2, 8, 7))})
    c["avg_pool_1d"] = through(
        [node("AveragePool", ["X"], "r", kernel_shape=[4], strides=[2], pads=[1, 1])],
        {"X": uniform((2, 3, 11))})

    # Pad (constant mode): pads on some sides, crops (negative pads) on
    # others; the fill value is a setting.
    c["pad_and_crop"] = through(
        [node("Pad", ["X", "pads", "value"], "r")], {"X": uniform((2, 3, 4))},
        {"pads": i64([0, 1, -1, 1, -1, 2]), "value": np.array(0.5)})
    # A fill value that is a parameter anyway (it scales the result too): its
    # gradient has the padding's share.
    c["pad_value_parameter"] = through(
        [node("Pad", ["X", "pads", "V"], "p"), node("Mul", ["p", "V"], "r")],
        {"X": uniform((2, 3)), "V": np.array(0.7)}, {"pads": i64([1, 0, 0, 2])})

    # Resize: nearest, linear and cubic, by scales (a float initializer, which
    # is a setting, not a parameter) or sizes, upsampling and downsampling.
    def resize(x, mode, ctm, scales=None, sizes=None, **attrs):
        consts = {"scales": np.array(scales, dtype=np.float32)} if scales else {
            "sizes": i64(sizes)}
        inputs = ["X", "", "scales"] if scales else ["X", "", "", "sizes"]
        return through([node("Resize", inputs, "r", mode=mode,
                             coordinate_transformation_mode=ctm, **attrs)],
                       {"X": x}, consts)
    c["resize_nearest_scales"] = resize(uniform((1, 2, 3, 4)), "nearest", "asymmetric",
                                        scales=[1, 1, 2, 2], nearest_mode="floor")
    c["resize_nearest_exact_sizes"] = resize(uniform((1, 2, 5, 3)), "nearest", "half_pixel",
                                             sizes=[1, 2, 7, 2], nearest_mode="round_prefer_ceil")
    c["resize_linear_scales"] = resize(uniform((2, 1, 3, 4)), "linear", "half_pixel",
                                       scales=[1, 1, 2, 1.5])
    c["resize_linear_align_corners_sizes"] = resize(uniform((1, 2, 4, 5)), "linear",
                                                    "align_corners", sizes=[1, 2, 7, 3])
    c["resize_cubic"] = resize(uniform((1, 1, 4, 4)), "cubic", "half_pixel", scales=[1, 1, 2, 2],
                               cubic_coeff_a=-0.75)
    return c


# ---------------------------------------------------------------------------


def make_graph(nodes, params, consts, inputs, extra_outputs=None, output_shape=None):
    initializers = [numpy_helper.from_array(v, k) for k, v in {**params, **consts}.items()]
    graph_inputs = [helper.make_tensor_value_info(
        k, TensorProto.BOOL if v.dtype == bool else DOUBLE, list(v.shape)) for k, v in inputs.items()]
    outputs = [helper.make_tensor_value_info(o, DOUBLE, None) for o in (extra_outputs or [])]
    if output_shape is not None:
        outputs = [helper.make_tensor_value_info("y", DOUBLE, list(output_shape))]
    return helper.make_graph(nodes, "vjp", graph_inputs, outputs, initializers)


def mse(y, labels):
    return ((y - labels) ** 2).mean()


def write(path, array, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.array(array, order="C"), name).SerializeToString())


def feeds(inputs, consts):
    """Graph inputs and bool constants as tensors; integer constants (shapes,
    axes, bounds) stay NumPy arrays."""
    values = {k: torch.from_numpy(v) for k, v in inputs.items()}
    values.update({k: torch.from_numpy(v) if v.dtype == bool else v for k, v in consts.items()})
    return values


def generate(out, name, nodes, params, consts, inputs):
    # The interpreter on the graph first, for the output's shape.
    probe = make_graph(nodes, params, consts, inputs, extra_outputs=["y"])
    values = feeds(inputs, consts)
    y = run_graph(probe, {**values, **{k: torch.from_numpy(v) for k, v in params.items()}})
    assert y.dtype == torch.float64, (name, y.dtype)
    graph = make_graph(nodes, params, consts, inputs, output_shape=tuple(y.shape))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="vjp_models.py")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    # Each case's own labels: adding a case changes no other case's data.
    labels = np.random.default_rng(zlib.crc32(name.encode())).normal(size=tuple(y.shape))

    # torch.autograd's gradient.
    leaves = {k: torch.from_numpy(v.copy()).requires_grad_(True) for k, v in params.items()}
    loss = mse(run_graph(graph, {**values, **leaves}), torch.from_numpy(labels))
    loss.backward()
    autograd = {k: t.grad.numpy() for k, t in leaves.items()}

    # Central finite differences of the float64 loss.
    def loss_at(p):
        with torch.no_grad():
            y = run_graph(graph, {**values, **{k: torch.from_numpy(v) for k, v in p.items()}},
                          exact=False)
            return float(mse(y, torch.from_numpy(labels)))
    fd = {}
    for k, v in params.items():
        g = np.zeros_like(v)
        for index in np.ndindex(v.shape):
            h = 1e-6 * max(1.0, abs(v[index]))
            plus, minus = v.copy(), v.copy()
            plus[index] += h
            minus[index] -= h
            step = plus[index] - minus[index]  # the step actually taken
            g[index] = (loss_at({**params, k: plus}) - loss_at({**params, k: minus})) / step
        fd[k] = g
        if not np.allclose(g, autograd[k], rtol=FD_RTOL, atol=FD_ATOL):
            sys.exit("%s: finite differences and autograd disagree for '%s': max abs diff %g\n"
                     "fd %s\nautograd %s" % (name, k, np.abs(g - autograd[k]).max(), g, autograd[k]))

    directory = os.path.join(out, name)
    data = os.path.join(directory, "data")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(directory, "model.onnx"))
    for i, (k, v) in enumerate(list(inputs.items()) + [("labels", labels)]):
        write(os.path.join(data, "input_%d.pb" % i), v, k)
    write(os.path.join(data, "loss.pb"), np.float32(loss.item()), "loss")
    for k, g in fd.items():
        write(os.path.join(data, "grad_%s.pb" % k), g, "grad_" + k)


def main():
    all_cases = cases()
    if sys.argv[1:] == ["--list"]:
        print("\n".join(all_cases))
        return
    out, wanted = sys.argv[1], sys.argv[2:]
    for name, case in all_cases.items():
        if not wanted or name in wanted:
            generate(out, name, *case)


if __name__ == "__main__":
    main()
