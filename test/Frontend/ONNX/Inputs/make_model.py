"""Writes small binary ONNX models for the importer's file-handling tests.

The test tree holds no binary models: each test builds what it needs here,
with ONNX's own Python helpers (Debian's python3-onnx).
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


OPSET = 13


def add_model(weight):
    """y = x + w for x, w of w's shape, at opset --opset."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(weight.shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(weight.shape))
    node = helper.make_node("Add", ["x", "w"], ["y"], name="add")
    graph = helper.make_graph([node], "g", [x], [y], [numpy_helper.from_array(weight, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("kind", choices=["inline", "inline-large", "external", "huge-external", "string-initializer",
                                    "unranked-input", "huge-initializer", "external-fields",
                                    "nested-subgraphs", "huge-attribute", "alpha-attribute",
                                    "empty-tensor-attribute", "legacy-broadcast-chain"])
    p.add_argument("out")
    # huge-initializer: keep the (empty) raw_data field or use the typed field.
    p.add_argument("--typed", action="store_true")
    # external-fields: the tensor's external_data entries (omitted when not given)
    # and the size of the data file written at --location.
    p.add_argument("--location")
    p.add_argument("--offset")
    p.add_argument("--length")
    p.add_argument("--file-bytes", type=int, default=4)
    # nested-subgraphs: how many If nodes nest inside each other's then-branch.
    p.add_argument("--depth", type=int, default=200)
    # alpha-attribute: LeakyRelu's alpha as 0.5 without its type field (as
    # models before IR version 2 store it), typed FLOAT with no value (as
    # writers built from onnx.proto3 store 0), typed FLOAT holding i = 2,
    # neither typed nor holding a value, or typed FLOAT 0.5 with no name.
    p.add_argument("--alpha", choices=["untyped", "empty", "int-payload", "untyped-empty", "nameless"])
    # inline, inline-large, external, huge-external: the model's opset.
    p.add_argument("--opset", type=int, default=13)
    args = p.parse_args()
    global OPSET
    OPSET = args.opset
    out_dir = os.path.dirname(os.path.abspath(args.out))

    if args.kind == "inline":
        # 2 KiB of weights: above nnc's threshold for dense resources.
        onnx.save(add_model(np.arange(512, dtype=np.float32)), args.out)
    elif args.kind == "inline-large":
        # 128 KiB of weights.
        onnx.save(add_model(np.arange(32768, dtype=np.float32)), args.out)
    elif args.kind == "external":
        model = add_model(np.arange(512, dtype=np.float32))
        onnx.save(model, args.out, save_as_external_data=True, all_tensors_to_one_file=True,
                  location="weights.bin", size_threshold=0)
    elif args.kind == "huge-external":
        # A 2.4 GB weight in a sparse external file: past protobuf's 2 GiB limit and
        # past 32-bit offsets, while using no disk or memory. The tensor starts 16
        # bytes in, so offsets are exercised too.
        n = 600_000_000
        w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[n])
        w.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "huge.bin"), ("offset", "16"), ("length", str(4 * n))):
            entry = w.external_data.add()
            entry.key, entry.value = k, v
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])
        node = helper.make_node("Add", ["x", "w"], ["y"], name="add")
        graph = helper.make_graph([node], "g", [x], [y], [w])
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), args.out)
        with open(os.path.join(out_dir, "huge.bin"), "wb") as f:
            f.truncate(16 + 4 * n)
    elif args.kind == "string-initializer":
        w = helper.make_tensor("names", TensorProto.STRING, [1], vals=[b"a"])
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
        node = helper.make_node("Identity", ["x"], ["y"], name="id")
        graph = helper.make_graph([node], "g", [x], [y], [w])
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), args.out)
    elif args.kind == "unranked-input":
        # The text format always declares a rank; only a binary model can omit it.
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, None)
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
        graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), args.out)
    elif args.kind == "huge-initializer":
        # Dims whose element count (2^64) wraps to 0 in int64 arithmetic, with no
        # data: as many bytes or values as the wrapped count asks for.
        w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2**32, 2**32])
        if not args.typed:
            w.raw_data = b""
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2**32, 2**32])
        node = helper.make_node("Add", ["x", "w"], ["y"], name="add")
        graph = helper.make_graph([node], "g", [x], [y], [w])
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), args.out)
    elif args.kind == "external-fields":
        # One f32 weight in external data, its fields as given; the data file
        # holds --file-bytes bytes at --location (relative to the model).
        w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1])
        w.data_location = TensorProto.EXTERNAL
        for k in ("location", "offset", "length"):
            v = getattr(args, k)
            if v is not None:
                entry = w.external_data.add()
                entry.key, entry.value = k, v
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
        node = helper.make_node("Add", ["x", "w"], ["y"], name="add")
        graph = helper.make_graph([node], "g", [x], [y], [w])
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), args.out)
        if args.location:
            path = os.path.join(out_dir, args.location)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(b"\0" * args.file_bytes)
    elif args.kind == "nested-subgraphs":
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
        leaf = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "leaf", [], [y])
        graph = leaf
        for depth in range(args.depth):
            node = helper.make_node("If", ["c"], ["y"], then_branch=graph, else_branch=leaf)
            graph = helper.make_graph([node], f"g{depth}", [], [y])
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
        c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
        graph = helper.make_graph(graph.node, "top", [x, c], [y])
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), args.out)
    elif args.kind == "huge-attribute":
        # A Transpose whose perm lists a million dims.
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
        node = helper.make_node("Transpose", ["x"], ["y"], perm=list(range(1000000)))
        graph = helper.make_graph([node], "g", [x], [y])
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), args.out)
    elif args.kind == "alpha-attribute":
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
        node = helper.make_node("LeakyRelu", ["x"], ["y"], name="leaky")
        alpha = node.attribute.add()
        if args.alpha != "nameless":
            alpha.name = "alpha"
        if args.alpha in ("untyped", "nameless"):
            alpha.f = 0.5
        if args.alpha in ("empty", "int-payload", "nameless"):
            alpha.type = onnx.AttributeProto.FLOAT
        if args.alpha == "int-payload":
            alpha.i = 2
        graph = helper.make_graph([node], "g", [x], [y])
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)]), args.out)
    elif args.kind == "legacy-broadcast-chain":
        # Opset 6: t = a + b and y = t * b, b's dims at axis 1 of a's, the
        # outputs t and y declared with a type but no shape (shape inference
        # gives them one only after the first broadcast is rewritten).
        a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 3, 4])
        b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [3])
        nodes = [helper.make_node("Add", ["a", "b"], ["t"], broadcast=1, axis=1),
                 helper.make_node("Mul", ["t", "b"], ["y"], broadcast=1, axis=1)]
        outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("t", "y")]
        graph = helper.make_graph(nodes, "g", [a, b], outputs)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 6)])
        model.ir_version = 3
        onnx.save(model, args.out)
    elif args.kind == "empty-tensor-attribute":
        # A Constant whose `value` is typed TENSOR but holds none.
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
        node = helper.make_node("Constant", [], ["y"], name="const")
        value = node.attribute.add()
        value.name = "value"
        value.type = onnx.AttributeProto.TENSOR
        graph = helper.make_graph([node], "g", [], [y])
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), args.out)


if __name__ == "__main__":
    main()
