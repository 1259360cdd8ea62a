"""TopK models for topk.test, with references computed here by sorting each
slice in Python (the order ONNX specifies: larger values first, or smaller
with largest=0, equal values by index; NaN taken as the largest value, as
PyTorch and NumPy sort it).

    topk_models.py --out DIR

writes DIR/<model>/model.onnx and DIR/<model>/<set>/{input_*,output_*}.pb.
"""

import argparse
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from test_sets import write_set


def top_k(x, k, axis, largest):
    """Values and indices of the k first elements of each slice along axis."""
    moved = np.moveaxis(x, axis, -1)
    values = np.empty(moved.shape[:-1] + (k,), dtype=x.dtype)
    indices = np.empty(moved.shape[:-1] + (k,), dtype=np.int64)
    for at in np.ndindex(moved.shape[:-1]):
        row = moved[at]

        def key(i):
            v = float(row[i])
            if math.isnan(v):
                return (0, 0.0, i) if largest else (1, 0.0, i)
            return (1, -v, i) if largest else (0, v, i)

        order = sorted(range(row.shape[0]), key=key)[:k]
        values[at] = row[order]
        indices[at] = order
    return np.moveaxis(values, -1, axis), np.moveaxis(indices, -1, axis)


def write_model(out, name, x_type, x_shape, k, axis, largest, k_input):
    inputs = [helper.make_tensor_value_info("x", x_type, x_shape)]
    initializers = []
    if k_input:
        inputs.append(helper.make_tensor_value_info("k", TensorProto.INT64, [1]))
    else:
        initializers.append(numpy_helper.from_array(np.array([k], dtype=np.int64), "k"))
    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=axis, largest=largest,
                            name="topk")
    rank = len(x_shape)
    graph = helper.make_graph(
        [node], name, inputs,
        [helper.make_tensor_value_info("values", x_type, [None] * rank),
         helper.make_tensor_value_info("indices", TensorProto.INT64, [None] * rank)],
        initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(out, name), exist_ok=True)
    onnx.save(model, os.path.join(out, name, "model.onnx"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    out = ap.parse_args().out
    rng = np.random.default_rng(3)

    # Classifier-like: top 5 of 50 per row, with ties (values rounded to
    # halves) and NaNs; a symbolic batch.
    write_model(out, "rows", TensorProto.FLOAT, ["N", 50], 5, 1, 1, False)
    for batch in (1, 4):
        x = np.round(rng.standard_normal((batch, 50)) * 2) / 2
        x = x.astype(np.float32)
        x[0, 7] = np.nan
        x[-1, 3] = x[-1, 9] = np.float32(9.5)
        write_set(os.path.join(out, "rows", f"batch{batch}"), [x], list(top_k(x, 5, 1, True)))

    # A detector's top 40 of 300 candidates per row (past the k that scans,
    # a heap), with many ties and NaNs, the largest and the smallest; and all
    # of a row (k = n).
    for name, largest, k in (("heap_largest", 1, 40), ("heap_smallest", 0, 40), ("heap_all", 1, 300)):
        write_model(out, name, TensorProto.FLOAT, [3, 300], k, 1, largest, False)
        x = (np.round(rng.standard_normal((3, 300)) * 4) / 4).astype(np.float32)
        x[0, 5] = x[1, 299] = x[2, 0] = np.nan
        write_set(os.path.join(out, name, "data"), [x], list(top_k(x, k, 1, bool(largest))))

    # The smallest along axis 0 of an int32 tensor, k given at run time.
    write_model(out, "smallest", TensorProto.INT32, [6, 3, 2], None, 0, 0, True)
    x = rng.integers(-4, 4, size=(6, 3, 2)).astype(np.int32)
    for k in (0, 2, 6):
        write_set(os.path.join(out, "smallest", f"k{k}"), [x, np.array([k], dtype=np.int64)],
                  list(top_k(x, k, 0, False)))
    write_set(os.path.join(out, "smallest", "bad_k"), [x, np.array([7], dtype=np.int64)])

    # k as a 0-D input (ONNX says 1-D; a scalar is taken as its one value).
    graph = helper.make_graph(
        [helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=1, name="topk")], "scalar_k",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5]),
         helper.make_tensor_value_info("k", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("values", TensorProto.FLOAT, [2, None]),
         helper.make_tensor_value_info("indices", TensorProto.INT64, [2, None])])
    os.makedirs(os.path.join(out, "scalar_k"), exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]),
              os.path.join(out, "scalar_k", "model.onnx"))
    x = rng.standard_normal((2, 5)).astype(np.float32)
    write_set(os.path.join(out, "scalar_k", "k2"), [x, np.array(2, dtype=np.int64)], list(top_k(x, 2, 1, True)))


if __name__ == "__main__":
    main()
