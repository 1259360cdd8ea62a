"""Writes scatter models (ScatterElements, ScatterND, Scatter) with test data
sets whose references numpy computes, for inputs-read-only.test.

usage: scatter_models.py OUT_DIR

Each OUT_DIR/<case>/ holds model.onnx and test_data_set_0/. The data input is
what a scatter updates: compiled code must write a copy, never the caller's
buffer (nnc-run's repeat run catches a written input).
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save


def case(out, name, op, opset, attrs, data, indices, updates, expected):
    directory = os.path.join(out, name)
    os.makedirs(os.path.join(directory, "test_data_set_0"), exist_ok=True)
    node = helper.make_node(op, ["data", "indices", "updates"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, data.shape),
         helper.make_tensor_value_info("indices", TensorProto.INT64, indices.shape),
         helper.make_tensor_value_info("updates", TensorProto.FLOAT, updates.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, expected.shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    save(model, os.path.join(directory, "model.onnx"))
    tensors = [("input_0", data, "data"), ("input_1", indices, "indices"),
               ("input_2", updates, "updates"), ("output_0", expected, "y")]
    for file, array, tensor_name in tensors:
        with open(os.path.join(directory, "test_data_set_0", file + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, tensor_name).SerializeToString())


def main():
    out = sys.argv[1]
    data = np.array([[1, 2, 3, 4, 5]], dtype=np.float32)
    indices = np.array([[1, 3]], dtype=np.int64)
    updates = np.array([[10, 20]], dtype=np.float32)

    added = data.copy()
    np.add.at(added, (np.zeros_like(indices), indices), updates)
    case(out, "scatter_elements_add", "ScatterElements", 16, {"axis": 1, "reduction": "add"},
         data, indices, updates, added)

    replaced = data.copy()
    replaced[0, indices[0]] = updates[0]
    case(out, "scatter_elements", "ScatterElements", 13, {"axis": 1}, data, indices, updates,
         replaced)
    # Scatter (opset 9-10) is ScatterElements under its old name.
    case(out, "scatter", "Scatter", 10, {"axis": 1}, data, indices, updates, replaced)

    grid = np.arange(12, dtype=np.float32).reshape(3, 4)
    rows = np.array([[2], [0]], dtype=np.int64)
    new_rows = np.array([[-1, -2, -3, -4], [-5, -6, -7, -8]], dtype=np.float32)
    scattered = grid.copy()
    scattered[rows[:, 0]] = new_rows
    case(out, "scatter_nd", "ScatterND", 13, {}, grid, rows, new_rows, scattered)

    summed = grid.copy()
    np.add.at(summed, rows[:, 0], new_rows)
    case(out, "scatter_nd_add", "ScatterND", 16, {"reduction": "add"}, grid, rows, new_rows,
         summed)


if __name__ == "__main__":
    main()
