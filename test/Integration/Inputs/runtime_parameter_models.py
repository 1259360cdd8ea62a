"""Models whose axes, split sizes or depth are graph inputs, for
runtime-parameters.test: Unsqueeze, Squeeze, ReduceSum, CumSum, Split and
OneHot, each followed by another op, with test data sets at several values
whose references numpy computes.

    runtime_parameter_models.py --out DIR

writes DIR/<model>/model.onnx and DIR/<model>/<set>/{input_*,output_*}.pb;
sets named bad_* hold values the model must refuse (no outputs).
"""

import argparse
import os

import numpy as np
from onnx import TensorProto, helper

from test_sets import value, write_model, write_set

F32, I64 = TensorProto.FLOAT, TensorProto.INT64


def i64(*values):
    return np.array(values, dtype=np.int64)


def unknown(name, rank):
    """An output whose dims the inputs' values give."""
    return value(name, F32, [f"{name}{d}" for d in range(rank)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    out = ap.parse_args().out
    rng = np.random.default_rng(11)
    two = helper.make_tensor("two", F32, [], [2.0])

    def doubled(op_output):
        return [helper.make_node("Constant", [], ["two"], value=two),
                helper.make_node("Mul", [op_output, "two"], ["y"])]

    # y = unsqueeze(x, axes) * 2
    write_model(out, "unsqueeze",
                [helper.make_node("Unsqueeze", ["x", "axes"], ["u"], name="unsqueeze")] + doubled("u"),
                [value("x", F32, [2, 3, 4]), value("axes", I64, [2])],
                [unknown("y", 5)])
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    for label, axes in (("front_back", (0, 4)), ("negative", (-1, 1)), ("unsorted", (3, 0))):
        shape = list(x.shape)
        for a in sorted(a % 5 for a in axes):
            shape.insert(a, 1)
        write_set(os.path.join(out, "unsqueeze", label), [x, i64(*axes)], [x.reshape(shape) * 2])
    write_set(os.path.join(out, "unsqueeze", "bad_repeated"), [x, i64(1, -4)])
    write_set(os.path.join(out, "unsqueeze", "bad_range"), [x, i64(0, 5)])

    # y = squeeze(x, axes) * 2
    write_model(out, "squeeze",
                [helper.make_node("Squeeze", ["x", "axes"], ["s"], name="squeeze")] + doubled("s"),
                [value("x", F32, [1, 3, 1, 4]), value("axes", I64, [2])],
                [unknown("y", 2)])
    x = rng.standard_normal((1, 3, 1, 4)).astype(np.float32)
    for label, axes in (("both", (0, 2)), ("negative", (-2, 0))):
        write_set(os.path.join(out, "squeeze", label), [x, i64(*axes)],
                  [np.squeeze(x, axis=axes) * 2])
    write_set(os.path.join(out, "squeeze", "bad_size"), [x, i64(0, 1)])

    # Squeezing every dim: the result's shape does not read the axes, which
    # are still checked.
    write_model(out, "squeeze_all",
                [helper.make_node("Squeeze", ["x", "axes"], ["y"], name="squeeze")],
                [value("x", F32, [1, 1]), value("axes", I64, [2])],
                [value("y", F32, [])])
    x = np.array([[3.5]], np.float32)
    write_set(os.path.join(out, "squeeze_all", "ok"), [x, i64(-1, 0)], [x.reshape(())])
    write_set(os.path.join(out, "squeeze_all", "bad_repeated"), [x, i64(0, -2)])

    # y = reducesum(x, axes, keepdims=1) * 2
    write_model(out, "reduce_sum",
                [helper.make_node("ReduceSum", ["x", "axes"], ["r"], name="reduce", keepdims=1)]
                + doubled("r"),
                [value("x", F32, [2, 3, 4]), value("axes", I64, [2])],
                [unknown("y", 3)])
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    for label, axes in (("outer", (0, 2)), ("negative", (-2, 0)), ("inner", (2, 1))):
        reference = np.sum(x.astype(np.float64), axis=axes, keepdims=True) * 2
        write_set(os.path.join(out, "reduce_sum", label), [x, i64(*axes)],
                  [reference.astype(np.float32)])
    write_set(os.path.join(out, "reduce_sum", "bad_repeated"), [x, i64(1, 1)])
    # Opset 18 gave the other reductions axes inputs: the Euclidean norm.
    write_model(out, "reduce_l2",
                [helper.make_node("ReduceL2", ["x", "axes"], ["y"], name="reduce", keepdims=1)],
                [value("x", F32, [2, 3, 4]), value("axes", I64, [2])],
                [unknown("y", 3)], opset=18)
    for label, axes in (("outer", (0, 2)), ("inner", (-1, 1))):
        reference = np.sqrt(np.sum(np.square(x.astype(np.float64)), axis=axes, keepdims=True))
        write_set(os.path.join(out, "reduce_l2", label), [x, i64(*axes)],
                  [reference.astype(np.float32)])
    # Without the reduced dims, then an op that needs the result in a buffer.
    write_model(out, "reduce_sum_dropped",
                [helper.make_node("ReduceSum", ["x", "axes"], ["r"], name="reduce", keepdims=0),
                 helper.make_node("Softmax", ["r"], ["y"], axis=-1)],
                [value("x", F32, [2, 3, 4]), value("axes", I64, [2])],
                [unknown("y", 1)])
    for label, axes in (("outer", (0, 2)), ("negative", (-1, 0))):
        r = np.sum(x.astype(np.float64), axis=axes)
        e = np.exp(r - r.max())
        write_set(os.path.join(out, "reduce_sum_dropped", label), [x, i64(*axes)],
                  [(e / e.sum()).astype(np.float32)])

    # An unsqueezed input that a product and a softmax take on.
    w = rng.standard_normal((4, 5)).astype(np.float32)
    write_model(out, "unsqueeze_matmul",
                [helper.make_node("Unsqueeze", ["x", "axes"], ["u"], name="unsqueeze"),
                 helper.make_node("MatMul", ["u", "w"], ["m"], name="matmul"),
                 helper.make_node("Softmax", ["m"], ["y"], axis=-1)],
                [value("x", F32, [3, 4]), value("axes", I64, [1]), value("w", F32, [4, 5])],
                [unknown("y", 3)])
    x2 = rng.standard_normal((3, 4)).astype(np.float32)
    for axis in (0, 1):
        m = np.matmul(np.expand_dims(x2.astype(np.float64), axis), w.astype(np.float64))
        e = np.exp(m - m.max(axis=-1, keepdims=True))
        write_set(os.path.join(out, "unsqueeze_matmul", f"axis{axis}"), [x2, i64(axis), w],
                  [(e / e.sum(axis=-1, keepdims=True)).astype(np.float32)])
    write_set(os.path.join(out, "unsqueeze_matmul", "bad_inner"), [x2, i64(2), w])

    # A uint8 depth past int8's range counts as the number it is.
    write_model(out, "onehot_u8",
                [helper.make_node("OneHot", ["indices", "depth", "values"], ["y"], name="onehot")],
                [value("indices", I64, [3]), value("depth", TensorProto.UINT8, []),
                 value("values", F32, [2])],
                [value("y", F32, [3, "depth"])])
    idx = i64(0, 199, -1)
    hot = np.arange(200).reshape(1, 200) == np.where(idx < 0, idx + 200, idx)[:, None]
    off_on = np.array([0.5, 3.0], np.float32)
    write_set(os.path.join(out, "onehot_u8", "depth200"), [idx, np.array(200, np.uint8), off_on],
              [np.where(hot, off_on[1], off_on[0]).astype(np.float32)])

    # An integer mean over axes given at run time divides once (3 + 1 + 0 + 0
    # over 4 is 1; a mean of means would truncate to 0).
    write_model(out, "mean_int",
                [helper.make_node("ReduceMean", ["x", "axes"], ["y"], name="mean", keepdims=1)],
                [value("x", I64, [2, 2]), value("axes", I64, [2])],
                [helper.make_tensor_value_info("y", I64, ["y0", "y1"])], opset=18)
    write_set(os.path.join(out, "mean_int", "all"), [i64(3, 1, 0, 0).reshape(2, 2), i64(0, 1)],
              [i64(1).reshape(1, 1)])

    # An empty axes input is known when compiling: Unsqueeze is the identity.
    write_model(out, "unsqueeze_none",
                [helper.make_node("Unsqueeze", ["x", "axes"], ["y"], name="unsqueeze")],
                [value("x", F32, [2, 3]), value("axes", I64, [0])],
                [value("y", F32, [2, 3])])
    x = rng.standard_normal((2, 3)).astype(np.float32)
    write_set(os.path.join(out, "unsqueeze_none", "empty"), [x, np.zeros(0, np.int64)], [x])

    # A dim picked from a constant list by an index given at run time: the
    # shape (rebuilt as scalars before the run) and the data (the Gather in
    # the run) read an index past the end alike, clamped to the last.
    write_model(out, "gather_dim",
                [helper.make_node("Constant", [], ["table"],
                                  value=helper.make_tensor("table", I64, [3], [2, 3, 4])),
                 helper.make_node("Gather", ["table", "index"], ["g"], axis=0),
                 helper.make_node("Constant", [], ["rest"],
                                  value=helper.make_tensor("rest", I64, [1], [-1])),
                 helper.make_node("Concat", ["g", "rest"], ["shape"], axis=0),
                 helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
                [value("x", F32, [24]), value("index", I64, [1])],
                [unknown("y", 2), value("g", I64, [1])])
    x = np.arange(24, dtype=np.float32)
    for label, index in (("first", 0), ("last", -1), ("past", 5)):
        picked = np.array([2, 3, 4])[min(max(index + 3 if index < 0 else index, 0), 2)]
        write_set(os.path.join(out, "gather_dim", label), [x, i64(index)],
                  [x.reshape(picked, -1), i64(picked)])

    # A length computed from what a dynamic-batch product gives (its first
    # row's largest magnitude): the shape function computes the product, in
    # loops over the batch.
    w = rng.standard_normal((8, 16)).astype(np.float32)
    write_model(out, "computed_length",
                [helper.make_node("MatMul", ["x", "w"], ["p"]),
                 helper.make_node("Constant", [], ["first"],
                                  value=helper.make_tensor("first", I64, [1], [0])),
                 helper.make_node("Constant", [], ["second"],
                                  value=helper.make_tensor("second", I64, [1], [1])),
                 helper.make_node("Slice", ["p", "first", "second", "first"], ["rows"]),
                 helper.make_node("Constant", [], ["width"],
                                  value=helper.make_tensor("width", I64, [1], [16])),
                 helper.make_node("Reshape", ["rows", "width"], ["row"]),
                 helper.make_node("ReduceMax", ["row"], ["m"], axes=[0], keepdims=0),
                 helper.make_node("Abs", ["m"], ["a"]),
                 helper.make_node("Cast", ["a"], ["n"], to=I64),
                 helper.make_node("Constant", [], ["zero"],
                                  value=helper.make_tensor("zero", I64, [], [0])),
                 helper.make_node("Constant", [], ["one"],
                                  value=helper.make_tensor("one", I64, [], [1])),
                 helper.make_node("Range", ["zero", "n", "one"], ["y"], name="range")],
                [value("x", F32, ["batch", 8]), value("w", F32, [8, 16])],
                [value("y", I64, ["n"])])
    for batch in (1, 3):
        xb = (rng.standard_normal((batch, 8)) * 3).astype(np.float32)
        n = int(np.abs((xb[:1].astype(np.float64) @ w.astype(np.float64)).max()))
        write_set(os.path.join(out, "computed_length", f"batch{batch}"), [xb, w],
                  [np.arange(n, dtype=np.int64)])

    # A shape through an op the shape function cannot rebuild as scalars
    # (Abs): it computes a small buffer, freed as it returns.
    write_model(out, "abs_shape",
                [helper.make_node("Abs", ["s"], ["a"]),
                 helper.make_node("Reshape", ["x", "a"], ["y"], name="reshape")],
                [value("x", F32, [2, 6]), value("s", I64, [2])],
                [unknown("y", 2)])

    # y = cumsum(x, axis) * 2, exclusive and reversed
    write_model(out, "cumsum",
                [helper.make_node("CumSum", ["x", "axis"], ["c"], name="cumsum", exclusive=1,
                                  reverse=1)] + doubled("c"),
                [value("x", F32, [3, 4]), value("axis", I64, [])],
                [value("y", F32, [3, 4])])
    x = rng.standard_normal((3, 4)).astype(np.float32)
    for axis in (0, 1, -1):
        flipped = np.flip(x.astype(np.float64), axis)
        inclusive = np.cumsum(flipped, axis)
        reference = np.flip(inclusive - flipped, axis) * 2
        write_set(os.path.join(out, "cumsum", f"axis{axis}"), [x, np.array(axis, np.int64)],
                  [reference.astype(np.float32)])
    write_set(os.path.join(out, "cumsum", "bad_axis"), [x, np.array(2, np.int64)])
    # One dim: the sum does not depend on the axis, which is still checked.
    write_model(out, "cumsum_1d",
                [helper.make_node("CumSum", ["x", "axis"], ["y"], name="cumsum")],
                [value("x", F32, [5]), value("axis", I64, [])],
                [value("y", F32, [5])])
    x = rng.standard_normal(5).astype(np.float32)
    write_set(os.path.join(out, "cumsum_1d", "ok"), [x, np.array(-1, np.int64)],
              [np.cumsum(x.astype(np.float64)).astype(np.float32)])
    write_set(os.path.join(out, "cumsum_1d", "bad_axis"), [x, np.array(1, np.int64)])

    # a, b = split(x, sizes) along 1; y = a * 2, z = b
    write_model(out, "split",
                [helper.make_node("Split", ["x", "sizes"], ["a", "z"], name="split", axis=1)]
                + doubled("a"),
                [value("x", F32, [3, 6]), value("sizes", I64, [2])],
                [value("y", F32, [3, "y1"]), value("z", F32, [3, "z1"])])
    x = rng.standard_normal((3, 6)).astype(np.float32)
    for sizes in ((2, 4), (0, 6), (6, 0)):
        write_set(os.path.join(out, "split", f"{sizes[0]}_{sizes[1]}"), [x, i64(*sizes)],
                  [x[:, :sizes[0]] * 2, x[:, sizes[0]:]])
    write_set(os.path.join(out, "split", "bad_total"), [x, i64(3, 4)])
    write_set(os.path.join(out, "split", "bad_negative"), [x, i64(-1, 7)])
    # Parts larger than the dim whose sum wraps around to it.
    write_set(os.path.join(out, "split", "bad_wrap"), [x, i64(2**63 - 1, -(2**63 - 7))])
    # An empty input: parts of no rows.
    write_model(out, "split_empty",
                [helper.make_node("Split", ["x", "sizes"], ["y", "z"], name="split", axis=1)],
                [value("x", F32, [0, 6]), value("sizes", I64, [2])],
                [value("y", F32, [0, "y1"]), value("z", F32, [0, "z1"])])
    empty = np.zeros((0, 6), np.float32)
    write_set(os.path.join(out, "split_empty", "2_4"), [empty, i64(2, 4)],
              [empty[:, :2], empty[:, 2:]])

    # y = onehot(indices, depth, values) along axis 1, * 2
    write_model(out, "onehot",
                [helper.make_node("OneHot", ["indices", "depth", "values"], ["o"], name="onehot",
                                  axis=1)] + doubled("o"),
                [value("indices", I64, [2, 3]), value("depth", F32, []),
                 value("values", F32, [2])],
                [value("y", F32, [2, "depth", 3])])
    indices = i64(0, 2, -1, 1, 4, -3).reshape(2, 3)
    values = np.array([0.5, 3.0], np.float32)
    for depth in (5, 7):
        wrapped = np.where(indices < 0, indices + depth, indices)
        hot = (np.arange(depth).reshape(1, depth, 1) == wrapped[:, None, :])
        write_set(os.path.join(out, "onehot", f"depth{depth}"),
                  [indices, np.array(depth, np.float32), values],
                  [np.where(hot, values[1], values[0]).astype(np.float32) * 2])
    write_set(os.path.join(out, "onehot", "bad_zero"), [indices, np.array(0, np.float32), values])
    write_set(os.path.join(out, "onehot", "bad_fraction"),
              [indices, np.array(4.5, np.float32), values])

    # y = maxunpool(x, i, output_shape) * 2: MaxPool's maxima put back where
    # it found them, its indices counting positions in its input (as
    # PyTorch's max_pool2d returns them): an input of 4x6, and of 5x7, whose
    # last row and column no window reads.
    write_model(out, "maxunpool",
                [helper.make_node("MaxUnpool", ["x", "i", "shape"], ["u"], name="maxunpool",
                                  kernel_shape=[2, 2], strides=[2, 2])] + doubled("u"),
                [value("x", F32, [2, 1, 2, 3]), value("i", I64, [2, 1, 2, 3]),
                 value("shape", I64, [4])],
                [unknown("y", 4)])
    for dims in ((2, 1, 4, 6), (2, 1, 5, 7)):
        pooled = rng.standard_normal(dims).astype(np.float32)
        windows = pooled[:, :, :4, :6].reshape(2, 1, 2, 2, 3, 2).transpose(0, 1, 2, 4, 3, 5)
        pick = windows.reshape(2, 1, 2, 3, 4).argmax(axis=-1)
        rows = np.arange(2).reshape(1, 1, 2, 1) * 2 + pick // 2
        cols = np.arange(3).reshape(1, 1, 1, 3) * 2 + pick % 2
        plane = dims[2] * dims[3]
        flat = (np.arange(2).reshape(2, 1, 1, 1) * plane + rows * dims[3] + cols).astype(np.int64)
        x = pooled.reshape(-1)[flat]
        y = np.zeros(dims, np.float32)
        y.reshape(-1)[flat.reshape(-1)] = x.reshape(-1)
        write_set(os.path.join(out, "maxunpool", "x".join(map(str, dims[2:]))),
                  [x, flat, i64(*dims)], [y * 2])
    write_set(os.path.join(out, "maxunpool", "bad_channels"), [x, flat, i64(2, 2, 5, 7)])
    write_set(os.path.join(out, "maxunpool", "bad_negative"), [x, flat, i64(2, 1, -5, 7)])

    # y = stft(signal, frame_step, window): frames of 16 every frame_step
    # samples, (128 - 16) / frame_step + 1 of them, against numpy's rfft.
    write_model(out, "stft",
                [helper.make_node("STFT", ["signal", "step", "window"], ["y"], name="stft")],
                [value("signal", F32, [2, 128, 1]), value("step", I64, []),
                 value("window", F32, [16])],
                [unknown("y", 4)], opset=17)
    signal = rng.standard_normal((2, 128, 1)).astype(np.float32)
    window = np.hanning(16).astype(np.float32)
    for step in (8, 5, 112, 200):
        starts = range(0, 128 - 16 + 1, step)
        frames = np.stack([signal[:, s:s + 16, 0] * window for s in starts], axis=1)
        spectrum = np.fft.rfft(frames.astype(np.float64), axis=-1)
        write_set(os.path.join(out, "stft", f"step{step}"),
                  [signal, np.array(step, np.int64), window],
                  [np.stack([spectrum.real, spectrum.imag], axis=-1).astype(np.float32)])
    write_set(os.path.join(out, "stft", "bad_zero"), [signal, np.array(0, np.int64), window])

    # y = ConstantOfShape(s / d): a shape divided as the run divides (the
    # minimum over -1 wraps to itself, a negative dim, refused; never a
    # trap), and an i32 product wrapping as i32 arithmetic does.
    write_model(out, "shape_div",
                [helper.make_node("Div", ["s", "d"], ["q"], name="div"),
                 helper.make_node("ConstantOfShape", ["q"], ["y"], name="fill")],
                [value("s", I64, [2]), value("d", I64, [2])],
                [value("y", F32, ["y0", "y1"])])
    write_set(os.path.join(out, "shape_div", "ok"), [i64(12, -7), i64(4, -1)],
              [np.zeros((3, 7), np.float32)])
    write_set(os.path.join(out, "shape_div", "bad_min"), [i64(-(2**63), 1), i64(-1, 1)])
    write_model(out, "shape_mul_i32",
                [helper.make_node("Mul", ["s", "k"], ["p"], name="mul"),
                 helper.make_node("Cast", ["p"], ["q"], name="cast", to=I64),
                 helper.make_node("ConstantOfShape", ["q"], ["y"], name="fill")],
                [value("s", TensorProto.INT32, [1]), value("k", TensorProto.INT32, [1])],
                [value("y", F32, ["y0"])])
    write_set(os.path.join(out, "shape_mul_i32", "wrap"),
              [np.array([65536], np.int32), np.array([65536], np.int32)],
              [np.zeros(0, np.float32)])
    write_set(os.path.join(out, "shape_mul_i32", "ok"),
              [np.array([3], np.int32), np.array([2], np.int32)], [np.zeros(6, np.float32)])

    # MelWeightMatrix, all of it given at run time: the triangular filters
    # as ONNX's reference computes them (mel points evenly spaced between the
    # edges, the step over num_mel_bins + 2, binned by floor((dft + 1) * hz /
    # rate)), here in numpy for speech and music front ends' settings.
    write_model(out, "mel",
                [helper.make_node("MelWeightMatrix", ["m", "dft", "rate", "low", "high"], ["y"],
                                  name="mel", output_datatype=TensorProto.DOUBLE)],
                [value("m", I64, []), value("dft", TensorProto.INT32, []),
                 value("rate", I64, []), value("low", F32, []), value("high", F32, [])],
                [value("y", TensorProto.DOUBLE, ["bins", "m"])], opset=17)

    def mel_matrix(m, dft, rate, low, high):
        """ONNX's reference, on the ONNX test's scalar types (NumPy 1 takes
        the f32 edges' arithmetic to f64)."""
        m, dft, rate, low, high = (np.int64(m), np.int32(dft), np.int64(rate), np.float32(low),
                                   np.float32(high))
        points = np.arange(0, m + 2)
        low_mel = 2595 * np.log10(1 + low / 700)
        high_mel = 2595 * np.log10(1 + high / 700)
        step = (high_mel - low_mel) / points.shape[0]
        hz = 700 * (np.power(10, (points * step + low_mel) / 2595) - 1)
        bins = (((dft + 1) * hz) // rate).astype(int)
        y = np.zeros((dft // 2 + 1, m))
        for i in range(m):
            left, center, right = bins[i], bins[i + 1], bins[i + 2]
            if center == left:
                y[center, i] = 1
            else:
                for j in range(left, center + 1):
                    y[j, i] = float(j - left) / float(center - left)
            for j in range(center, right):
                y[j, i] = float(right - j) / float(right - center)
        return y

    for m, dft, rate, low, high in ((8, 16, 8192, 0.0, 4096.0), (40, 512, 16000, 20.0, 7600.0),
                                    (10, 64, 22050, 300.5, 4000.0),
                                    (40, 2048, 22050, 80.0, 7700.0),
                                    (64, 2048, 48000, 150.0, 10000.0)):
        write_set(os.path.join(out, "mel", f"m{m}_dft{dft}"),
                  [np.array(m, np.int64), np.array(dft, np.int32), np.array(rate, np.int64),
                   np.array(low, np.float32), np.array(high, np.float32)],
                  [mel_matrix(m, dft, rate, low, high)])
    scalars = lambda m, dft, rate: [np.array(m, np.int64), np.array(dft, np.int32),
                                    np.array(rate, np.int64), np.array(0, np.float32),
                                    np.array(4000, np.float32)]
    write_set(os.path.join(out, "mel", "bad_mels"), scalars(-1, 16, 8000))
    write_set(os.path.join(out, "mel", "bad_rate"), scalars(8, 16, 0))


if __name__ == "__main__":
    main()
