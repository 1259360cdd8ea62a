"""Loop and Scan models (ControlFlowOps.cpp unrolls them), compiled by nnc and
run by nnc-run against references computed here with plain Python loops over
NumPy arrays in float64; then models nnc must refuse, whose first error line
is printed.

Usage: control_flow_cases.py NNC NNC_RUN WORKDIR
Prints '<name> ok', '<name> FAIL ...' or '<name> error: ...' per case.
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
rng = np.random.default_rng(5)
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def info(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, array):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(array), name))


def model(name, nodes, inputs, outputs, opset=17, initializers=()):
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              [numpy_helper.from_array(v, n) for n, v in initializers])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8 if opset >= 9 else 4
    path = os.path.join(work, name + ".onnx")
    onnx.save(m, path)
    return path


def compile_model(path):
    return subprocess.run([nnc, path, "-o", path[:-5] + ".so"], capture_output=True, text=True)


def check(name, path, feeds, expected):
    """feeds: [(name, array)]; expected: [(name, float64 array)] in output order."""
    build = compile_model(path)
    if build.returncode != 0:
        print(f"{name} FAIL compile: {build.stderr.strip()}")
        return
    data = write_test_data(os.path.join(work, name + "_data"), feeds,
                           [(n, v.astype(np.float32)) for n, v in expected])
    run = subprocess.run([nnc_run, path[:-5] + ".so", "--test-data", data, "--atol", "1e-5",
                          "--rtol", "1e-5"], capture_output=True, text=True)
    print(f"{name} ok" if run.returncode == 0 else f"{name} FAIL run: {run.stdout} {run.stderr}")


def refused(name, path):
    build = compile_model(path)
    print(f"{name} {'compiled' if build.returncode == 0 else first_error(build.stderr)}")


# Loop with a constant trip count of 5: y = y * 0.5 + i, each y also a scan
# output (stacked along a new leading dim).
body = helper.make_graph(
    [helper.make_node("Identity", ["cond"], ["cond_out"]),
     helper.make_node("Cast", ["i"], ["fi"], to=F),
     const("half", np.float32(0.5)),
     helper.make_node("Mul", ["y", "half"], ["scaled"]),
     helper.make_node("Add", ["scaled", "fi"], ["y_out"]),
     helper.make_node("Identity", ["y_out"], ["scan"])],
    "body", [info("i", I64, []), info("cond", B, []), info("y", F, [2, 3])],
    [info("cond_out", B, []), info("y_out", F, [2, 3]), info("scan", F, [2, 3])])
y0 = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
y, steps = y0.astype(np.float64), []
for i in range(5):
    y = y * 0.5 + i
    steps.append(y)
path = model("loop_trip_count",
             [helper.make_node("Loop", ["trips", "", "y0"], ["y", "ys"], body=body)],
             [info("y0", F, [2, 3])], [info("y", F, [2, 3]), info("ys", F, [5, 2, 3])],
             initializers=[("trips", np.array(5, np.int64))])
check("loop_trip_count", path, [("y0", y0)], [("y", y), ("ys", np.stack(steps))])

# No trip count; the body's condition i < 3 (folded when compiling) stops it
# after iteration 3. The body reads the outer graph's w.
body = helper.make_graph(
    [const("three", np.int64(3)),
     helper.make_node("Less", ["i", "three"], ["cond_out"]),
     helper.make_node("Add", ["s", "w"], ["s_out"])],
    "body", [info("i", I64, []), info("cond", B, []), info("s", F, [4])],
    [info("cond_out", B, []), info("s_out", F, [4])])
s0 = rng.uniform(-1, 1, 4).astype(np.float32)
w = rng.uniform(-1, 1, 4).astype(np.float32)
path = model("loop_condition",
             [helper.make_node("Loop", ["", "go", "s0"], ["s"], body=body)],
             [info("s0", F, [4]), info("w", F, [4])], [info("s", F, [4])],
             initializers=[("go", np.array(True))])
check("loop_condition", path, [("s0", s0), ("w", w)],
      [("s", s0.astype(np.float64) + 4 * w.astype(np.float64))])

# Scan (opset 17): a state threaded through, a read forwards along axis 0 and
# b backwards along axis 1; the running state stacked along axis 1,
# backwards.
body = helper.make_graph(
    [helper.make_node("Mul", ["a_t", "b_t"], ["p"]),
     helper.make_node("Add", ["s", "p"], ["s_out"]),
     helper.make_node("Identity", ["s_out"], ["trace"])],
    "body", [info("s", F, [4]), info("a_t", F, [4]), info("b_t", F, [4])],
    [info("s_out", F, [4]), info("trace", F, [4])])
s0 = rng.uniform(-1, 1, 4).astype(np.float32)
a = rng.uniform(-1, 1, (5, 4)).astype(np.float32)
b = rng.uniform(-1, 1, (4, 5)).astype(np.float32)
s, traces = s0.astype(np.float64), []
for t in range(5):
    s = s + a[t].astype(np.float64) * b[:, 4 - t].astype(np.float64)
    traces.append(s)
path = model("scan_directions",
             [helper.make_node("Scan", ["s0", "a", "b"], ["s", "traces"], body=body, num_scan_inputs=2,
                               scan_input_axes=[0, 1], scan_input_directions=[0, 1],
                               scan_output_axes=[1], scan_output_directions=[1])],
             [info("s0", F, [4]), info("a", F, [5, 4]), info("b", F, [4, 5])],
             [info("s", F, [4]), info("traces", F, [4, 5])])
check("scan_directions", path, [("s0", s0), ("a", a), ("b", b)],
      [("s", s), ("traces", np.stack(traces[::-1], axis=1))])

# Scan of opset 8: a batch of 2 scanned entry by entry, the sequence along
# dim 1, sequence_lens left out.
body = helper.make_graph(
    [helper.make_node("Add", ["s", "x_t"], ["s_out"]),
     helper.make_node("Identity", ["s_out"], ["running"])],
    "body", [info("s", F, [3]), info("x_t", F, [3])],
    [info("s_out", F, [3]), info("running", F, [3])])
s0 = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
x = rng.uniform(-1, 1, (2, 4, 3)).astype(np.float32)
running = s0[:, None, :].astype(np.float64) + np.cumsum(x.astype(np.float64), axis=1)
path = model("scan8_batch",
             [helper.make_node("Scan", ["", "s0", "x"], ["s", "running"], body=body, num_scan_inputs=1)],
             [info("s0", F, [2, 3]), info("x", F, [2, 4, 3])],
             [info("s", F, [2, 3]), info("running", F, [2, 4, 3])], opset=8)
check("scan8_batch", path, [("s0", s0), ("x", x)], [("s", running[:, -1]), ("running", running)])

# Run-time loops (more in dynamic-recurrent.test): a condition computed from
# the data, with the trip count absent and the condition a constant (the
# unrolled iterations give way to a while loop), and a Scan over a sequence
# length known only at run time.
body = helper.make_graph(
    [helper.make_node("ReduceSum", ["y"], ["total"], keepdims=0),
     const("limit", np.float32(10)),
     helper.make_node("Less", ["total", "limit"], ["cond_out"]),
     helper.make_node("Add", ["y", "y"], ["y_out"])],
    "body", [info("i", I64, []), info("cond", B, []), info("y", F, [2])],
    [info("cond_out", B, []), info("y_out", F, [2])])
path = model("loop_runtime_condition", [helper.make_node("Loop", ["", "go", "y0"], ["y"], body=body, name="doubling")],
             [info("y0", F, [2])], [info("y", F, [2])], opset=13, initializers=[("go", np.array(True))])
y0 = np.array([0.3, 0.4], np.float32)
y = y0.astype(np.float64)
while True:
    going = y.sum() < 10
    y = 2 * y
    if not going:
        break
check("loop_runtime_condition", path, [("y0", y0)], [("y", y)])
body = helper.make_graph(
    [helper.make_node("Add", ["s", "x_t"], ["s_out"])],
    "body", [info("s", F, [3]), info("x_t", F, [3])], [info("s_out", F, [3])])
path = model("scan_runtime_length", [helper.make_node("Scan", ["s0", "x"], ["s"], body=body, num_scan_inputs=1, name="sum")],
             [info("s0", F, [3]), info("x", F, ["T", 3])], [info("s", F, [3])])
s0 = rng.uniform(-1, 1, 3).astype(np.float32)
x = rng.uniform(-1, 1, (5, 3)).astype(np.float32)
check("scan_runtime_length", path, [("s0", s0), ("x", x)],
      [("s", s0.astype(np.float64) + x.astype(np.float64).sum(axis=0))])

# A body node is named after its node and graph; a body's scan output whose
# shape changes between iterations cannot be stacked; opset 8's batch dims
# must agree; an If without a condition.
body = helper.make_graph(
    [helper.make_node("Identity", ["cond"], ["cond_out"]),
     helper.make_node("Frobnicate", ["y"], ["y_out"])],
    "body", [info("i", I64, []), info("cond", B, []), info("y", F, [2])],
    [info("cond_out", B, []), info("y_out", F, [2])])
refused("loop_body_unsupported", model(
    "loop_body_unsupported", [helper.make_node("Loop", ["trips", "", "y0"], ["y"], body=body, name="loop")],
    [info("y0", F, [2])], [info("y", F, [2])], initializers=[("trips", np.array(2, np.int64))]))
body = helper.make_graph(
    [helper.make_node("Concat", ["s", "x_t"], ["s_out"], axis=0),
     helper.make_node("Identity", ["s_out"], ["trace"])],
    "body", [info("s", F, ["n"]), info("x_t", F, [3])], [info("s_out", F, ["m"]), info("trace", F, ["m"])])
refused("scan_growing_output", model(
    "scan_growing_output", [helper.make_node("Scan", ["s0", "x"], ["s", "t"], body=body, num_scan_inputs=1, name="grow")],
    [info("s0", F, [3]), info("x", F, [4, 3])], [info("s", F, [15]), info("t", F, [4, "m"])]))
body = helper.make_graph(
    [helper.make_node("Add", ["s", "x_t"], ["s_out"])],
    "body", [info("s", F, [3]), info("x_t", F, [3])], [info("s_out", F, [3])])
refused("scan8_batch_mismatch", model(
    "scan8_batch_mismatch", [helper.make_node("Scan", ["", "s0", "x"], ["s"], body=body, num_scan_inputs=1, name="batched")],
    [info("s0", F, [2, 3]), info("x", F, [3, 4, 3])], [info("s", F, [2, 3])], opset=8))
branch = helper.make_graph([helper.make_node("Identity", ["y0"], ["out"])], "branch", [], [info("out", F, [2])])
refused("if_without_condition", model(
    "if_without_condition", [helper.make_node("If", [""], ["y"], then_branch=branch, else_branch=branch, name="choose")],
    [info("y0", F, [2])], [info("y", F, [2])]))

# More iterations than nnc unrolls; no iteration, so the scan output has no
# shape; a num_scan_inputs past the inputs.
body = helper.make_graph(
    [helper.make_node("Identity", ["cond"], ["cond_out"]),
     helper.make_node("Identity", ["y"], ["y_out"]),
     helper.make_node("Identity", ["y"], ["scan"])],
    "body", [info("i", I64, []), info("cond", B, []), info("y", F, [2])],
    [info("cond_out", B, []), info("y_out", F, [2]), info("scan", F, [2])])
for name, trips in (("loop_too_long", 5000), ("loop_no_iteration", 0)):
    refused(name, model(name, [helper.make_node("Loop", ["trips", "", "y0"], ["y", "ys"], body=body, name="loop")],
                        [info("y0", F, [2])], [info("y", F, [2]), info("ys", F, [trips, 2])],
                        initializers=[("trips", np.array(trips, np.int64))]))
body = helper.make_graph([helper.make_node("Add", ["s", "x_t"], ["s_out"])],
                         "body", [info("s", F, [3]), info("x_t", F, [3])], [info("s_out", F, [3])])
refused("scan_too_many_scan_inputs", model(
    "scan_too_many_scan_inputs",
    [helper.make_node("Scan", ["s0", "x"], ["s"], body=body, num_scan_inputs=3, name="sum")],
    [info("s0", F, [3]), info("x", F, [4, 3])], [info("s", F, [3])]))
