"""Sequence models (SequenceOps.cpp keeps a sequence as its elements' values
on import), compiled by nnc and run by nnc-run against references computed
here with Python lists of NumPy arrays; then models nnc must refuse, whose
first error line is printed, and a run-time position out of range.

Usage: sequence_cases.py NNC NNC_RUN WORKDIR
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from case_data import first_error, write_test_data

nnc, nnc_run, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(9)
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def info(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model(name, nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              [numpy_helper.from_array(v, n) for n, v in initializers])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = os.path.join(work, name + ".onnx")
    onnx.save(m, path)
    return path


def write_data(name, feeds, expected):
    return write_test_data(os.path.join(work, name + "_data"), feeds, expected)


def check(name, path, feeds, expected):
    build = subprocess.run([nnc, path, "-o", path[:-5] + ".so"], capture_output=True, text=True)
    if build.returncode != 0:
        print(f"{name} FAIL compile: {build.stderr.strip()}")
        return
    data = write_data(name, feeds, expected)
    run = subprocess.run([nnc_run, path[:-5] + ".so", "--test-data", data], capture_output=True, text=True)
    print(f"{name} ok" if run.returncode == 0 else f"{name} FAIL run: {run.stdout} {run.stderr}")


def refused(name, path):
    build = subprocess.run([nnc, path, "-o", path[:-5] + ".so"], capture_output=True, text=True)
    print(f"{name} {'compiled' if build.returncode == 0 else first_error(build.stderr)}")


a, b, c, t = (rng.uniform(-1, 1, (2, 3)).astype(np.float32) for _ in range(4))
ins = [info("a", F, [2, 3]), info("b", F, [2, 3]), info("c", F, [2, 3]), info("t", F, [2, 3])]

# Positions given at run time: insert t, erase one, take one, every position
# of each (negative ones too), against the list operations in Python.
nodes = [helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
         helper.make_node("SequenceInsert", ["s", "t", "insert_at"], ["s1"]),
         helper.make_node("SequenceErase", ["s1", "erase_at"], ["s2"]),
         helper.make_node("SequenceAt", ["s2", "take"], ["y"]),
         helper.make_node("SequenceLength", ["s2"], ["n"])]
path = model("runtime_positions", nodes,
             ins + [info("insert_at", I64, []), info("erase_at", I64, []), info("take", I64, [])],
             [info("y", F, [2, 3]), info("n", I64, [])])
build = subprocess.run([nnc, path, "-o", path[:-5] + ".so"], capture_output=True, text=True)
mismatches = 0
cases = [(ins_at, er_at, tk) for ins_at in (-3, 0, 2, 3) for er_at in (-4, -1, 0, 3) for tk in (-3, 0, 2)]
for ins_at, er_at, tk in cases:
    seq = [a, b, c]
    seq.insert(ins_at if ins_at >= 0 else ins_at + 3, t)
    del seq[er_at]
    expected = seq[tk]
    feeds = [("a", a), ("b", b), ("c", c), ("t", t), ("insert_at", np.array(ins_at, np.int64)),
             ("erase_at", np.array(er_at, np.int64)), ("take", np.array(tk, np.int64))]
    data = write_data("runtime_positions", feeds, [("y", expected), ("n", np.array(3, np.int64))])
    run = subprocess.run([nnc_run, path[:-5] + ".so", "--test-data", data], capture_output=True, text=True)
    mismatches += run.returncode != 0
print(f"runtime_positions {'ok' if build.returncode == 0 and mismatches == 0 else 'FAIL'} "
      f"({len(cases)} position triples)")

# Past the end at run time: refused before the run, naming the node.
feeds = [("a", a), ("b", b), ("c", c), ("t", t), ("insert_at", np.array(5, np.int64)),
         ("erase_at", np.array(0, np.int64)), ("take", np.array(0, np.int64))]
data = write_data("runtime_positions", feeds, [("y", a), ("n", np.array(3, np.int64))])
run = subprocess.run([nnc_run, path[:-5] + ".so", "--test-data", data], capture_output=True, text=True)
print("runtime_position_past_end " + first_error(run.stdout + run.stderr))

# A run-time position's check holds even where nothing reads the elements it
# selects: the only element erased (then another appended), or only the
# length read after an insertion.
p = info("p", I64, [])
erase_then_insert = model(
    "erase_then_insert", [helper.make_node("SequenceConstruct", ["a"], ["s"]),
                          helper.make_node("SequenceErase", ["s", "p"], ["e"]),
                          helper.make_node("SequenceInsert", ["e", "b"], ["f"]),
                          helper.make_node("SequenceAt", ["f", "zero"], ["y"])],
    ins[:2] + [p], [info("y", F, [2, 3])], initializers=[("zero", np.array(0, np.int64))])
insert_then_length = model(
    "insert_then_length", [helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
                           helper.make_node("SequenceInsert", ["s", "a", "p"], ["t"]),
                           helper.make_node("SequenceLength", ["t"], ["n"])],
    ins[:2] + [p], [info("n", I64, [])])
for name, path, feeds, expected in (
        ("erase_then_insert", erase_then_insert, [("a", a), ("b", b), ("p", np.array(7, np.int64))],
         [("y", b)]),
        ("insert_then_length", insert_then_length, [("a", a), ("b", b), ("p", np.array(10, np.int64))],
         [("n", np.array(3, np.int64))])):
    subprocess.run([nnc, path, "-o", path[:-5] + ".so"], check=True)
    data = write_data(name, feeds, expected)
    run = subprocess.run([nnc_run, path[:-5] + ".so", "--test-data", data], capture_output=True, text=True)
    print(f"{name} " + first_error(run.stdout + run.stderr))

# A check in an If branch holds only where the branch is taken: position 5
# of three elements is fine while the condition picks the other branch.
branch_at = helper.make_graph([helper.make_node("SequenceAt", ["s", "p"], ["at"])], "then",
                              [], [info("at", F, [2, 3])])
branch_a = helper.make_graph([helper.make_node("Identity", ["a"], ["same"])], "else",
                             [], [info("same", F, [2, 3])])
path = model("if_untaken_check",
             [helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
              helper.make_node("Less", ["p", "three"], ["inside"]),
              helper.make_node("If", ["inside"], ["y"], then_branch=branch_at, else_branch=branch_a)],
             ins[:3] + [p], [info("y", F, [2, 3])], initializers=[("three", np.array(3, np.int64))])
check("if_untaken_check", path, [("a", a), ("b", b), ("c", c), ("p", np.array(5, np.int64))],
      [("y", a)])

# Constant positions; a split into chunks of 2 with a remainder, and into
# single elements without their dim; concatenation along a new axis.
x = rng.uniform(-1, 1, (5, 4)).astype(np.float32)
nodes = [helper.make_node("SplitToSequence", ["x", "two"], ["chunks"], axis=0),
         helper.make_node("SequenceAt", ["chunks", "last"], ["tail"]),
         helper.make_node("SplitToSequence", ["x"], ["columns"], axis=1, keepdims=0),
         helper.make_node("SequenceErase", ["columns", "one"], ["kept"]),
         helper.make_node("ConcatFromSequence", ["kept"], ["stacked"], axis=-1, new_axis=1),
         helper.make_node("SequenceEmpty", [], ["empty"]),
         helper.make_node("SequenceInsert", ["empty", "tail"], ["single"]),
         helper.make_node("ConcatFromSequence", ["single"], ["again"], axis=0)]
path = model("constant_positions", nodes, [info("x", F, [5, 4])],
             [info("stacked", F, [5, 3]), info("again", F, [1, 4])],
             initializers=[("two", np.array(2, np.int64)), ("last", np.array(-1, np.int64)),
                           ("one", np.array(1, np.int64))])
check("constant_positions", path, [("x", x)],
      [("stacked", np.stack([x[:, 0], x[:, 2], x[:, 3]], axis=-1)), ("again", x[4:5])])

# Refused: a sequence as a graph output, a sequence given to another op, a
# constant position out of range.
refused("sequence_output", model(
    "sequence_output", [helper.make_node("SequenceConstruct", ["a", "b"], ["s"], name="make")],
    ins[:2], [helper.make_tensor_sequence_value_info("s", F, [2, 3])]))
refused("sequence_into_add", model(
    "sequence_into_add", [helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
                          helper.make_node("Add", ["s", "a"], ["y"], name="add")],
    ins[:2], [info("y", F, [2, 3])]))
refused("sequence_as_position", model(
    "sequence_as_position", [helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
                             helper.make_node("SequenceAt", ["s", "s"], ["y"], name="at")],
    ins[:2], [info("y", F, [2, 3])]))
refused("position_out_of_range", model(
    "position_out_of_range", [helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
                              helper.make_node("SequenceAt", ["s", "far"], ["y"], name="at")],
    ins[:2], [info("y", F, [2, 3])], initializers=[("far", np.array(2, np.int64))]))
refused("runtime_position_mixed_shapes", model(
    "runtime_position_mixed_shapes",
    [helper.make_node("SequenceConstruct", ["a", "x"], ["s"]),
     helper.make_node("SequenceAt", ["s", "p"], ["y"], name="at")],
    [ins[0], info("x", F, [5, 4]), info("p", I64, [])], [info("y", F, [2, 3])]))
