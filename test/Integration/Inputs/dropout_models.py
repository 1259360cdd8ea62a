"""Writes an MLP with Dropout and PyTorch references that use nnc's masks.

usage: dropout_models.py OUT_DIR

nnc --train draws Dropout's masks from a counter-based hash (nn.random_uniform,
defined in dialects/NN/IR/NNOps.td; the k-th Dropout's seed mixes --seed and k;
the counter is state:step, 0 in loss_and_gradients). This script computes the same masks
with its own NumPy implementation of that hash and trains the same model in
PyTorch with them, so the references check both the random numbers and the
gradients through the masks. OUT_DIR gets:
  model.onnx            Gemm, Relu, Dropout(0.25), Gemm, Dropout(0.5), Gemm
  data/input_0.pb       the batch, data/input_1.pb its class labels
  data/loss.pb, data/grad_<name>.pb   cross-entropy and its gradients (counter 0)
  curve_sgd.txt         20 SGD steps (lr 0.05, momentum 0.9), counter = step - 1
  mask_fraction.txt     the fraction of elements the masks of those steps drop
"""

import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

M = 0xFFFFFFFF
RATIOS = (0.25, 0.5)
SEED = 7


def mix(x):
    x = np.asarray(x, dtype=np.uint64)
    x ^= x >> np.uint64(16)
    x = (x * np.uint64(0x7FEB352D)) & np.uint64(M)
    x ^= x >> np.uint64(15)
    x = (x * np.uint64(0x846CA68B)) & np.uint64(M)
    x ^= x >> np.uint64(16)
    return x


def uniform(seed, counter, shape):
    key = mix(np.uint64(seed) ^ mix((counter * 0x9E3779B9) & M))
    i = np.arange(int(np.prod(shape)), dtype=np.uint64)
    bits = mix((i * np.uint64(0x85EBCA6B) + key) & np.uint64(M))
    return ((bits >> np.uint64(8)).astype(np.float64) / 2.0 ** 24).reshape(shape)


def mask(k, counter, shape):
    seed = int(mix((SEED + k * 0x9E3779B9) & M))
    keep = uniform(seed, counter, shape) >= np.float32(RATIOS[k])
    return torch.from_numpy(np.where(keep, 1.0 / (1.0 - RATIOS[k]), 0.0).astype(np.float32))


def main():
    out = sys.argv[1]
    data = os.path.join(out, "data")
    os.makedirs(data, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    sizes = [(12, 24), (24, 24), (24, 5)]
    weights = {}
    for i, (n_in, n_out) in enumerate(sizes):
        weights["w%d" % i] = (torch.randn(n_out, n_in, generator=g) / n_in ** 0.5)
        weights["b%d" % i] = torch.randn(n_out, generator=g) * 0.1
    x = torch.randn(16, 12, generator=g)
    labels = torch.randint(0, 5, (16,), generator=g)

    nodes = [
        helper.make_node("Gemm", ["input", "w0", "b0"], ["h0"], transB=1),
        helper.make_node("Relu", ["h0"], ["r0"]),
        helper.make_node("Dropout", ["r0", "ratio0"], ["d0"]),
        helper.make_node("Gemm", ["d0", "w1", "b1"], ["h1"], transB=1),
        helper.make_node("Relu", ["h1"], ["r1"]),
        helper.make_node("Dropout", ["r1", "ratio1"], ["d1"]),
        helper.make_node("Gemm", ["d1", "w2", "b2"], ["output"], transB=1),
    ]
    inits = [numpy_helper.from_array(v.numpy(), k) for k, v in weights.items()]
    inits += [numpy_helper.from_array(np.array(r, dtype=np.float32), "ratio%d" % i)
              for i, r in enumerate(RATIOS)]
    graph = helper.make_graph(
        nodes, "dropout_mlp", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [16, 12])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [16, 5])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "model.onnx"))

    def write(path, array, name):
        with open(path, "wb") as f:
            f.write(numpy_helper.from_array(np.array(array), name).SerializeToString())

    write(os.path.join(data, "input_0.pb"), x.numpy(), "input")
    write(os.path.join(data, "input_1.pb"), labels.numpy(), "labels")

    params = {k: v.clone().requires_grad_(True) for k, v in weights.items()}

    def loss_at(counter):
        h = torch.relu(x @ params["w0"].t() + params["b0"]) * mask(0, counter, (16, 24))
        h = torch.relu(h @ params["w1"].t() + params["b1"]) * mask(1, counter, (16, 24))
        return torch.nn.functional.cross_entropy(h @ params["w2"].t() + params["b2"], labels)

    loss = loss_at(0)
    loss.backward()
    write(os.path.join(data, "loss.pb"), loss.detach().numpy(), "loss")
    for k, p in params.items():
        write(os.path.join(data, "grad_%s.pb" % k), p.grad.numpy(), "grad_" + k)

    for p in params.values():
        p.grad = None
    optimizer = torch.optim.SGD(params.values(), lr=0.05, momentum=0.9)
    lines, dropped, total = [], 0, 0
    for step in range(1, 21):
        optimizer.zero_grad()
        loss = loss_at(step - 1)
        loss.backward()
        optimizer.step()
        lines.append("step %d loss %.9g" % (step, loss.item()))
        for k in range(2):
            m = mask(k, step - 1, (16, 24))
            dropped += int((m == 0).sum())
            total += m.numel()
    with open(os.path.join(out, "curve_sgd.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "mask_fraction.txt"), "w") as f:
        f.write("dropped %.4f of %d (expected %.4f)\n"
                % (dropped / total, total, sum(RATIOS) / len(RATIOS)))


if __name__ == "__main__":
    main()
