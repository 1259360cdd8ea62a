#!/usr/bin/python3
"""Count the FLOPs of an ONNX model's matrix work, from the graph.

    flops.py MODEL.onnx...      prints GFLOP per model

Only MatMul, Gemm, Conv and ConvTranspose count, each as 2 FLOPs per
multiply-accumulate: they are the work a peak FMA rate bounds, and they
dominate every bench model. Elementwise ops, normalizations, pooling and bias
adds are left out. Shapes come from ONNX shape inference, so every operand
must have a static shape (the bench models do). Needs python3-onnx.
"""

import math
import sys

import onnx


def _shapes(graph):
    """Static shape of every tensor GRAPH names (shapes inferred already)."""
    shapes = {t.name: list(t.dims) for t in graph.initializer}
    for value in [*graph.input, *graph.value_info, *graph.output]:
        dims = value.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            shapes[value.name] = [d.dim_value for d in dims]
    return shapes


def _attribute(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def _macs(node, shape):
    """Multiply-accumulates of one node; 0 for ops that are not counted."""
    op = node.op_type
    if op == "MatMul":
        # Batch dims broadcast: every output element is one dot product of
        # length K, K being A's last dim (A may be a vector).
        return math.prod(shape(node.output[0])) * shape(node.input[0])[-1]
    if op == "Gemm":
        a = shape(node.input[0])
        k = a[0] if _attribute(node, "transA", 0) else a[1]
        return math.prod(shape(node.output[0])) * k
    if op == "Conv":
        # W is [Cout, Cin/group, k...]: each output element reads all of W[co].
        return math.prod(shape(node.output[0])) * math.prod(shape(node.input[1])[1:])
    if op == "ConvTranspose":
        # W is [Cin, Cout/group, k...]: each input element scatters into all of W[ci].
        return math.prod(shape(node.input[0])) * math.prod(shape(node.input[1])[1:])
    return 0


def count_flops(path):
    """FLOPs of one inference of the model at PATH."""
    graph = onnx.shape_inference.infer_shapes(onnx.load(path)).graph
    shapes = _shapes(graph)

    def shape(name):
        if name not in shapes:
            raise ValueError(f"{path}: tensor '{name}' has no static shape after shape inference")
        return shapes[name]

    return sum(2 * _macs(node, shape) for node in graph.node)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        print(f"{count_flops(path) / 1e9:10.4f} GFLOP  {path}")


if __name__ == "__main__":
    main()
