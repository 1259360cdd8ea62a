"""Writes a 1x96x28x28 depthwise Conv (a KxK filter, pads K//2, bias).

usage: depthwise_model.py OUT.onnx K
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out, k = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(3)
w = numpy_helper.from_array(rng.uniform(-1, 1, (96, 1, k, k)).astype(np.float32), "w")
b = numpy_helper.from_array(rng.uniform(-1, 1, (96,)).astype(np.float32), "b")
node = helper.make_node("Conv", ["x", "w", "b"], ["y"], group=96, pads=[k // 2] * 4)
graph = helper.make_graph(
    [node], "depthwise",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 96, 28, 28])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 96, 28, 28])], [w, b])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), out)
