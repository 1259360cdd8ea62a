"""Models whose shapes are graph inputs, for value-shapes.test: a Reshape to
a shape, a Slice with bounds, a Tile with repeats, an Expand and a Pad, a
Range to a length, each given at run time and followed by more ops, with
test data sets at several values whose references numpy computes.

    value_shape_models.py --out DIR

writes DIR/<model>/model.onnx and DIR/<model>/<set>/{input_*,output_*}.pb;
sets named bad_* hold values the model must refuse (no outputs).
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from test_sets import write_set

F32, I64 = TensorProto.FLOAT, TensorProto.INT64


def write_model(out, name, nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(out, name), exist_ok=True)
    onnx.save(model, os.path.join(out, name, "model.onnx"))


def i64(*values):
    return np.array(values, dtype=np.int64)


def onnx_slice(x, starts, ends, axes, steps):
    """ONNX Slice, written out: negative values count from the end, bounds
    clamp (to [0, dim - 1] and [-1, dim - 1] for a negative step)."""
    index = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        dim = x.shape[a]
        s = s + dim if s < 0 else s
        e = e + dim if e < 0 else e
        if st > 0:
            s, e = min(max(s, 0), dim), min(max(e, 0), dim)
            index[a] = slice(s, e, st)
        else:
            s, e = min(max(s, 0), dim - 1), min(max(e, -1), dim - 1)
            index[a] = slice(s, None if e < 0 else e, st)
    return x[tuple(index)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    out = ap.parse_args().out
    rng = np.random.default_rng(7)

    # y = relu(reshape(x, shape)) * 2: the product reads a buffer sized by
    # the shape's values.
    write_model(out, "reshape", [
        helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
        helper.make_node("Relu", ["r"], ["a"], name="relu"),
        helper.make_node("Mul", ["a", "two"], ["y"], name="double"),
    ], [helper.make_tensor_value_info("x", F32, [2, 3, 4]),
        helper.make_tensor_value_info("shape", I64, [2])],
       [helper.make_tensor_value_info("y", F32, [None, None])],
       [numpy_helper.from_array(np.array(2, dtype=np.float32), "two")])
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    for name, shape in (("4x6", i64(4, -1)), ("2x12", i64(0, 12)), ("24x1", i64(-1, 1))):
        dims = list(shape)
        if dims[0] == 0:
            dims[0] = 2
        write_set(os.path.join(out, "reshape", name), [x, shape],
                  [np.maximum(x.reshape(dims), 0) * 2])
    write_set(os.path.join(out, "reshape", "bad_count"), [x, i64(5, -1)])
    write_set(os.path.join(out, "reshape", "bad_two_inferred"), [x, i64(-1, -1)])
    write_set(os.path.join(out, "reshape", "bad_below"), [x, i64(-2, 12)])

    # y = tile(slice(x), repeats) + 1
    write_model(out, "slice_tile", [
        helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["s"], name="slice"),
        helper.make_node("Tile", ["s", "repeats"], ["t"], name="tile"),
        helper.make_node("Add", ["t", "one"], ["y"], name="add"),
    ], [helper.make_tensor_value_info("x", F32, [5, 6])] +
       [helper.make_tensor_value_info(n, I64, [2]) for n in ("starts", "ends", "axes", "steps", "repeats")],
       [helper.make_tensor_value_info("y", F32, [None, None])],
       [numpy_helper.from_array(np.array(1, dtype=np.float32), "one")])
    x = rng.standard_normal((5, 6)).astype(np.float32)
    cases = {
        "forward": (i64(1, 0), i64(4, 6), i64(0, 1), i64(1, 2), i64(2, 1)),
        "backward": (i64(-1, 5), i64(-100, 0), i64(0, 1), i64(-2, -1), i64(1, 3)),
        "clamped": (i64(-100, 2), i64(100, 2**62), i64(1, 0), i64(3, 1), i64(1, 1)),
        "empty": (i64(3, 0), i64(3, 6), i64(0, 1), i64(1, 1), i64(4, 2)),
    }
    for name, (starts, ends, axes, steps, repeats) in cases.items():
        sliced = onnx_slice(x, starts, ends, axes, steps)
        write_set(os.path.join(out, "slice_tile", name), [x, starts, ends, axes, steps, repeats],
                  [np.tile(sliced, repeats) + 1])
    write_set(os.path.join(out, "slice_tile", "bad_step"),
              [x, i64(0, 0), i64(5, 6), i64(0, 1), i64(1, 0), i64(1, 1)])
    write_set(os.path.join(out, "slice_tile", "bad_axis"),
              [x, i64(0, 0), i64(5, 6), i64(0, 2), i64(1, 1), i64(1, 1)])
    write_set(os.path.join(out, "slice_tile", "bad_repeated_axis"),
              [x, i64(0, 0), i64(5, 6), i64(1, 1), i64(1, 1), i64(1, 1)])
    write_set(os.path.join(out, "slice_tile", "bad_repeats"),
              [x, i64(0, 0), i64(5, 6), i64(0, 1), i64(1, 1), i64(1, -1)])

    # y = pad(expand(x, shape), pads) * x: the product broadcasts x [3, 1]
    # against a shape that must come out [3, N].
    write_model(out, "expand_pad", [
        helper.make_node("Expand", ["x", "shape"], ["e"], name="expand"),
        helper.make_node("Pad", ["e", "pads", "value"], ["p"], mode="constant", name="pad"),
        helper.make_node("Exp", ["p"], ["y"], name="exp"),
    ], [helper.make_tensor_value_info("x", F32, [3, 1]),
        helper.make_tensor_value_info("shape", I64, [2]),
        helper.make_tensor_value_info("pads", I64, [4])],
       [helper.make_tensor_value_info("y", F32, [None, None])],
       [numpy_helper.from_array(np.array(0.5, dtype=np.float32), "value")])
    x = rng.standard_normal((3, 1)).astype(np.float32)
    for name, shape, pads in (("3x4", i64(3, 4), i64(1, 0, 0, 2)), ("1x5", i64(1, 5), i64(0, 1, 2, 0)),
                              ("crop", i64(3, 1), i64(0, 0, -1, 3))):
        expanded = np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(shape)))
        lo, hi = pads[:2], pads[2:]
        padded = np.pad(expanded, [(max(l, 0), max(h, 0)) for l, h in zip(lo, hi)], constant_values=0.5)
        padded = padded[tuple(slice(max(-l, 0), padded.shape[d] - max(-h, 0))
                              for d, (l, h) in enumerate(zip(lo, hi)))]
        write_set(os.path.join(out, "expand_pad", name), [x, shape, pads], [np.exp(padded)])
    write_set(os.path.join(out, "expand_pad", "bad_broadcast"), [x, i64(2, 4), i64(0, 0, 0, 0)])
    write_set(os.path.join(out, "expand_pad", "bad_pads"), [x, i64(3, 4), i64(0, -3, 0, -2)])
    write_set(os.path.join(out, "expand_pad", "bad_negative"), [x, i64(-1, 4), i64(0, 0, 0, 0)])
    # Pad reads its input at clamped indices: an input found empty at run
    # time is refused (its dims are known only then).
    write_set(os.path.join(out, "expand_pad", "bad_empty"), [x, i64(3, 0), i64(0, 1, 0, 1)])

    # y = cos(range(0, n) * 0.25), as ONNX's window functions build theirs.
    write_model(out, "range", [
        helper.make_node("Range", ["zero", "n", "step"], ["r"], name="range"),
        helper.make_node("Cast", ["r"], ["f"], to=F32, name="cast"),
        helper.make_node("Mul", ["f", "quarter"], ["a"], name="scale"),
        helper.make_node("Cos", ["a"], ["y"], name="cos"),
    ], [helper.make_tensor_value_info("n", I64, [])],
       [helper.make_tensor_value_info("y", F32, [None])],
       [numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
        numpy_helper.from_array(np.array(1, dtype=np.int64), "step"),
        numpy_helper.from_array(np.array(0.25, dtype=np.float32), "quarter")])
    for n in (1, 7, 0, -3):
        write_set(os.path.join(out, "range", f"n{n}"), [np.array(n, dtype=np.int64)],
                  [np.cos(np.arange(0, n, dtype=np.float64) * 0.25).astype(np.float32)])

    write_edge_cases(out)


def write_edge_cases(out):
    """What a review found: each model with a set that must run and one (or
    more) that must be refused, never crash or wrap around."""
    def model(name, nodes, inputs, outputs, initializers=()):
        write_model(out, name, nodes, inputs, outputs, initializers)

    def vi(name, dtype, shape):
        return helper.make_tensor_value_info(name, dtype, shape)

    # A Reshape of dynamic dims to dims given at run time ([N, M] to [M, N]
    # has the same type, and is still a reshape).
    model("dyn_reshape", [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
          [vi("x", F32, ["N", "M"]), vi("shape", I64, [2])], [vi("y", F32, [None, None])])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    write_set(os.path.join(out, "dyn_reshape", "3x2"), [x, i64(3, 2)], [x.reshape(3, 2)])
    write_set(os.path.join(out, "dyn_reshape", "bad_7x7"), [x, i64(7, 7)])

    # Integer Range whose distance or -delta overflows int64, and a float
    # Range counted in f32 as NumPy does (0, 0.3, 0.1: 3 elements).
    model("range64", [helper.make_node("Range", ["s", "l", "d"], ["y"], name="range")],
          [vi(n, I64, []) for n in "sld"], [vi("y", I64, [None])])
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    for name, (s0, l0, d0) in {"full": (lo, hi, 2**62), "min_delta": (0, -5, lo)}.items():
        y = np.array([s0 + i * d0 for i in range(4 if name == "full" else 1)], dtype=object)
        write_set(os.path.join(out, "range64", name),
                  [np.array(s0, dtype=np.int64), np.array(l0, dtype=np.int64), np.array(d0, dtype=np.int64)],
                  [y.astype(np.int64)])
    model("rangef", [helper.make_node("Range", ["s", "l", "d"], ["y"], name="range")],
          [vi(n, F32, []) for n in "sld"], [vi("y", F32, [None])])
    s0, l0, d0 = (np.array(v, dtype=np.float32) for v in (0, 0.3, 0.1))
    write_set(os.path.join(out, "rangef", "tenths"), [s0, l0, d0], [np.arange(s0, l0, d0, dtype=np.float32)])
    write_set(os.path.join(out, "rangef", "bad_delta"), [s0, l0, np.array(0, dtype=np.float32)])
    write_set(os.path.join(out, "range64", "bad_delta"),
              [np.array(0, dtype=np.int64), np.array(5, dtype=np.int64), np.array(0, dtype=np.int64)])

    # Dims past int64 from repeats and pads: refused.
    model("huge", [helper.make_node("Tile", ["x", "r"], ["t"], name="tile"),
                   helper.make_node("Pad", ["x", "p"], ["y"], name="pad")],
          [vi("x", F32, [2, 3]), vi("r", I64, [2]), vi("p", I64, [4])],
          [vi("t", F32, [None, None]), vi("y", F32, [None, None])])
    x = np.ones((2, 3), dtype=np.float32)
    write_set(os.path.join(out, "huge", "bad_repeats"), [x, i64(1, (2**64 + 2) // 3), i64(0, 0, 0, 0)])
    write_set(os.path.join(out, "huge", "bad_pads"), [x, i64(1, 1), i64(0, 2**63 - 1, 0, 2**63 - 1)])

    # An element count that wraps around int64 (2^62 x 2 ones) reshaped:
    # refused before any division by the wrapped count.
    model("wrapped_count", [
        helper.make_node("ConstantOfShape", ["s1"], ["c"], name="fill",
                         value=numpy_helper.from_array(np.array([1], dtype=np.float32))),
        helper.make_node("Reshape", ["c", "s2"], ["y"], name="reshape")],
        [vi("s1", I64, [2]), vi("s2", I64, [3])], [vi("y", F32, [None, None, None])])
    write_set(os.path.join(out, "wrapped_count", "bad"),
              [i64(2**62, 2), i64(2**32 + 1, 2**32 - 1, 1)])
    write_set(os.path.join(out, "wrapped_count", "bad_negative"), [i64(-1, 2), i64(1, 1, 1)])

    # Resize to scales given at run time (nearest, asymmetric, floor: output
    # [i, j] reads input [floor(i / s), floor(j / s')]).
    model("resize_rt", [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="resize", mode="nearest",
                                         coordinate_transformation_mode="asymmetric", nearest_mode="floor")],
          [vi("x", F32, [1, 1, 2, 2]), vi("scales", F32, [4])], [vi("y", F32, [None, None, None, None])])
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    write_set(os.path.join(out, "resize_rt", "2x3"), [x, np.array([1, 1, 2, 3], dtype=np.float32)],
              [np.repeat(np.repeat(x, 2, axis=2), 3, axis=3)])
    write_set(os.path.join(out, "resize_rt", "bad_nan"), [x, np.array([1, 1, np.nan, 2], dtype=np.float32)])

    # Static inputs and outputs, a shape input in between: the function
    # still checks it before the run.
    model("static_io", [helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
                        helper.make_node("Add", ["r", "z"], ["y"], name="add")],
          [vi("x", F32, [2, 3, 4]), vi("shape", I64, [2]), vi("z", F32, [4, 6])], [vi("y", F32, [4, 6])])
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    z = np.ones((4, 6), dtype=np.float32)
    write_set(os.path.join(out, "static_io", "good"), [x, i64(4, 6), z], [x.reshape(4, 6) + z])
    write_set(os.path.join(out, "static_io", "bad"), [x, i64(5, -1), z])

    # tf_half_pixel_for_nn shifts by half a pixel at scale 1 too (constant
    # scales, the static lowering): linear, (i + 0.5) / 1, clamped.
    model("resize_tf", [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="resize", mode="linear",
                                         coordinate_transformation_mode="tf_half_pixel_for_nn")],
          [vi("x", F32, [1, 1, 1, 4])], [vi("y", F32, [1, 1, 1, 4])],
          [numpy_helper.from_array(np.ones(4, dtype=np.float32), "scales")])
    x = np.array([0, 1, 4, 9], dtype=np.float32).reshape(1, 1, 1, 4)
    y = np.interp(np.arange(4) + 0.5, np.arange(4), x.ravel()).astype(np.float32).reshape(1, 1, 1, 4)
    write_set(os.path.join(out, "resize_tf", "scale1"), [x], [y])

    # A shape through a narrowing cast (uint8: 260 -> 4) keeps the cast's values.
    model("narrow_cast", [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Cast", ["s"], ["u"], to=TensorProto.UINT8, name="narrow"),
        helper.make_node("Cast", ["u"], ["w"], to=I64, name="widen"),
        helper.make_node("ConstantOfShape", ["w"], ["y"], name="fill",
                         value=numpy_helper.from_array(np.array([1], dtype=np.float32)))],
        [vi("x", F32, ["N"])], [vi("y", F32, [None])])
    write_set(os.path.join(out, "narrow_cast", "n260"), [np.zeros(260, dtype=np.float32)],
              [np.ones(260 % 256, dtype=np.float32)])

    # An Expand whose result is static (x's dims > 1 decide) checks its shape.
    model("expand_static", [helper.make_node("Expand", ["x", "shape"], ["y"], name="expand")],
          [vi("x", F32, [3, 4]), vi("shape", I64, [2])], [vi("y", F32, [3, 4])])
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    write_set(os.path.join(out, "expand_static", "ones"), [x, i64(1, 4)], [x])
    write_set(os.path.join(out, "expand_static", "bad"), [x, i64(5, 4)])


if __name__ == "__main__":
    main()
