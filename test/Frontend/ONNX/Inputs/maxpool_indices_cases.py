"""MaxPool's Indices output (NNOps.cpp builds it from the window taps) against
PyTorch's max_pool (return_indices), whose per-plane positions ONNX offsets by
each image's and channel's plane; and a MaxPool -> MaxUnpool round trip, as
SegNet-like decoders use it.

Usage: maxpool_indices_cases.py NNC NNC_RUN WORKDIR
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper

from case_data import write_test_data

nnc, nnc_run, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
torch.manual_seed(4)


def run(name, nodes, x, outputs):
    """outputs: [(name, array)] in order."""
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info(n, TensorProto.INT64 if v.dtype == np.int64 else TensorProto.FLOAT,
                                       list(v.shape)) for n, v in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    build = subprocess.run([nnc, path, "-o", path[:-5] + ".so"], capture_output=True, text=True)
    if build.returncode != 0:
        print(f"{name} FAIL compile: {build.stderr.strip()}")
        return
    data = write_test_data(os.path.join(work, name + "_data"), [("x", x)], outputs)
    result = subprocess.run([nnc_run, path[:-5] + ".so", "--test-data", data], capture_output=True, text=True)
    print(f"{name} ok" if result.returncode == 0 else f"{name} FAIL run: {result.stdout} {result.stderr}")


# name: (input shape, kernel, strides, pads, dilations, ceil_mode)
CASES = {
    "pool_3x3_s2_pad1": ((2, 3, 9, 9), (3, 3), (2, 2), (1, 1), (1, 1), False),
    "pool_2x2_ceil": ((1, 2, 7, 5), (2, 2), (2, 2), (0, 0), (1, 1), True),
    "pool_dilated": ((1, 2, 10, 10), (3, 2), (1, 2), (1, 1), (2, 2), False),
}
for name, (shape, kernel, strides, pads, dilations, ceil) in CASES.items():
    x = torch.randn(*shape)
    y, where = torch.nn.functional.max_pool2d(x.double(), kernel, strides, pads, dilations, ceil_mode=ceil,
                                              return_indices=True)
    n, c = shape[:2]
    offsets = (torch.arange(n * c).reshape(n, c, 1, 1) * shape[2] * shape[3])
    for order in (0, 1):
        flat = where + offsets
        if order:  # each plane column-major: w * H + h
            h, w = where // shape[3], where % shape[3]
            flat = w * shape[2] + h + offsets
        node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=list(kernel), strides=list(strides),
                                pads=list(pads) * 2, dilations=list(dilations), ceil_mode=int(ceil),
                                storage_order=order)
        run(f"{name}_order{order}", [node], x.numpy(),
            [("y", y.float().numpy()), ("i", flat.numpy().astype(np.int64))])

# Pool, then unpool into a zero image of the input's shape: each window's
# maximum back at its position.
x = torch.randn(1, 4, 8, 8)
y, where = torch.nn.functional.max_pool2d(x.double(), 2, 2, return_indices=True)
restored = torch.nn.functional.max_unpool2d(y, where, 2, 2, output_size=(8, 8))
run("pool_unpool", [helper.make_node("MaxPool", ["x"], ["p", "i"], kernel_shape=[2, 2], strides=[2, 2]),
                    helper.make_node("MaxUnpool", ["p", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
    x.numpy(), [("y", restored.float().numpy())])
