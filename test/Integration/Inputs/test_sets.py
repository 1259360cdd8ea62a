"""Writing ONNX test models and data sets, as ONNX's backend tests lay them
out: DIR/model.onnx, and DIR/<set>/input_<i>.pb and output_<i>.pb, one
TensorProto each."""

import os

import onnx
from onnx import helper, numpy_helper


def value(name, elem, shape):
    """A graph input's or output's type: `shape` of ints and symbols."""
    return helper.make_tensor_value_info(name, elem, shape)


def write_model(out, name, nodes, inputs, outputs, initializers=(), opset=13):
    """OUT/NAME/model.onnx of `nodes`, checked (ONNX 1.12's checker knows
    opsets up to 17)."""
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    if opset <= 17:
        onnx.checker.check_model(model)
    os.makedirs(os.path.join(out, name), exist_ok=True)
    onnx.save(model, os.path.join(out, name, "model.onnx"))


def write_set(directory, inputs, outputs=()):
    """numpy arrays as a test data set; no outputs for a set that must be refused."""
    os.makedirs(directory, exist_ok=True)
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for i, t in enumerate(tensors):
            with open(os.path.join(directory, f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(t).SerializeToString())
