"""Writes Div and Mod models on signed integers whose operands include the
cases that trap in a machine's divide instruction: the minimum over -1 (the
quotient overflows) and a zero divisor. References are computed with Python's
unbounded integers, then wrapped to the element type.

usage: integer_division.py OUT_DIR

Each OUT_DIR/<case>/ holds model.onnx and test_data_set_0/.
"""

import os
import sys

import numpy as np
from onnx import helper, numpy_helper, save
from onnx.mapping import NP_TYPE_TO_TENSOR_TYPE


def wrap(v, dtype):
    bits = np.iinfo(dtype).bits
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def trunc_div(a, b):
    # ONNX Div on integers truncates toward zero; a zero divisor is undefined
    # in ONNX and gives 0 in nnc.
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def trunc_mod(a, b):  # fmod = 1: the sign of the dividend
    return 0 if b == 0 else a - b * trunc_div(a, b)


def floor_mod(a, b):  # fmod = 0: the sign of the divisor
    return 0 if b == 0 else a % b


def case(out, name, op, attrs, dtype, fn):
    info = np.iinfo(dtype)
    a = np.array([info.min, info.min, info.max, -7, 7, -7, 5, info.min], dtype=dtype)
    b = np.array([-1, 1, -1, 2, -2, -1, 0, 0], dtype=dtype)
    y = np.array([wrap(fn(int(x), int(z)), dtype) for x, z in zip(a, b)], dtype=dtype)
    directory = os.path.join(out, name)
    os.makedirs(os.path.join(directory, "test_data_set_0"), exist_ok=True)
    elem = NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]
    node = helper.make_node(op, ["a", "b"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("a", elem, a.shape),
         helper.make_tensor_value_info("b", elem, b.shape)],
        [helper.make_tensor_value_info("y", elem, y.shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    save(model, os.path.join(directory, "model.onnx"))
    for file, array, tensor_name in [("input_0", a, "a"), ("input_1", b, "b"), ("output_0", y, "y")]:
        with open(os.path.join(directory, "test_data_set_0", file + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, tensor_name).SerializeToString())


def main():
    out = sys.argv[1]
    for dtype in (np.int8, np.int32, np.int64):
        bits = np.iinfo(dtype).bits
        case(out, f"div_i{bits}", "Div", {}, dtype, trunc_div)
        case(out, f"fmod_i{bits}", "Mod", {"fmod": 1}, dtype, trunc_mod)
        case(out, f"mod_i{bits}", "Mod", {}, dtype, floor_mod)


if __name__ == "__main__":
    main()
