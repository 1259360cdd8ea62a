"""Models whose output sizes the data gives, for data-dependent.test: NonZero
and Compress, alone and followed by other ops, with test data sets whose
references numpy computes.

    data_dependent_models.py --out DIR

writes DIR/<model>/model.onnx and DIR/<model>/<set>/{input_*,output_*}.pb.
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

from test_sets import write_set

F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def write_model(out, name, nodes, inputs, outputs):
    graph = helper.make_graph(nodes, name, inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(out, name), exist_ok=True)
    onnx.save(model, os.path.join(out, name, "model.onnx"))


def value(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    out = ap.parse_args().out
    rng = np.random.default_rng(5)

    # (y, t) = (nonzero(x), transpose(nonzero(x)) + 1): the second output is
    # computed from a buffer sized before the run for every element.
    write_model(out, "nonzero",
                [helper.make_node("NonZero", ["x"], ["y"], name="nonzero"),
                 helper.make_node("Transpose", ["y"], ["t0"]),
                 helper.make_node("Constant", [], ["one"],
                                  value=helper.make_tensor("one", I64, [], [1])),
                 helper.make_node("Add", ["t0", "one"], ["t"])],
                [value("x", F32, [3, 4])],
                [value("y", I64, [2, "n"]), value("t", I64, ["n", 2])])
    sets = {
        "some": rng.standard_normal((3, 4)).astype(np.float32) * (rng.random((3, 4)) < 0.5),
        "none": np.zeros((3, 4), np.float32),
        "all": np.ones((3, 4), np.float32),
        "nan": np.array([[np.nan, 0, -0.0, 2], [0, 0, 0, 0], [0, 1e-30, 0, 0]], np.float32),
    }
    for label, x in sets.items():
        y = np.array(np.nonzero(x), dtype=np.int64).reshape(2, -1)
        write_set(os.path.join(out, "nonzero", label), [x], [y, y.T + 1])

    # y = compress(x, c, axis=1) * 2, and the flattened compress of x.
    write_model(out, "compress",
                [helper.make_node("Compress", ["x", "c"], ["s"], name="compress", axis=1),
                 helper.make_node("Constant", [], ["two"],
                                  value=helper.make_tensor("two", F32, [], [2.0])),
                 helper.make_node("Mul", ["s", "two"], ["y"]),
                 helper.make_node("Compress", ["x", "f"], ["z"], name="flat")],
                [value("x", F32, [2, 5]), value("c", BOOL, [4]), value("f", BOOL, [10])],
                [value("y", F32, [2, "k"]), value("z", F32, ["m"])])
    x = rng.standard_normal((2, 5)).astype(np.float32)
    for label, c, f in (("mixed", [True, False, True, True], rng.random(10) < 0.5),
                        ("empty", [False] * 4, np.zeros(10, bool)),
                        ("full", [True] * 4, np.ones(10, bool))):
        c, f = np.array(c), np.array(f)
        write_set(os.path.join(out, "compress", label), [x, c, f],
                  [np.compress(c, x, axis=1) * 2, np.compress(f, x)])
    refused(out)


def refused(out):
    """A count that must equal another input's dim: a check only the run
    could make."""
    write_model(out, "nonzero_add",
                [helper.make_node("NonZero", ["x"], ["n"], name="nonzero"),
                 helper.make_node("Transpose", ["n"], ["t"]),
                 helper.make_node("Add", ["t", "y"], ["z"], name="add")],
                [value("x", F32, [3, 4]), value("y", I64, ["m", 2])],
                [value("z", I64, ["m", 2])])


if __name__ == "__main__":
    main()
