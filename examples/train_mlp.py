"""The training example: an MLP learns a synthetic classification task.

usage: train_mlp.py make DIR
       train_mlp.py check DIR CHECKPOINT OUTPUT.pb

`make` writes DIR/mlp.onnx, an untrained MLP (8 -> 32 -> ReLU -> 4, random
weights from a fixed seed), and two batches of 256 points from four Gaussian
clusters in 8 dimensions: DIR/train/ (input_0.pb the points, input_1.pb the
class labels, as `nnc-run --train` reads them) and DIR/test/ (unseen points).

`check` reads the trained weights from CHECKPOINT (the trainer's format,
docs/training.md) and the logits OUTPUT.pb that the exported model, compiled
for inference, computed on the test points. It prints the test accuracy and
checks that those predictions are the ones a float64 numpy forward pass with
the checkpoint's weights makes. Exit 1 if they differ or the accuracy is
below 90%.
"""

import os
import struct
import sys

import numpy as np
from onnx import TensorProto, helper, load_tensor, numpy_helper, save

FEATURES, HIDDEN, CLASSES, BATCH = 8, 32, 4, 256


def write(path, array, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def make(directory):
    rng = np.random.default_rng(7)
    centers = rng.normal(0, 2.0, (CLASSES, FEATURES)).astype(np.float32)
    for split in ("train", "test"):
        os.makedirs(os.path.join(directory, split), exist_ok=True)
        labels = rng.integers(0, CLASSES, BATCH).astype(np.int64)
        points = (centers[labels] + rng.normal(0, 1.0, (BATCH, FEATURES))).astype(np.float32)
        write(os.path.join(directory, split, "input_0.pb"), points, "input")
        write(os.path.join(directory, split, "input_1.pb"), labels, "labels")

    def weight(shape, fan_in):
        return (rng.uniform(-1, 1, shape) / np.sqrt(fan_in)).astype(np.float32)

    inits = [numpy_helper.from_array(weight((HIDDEN, FEATURES), FEATURES), "fc1.weight"),
             numpy_helper.from_array(weight((HIDDEN,), FEATURES), "fc1.bias"),
             numpy_helper.from_array(weight((CLASSES, HIDDEN), HIDDEN), "fc2.weight"),
             numpy_helper.from_array(weight((CLASSES,), HIDDEN), "fc2.bias")]
    nodes = [helper.make_node("Gemm", ["input", "fc1.weight", "fc1.bias"], ["h"], transB=1),
             helper.make_node("Relu", ["h"], ["a"]),
             helper.make_node("Gemm", ["a", "fc2.weight", "fc2.bias"], ["logits"], transB=1)]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [BATCH, FEATURES])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [BATCH, CLASSES])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    save(model, os.path.join(directory, "mlp.onnx"))
    print("wrote %s: an untrained MLP and 2 x %d points of %d classes" % (directory, BATCH, CLASSES))


def read_checkpoint(path):
    """name -> array, from the format in docs/training.md."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"NNCCKPT1", "not an nnc checkpoint"
    (count,) = struct.unpack_from("<I", data, 16)
    at, tensors = 20, {}
    dtypes = {1: np.float32, 11: np.float64}
    for _ in range(count):
        (length,) = struct.unpack_from("<I", data, at)
        name = data[at + 4:at + 4 + length].decode()
        at += 4 + length
        dtype, rank = struct.unpack_from("<iI", data, at)
        at += 8
        dims = struct.unpack_from("<%dq" % rank, data, at)
        at += 8 * rank
        (size,) = struct.unpack_from("<Q", data, at)
        at += 8
        tensors[name] = np.frombuffer(data[at:at + size], dtype=dtypes[dtype]).reshape(dims)
        at += size
    return tensors


def check(directory, checkpoint, outputs):
    w = read_checkpoint(checkpoint)
    points = numpy_helper.to_array(load_tensor(os.path.join(directory, "test", "input_0.pb")))
    labels = numpy_helper.to_array(load_tensor(os.path.join(directory, "test", "input_1.pb")))
    x = points.astype(np.float64)
    hidden = np.maximum(x @ w["param:fc1.weight"].T.astype(np.float64) + w["param:fc1.bias"], 0)
    reference = hidden @ w["param:fc2.weight"].T.astype(np.float64) + w["param:fc2.bias"]
    logits = numpy_helper.to_array(load_tensor(outputs))
    predicted, expected = logits.argmax(1), reference.argmax(1)
    accuracy = (predicted == labels).mean()
    same = int((predicted == expected).sum())
    print("test accuracy of the trained, exported model: %.1f%% (%d points)"
          % (100 * accuracy, len(labels)))
    print("its predictions match a numpy forward pass with the checkpoint's weights: %d of %d"
          % (same, len(labels)))
    sys.exit(0 if same == len(labels) and accuracy >= 0.9 else 1)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "make":
        make(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "check":
        check(*sys.argv[2:])
    else:
        sys.exit(__doc__)
