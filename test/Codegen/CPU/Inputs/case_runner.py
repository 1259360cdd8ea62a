"""Shared harness of the schedule tests' case scripts: saves a small
model with its float64 reference, compiles it with nnc, runs it with nnc-run
on two threads and prints '<name> ok' or '<name> FAIL ...'."""
import os
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def run_case(nnc, nnc_run, work, name, nodes, inputs, output, initializers=()):
    """nodes: one node or a list; inputs: [(name, float32 array)] fed at run time; output: (name,
    expected array); initializers: [(name, array)] baked into the model.
    Returns True when the compiled model matches the reference."""
    out_name, expected = output
    graph = helper.make_graph(
        nodes if isinstance(nodes, list) else [nodes], name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape) for n, v in inputs],
        [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, expected.shape)],
        [numpy_helper.from_array(v, n) for n, v in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    base = os.path.join(work, name)
    onnx.save(model, base + ".onnx")
    data = base + "_data"
    os.makedirs(data, exist_ok=True)
    for i, (n, v) in enumerate(inputs):
        with open(f"{data}/input_{i}.pb", "wb") as f:
            f.write(numpy_helper.from_array(v, n).SerializeToString())
    with open(f"{data}/output_0.pb", "wb") as f:
        f.write(numpy_helper.from_array(expected.astype(np.float32), out_name).SerializeToString())
    build = subprocess.run([nnc, base + ".onnx", "-o", base + ".so"],
                           capture_output=True, text=True)
    if build.returncode != 0:
        print(f"{name} FAIL compile: {build.stderr.strip()}")
        return False
    run = subprocess.run([nnc_run, base + ".so", "--test-data", data, "--threads", "2",
                          "--atol", "1e-4", "--rtol", "1e-4"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        print(f"{name} FAIL run: {run.stdout.strip()} {run.stderr.strip()}")
        return False
    print(f"{name} ok")
    return True
