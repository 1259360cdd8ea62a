"""If models for if.test, with numpy references.

    if_models.py --out DIR

writes DIR/<model>/model.onnx and DIR/<model>/<set>/{input_*,output_*}.pb.
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from test_sets import write_set

F32, BOOL = TensorProto.FLOAT, TensorProto.BOOL


def save(out, name, graph):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(out, name), exist_ok=True)
    onnx.save(model, os.path.join(out, name, "model.onnx"))


def branch(name, nodes, outputs, initializers=()):
    return helper.make_graph(nodes, name, [], outputs, list(initializers))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    out = ap.parse_args().out
    vi = helper.make_tensor_value_info

    # A condition given at run time; the branches read the outer x, one of
    # them through a nested If on the same condition negated, and one with its
    # own initializer.
    inner = helper.make_node(
        "If", ["not_c"], ["n"], name="inner",
        then_branch=branch("inner_then", [helper.make_node("Neg", ["x"], ["n1"])], [vi("n1", F32, [2, 3])]),
        else_branch=branch("inner_else", [helper.make_node("Abs", ["x"], ["n2"])], [vi("n2", F32, [2, 3])]))
    then_branch = branch("then", [helper.make_node("Mul", ["x", "k"], ["t"])], [vi("t", F32, [2, 3])],
                         [numpy_helper.from_array(np.array(3, dtype=np.float32), "k")])
    else_branch = branch("else", [helper.make_node("Not", ["c"], ["not_c"]), inner], [vi("n", F32, [2, 3])])
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], name="outer", then_branch=then_branch, else_branch=else_branch)],
        "dynamic_if", [vi("c", BOOL, []), vi("x", F32, [2, 3])], [vi("y", F32, [2, 3])])
    save(out, "dynamic", graph)
    x = np.array([[1, -2, 3], [-4, 5, -6]], dtype=np.float32)
    write_set(os.path.join(out, "dynamic", "true"), [np.array(True), x], [x * 3])
    write_set(os.path.join(out, "dynamic", "false"), [np.array(False), x], [-x])

    # A condition the shapes fix (x's dim 1 == 3): only that branch is
    # imported, so the other may have any shape.
    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["s"]),
         helper.make_node("Gather", ["s", "one"], ["d"]),
         helper.make_node("Equal", ["d", "three"], ["c"]),
         helper.make_node("If", ["c"], ["y"], name="static",
                          then_branch=branch("then", [helper.make_node("Relu", ["x"], ["r"])],
                                             [vi("r", F32, [2, 3])]),
                          else_branch=branch("else", [helper.make_node("Transpose", ["x"], ["tr"])],
                                             [vi("tr", F32, [3, 2])]))],
        "static_if", [vi("x", F32, [2, 3])], [vi("y", F32, [2, 3])],
        [numpy_helper.from_array(np.array(1, dtype=np.int64), "one"),
         numpy_helper.from_array(np.array(3, dtype=np.int64), "three")])
    save(out, "static", graph)
    write_set(os.path.join(out, "static", "set"), [x], [np.maximum(x, 0)])

    # Branches of different shapes under a run-time condition: refused.
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], name="mismatch",
                          then_branch=branch("then", [helper.make_node("Relu", ["x"], ["r"])],
                                             [vi("r", F32, [2, 3])]),
                          else_branch=branch("else", [helper.make_node("Transpose", ["x"], ["tr"])],
                                             [vi("tr", F32, [3, 2])]))],
        "mismatch_if", [vi("c", BOOL, []), vi("x", F32, [2, 3])], [vi("y", F32, [None, None])])
    save(out, "mismatch", graph)

    # Branches whose shapes are given at run time (a Reshape to an input):
    # both would run, and the one not taken could fail its checks: refused.
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], name="reshapes",
                          then_branch=branch("then", [helper.make_node("Reshape", ["x", "s"], ["r"])],
                                             [vi("r", F32, [None, None])]),
                          else_branch=branch("else", [helper.make_node("Reshape", ["x", "s2"], ["r2"])],
                                             [vi("r2", F32, [None, None])]))],
        "dynamic_branches", [vi("c", BOOL, []), vi("x", F32, [6]),
                             vi("s", TensorProto.INT64, [2]), vi("s2", TensorProto.INT64, [2])],
        [vi("y", F32, [None, None])])
    save(out, "dynamic_branches", graph)


if __name__ == "__main__":
    main()
