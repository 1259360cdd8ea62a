"""Models with dynamic dims for dynamic-dims.test: PyTorch modules exported
with symbolic dims, and test data sets at several sizes whose references
PyTorch computes in float64.

    dynamic_models.py --out DIR

writes DIR/<model>/model.onnx and DIR/<model>/<set>/{input_*,output_*}.pb.
"""

import argparse
import math
import os

import numpy as np
import torch
import onnx
from onnx import TensorProto, helper, numpy_helper


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10), torch.nn.Softmax(-1))

    def forward(self, x):
        return self.net(x)


class TwoBatches(torch.nn.Module):
    """Per-sample chains on two inputs whose batches are independent symbols,
    and on one reshaped to twice its batch: no chain's loop may assume
    another's batch."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(4, 4, 3, padding=1)
        self.b = torch.nn.Conv2d(4, 4, 3, padding=1)
        self.c = torch.nn.Conv2d(2, 2, 1)

    def forward(self, x, z):
        return torch.relu(self.a(x)), torch.relu(self.b(z)), self.c(x.reshape(-1, 2, 6, 6))


class ConvAdd(torch.nn.Module):
    """A per-sample chain meeting a second input of its own batch symbol."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x, z):
        return torch.relu(self.conv(x)) + z


class Add(torch.nn.Module):
    """Two inputs whose leading dims are independent symbols."""

    def forward(self, x, z):
        return torch.tanh(x) + z


class CNN(torch.nn.Module):
    """The ops of a ResNet, each per sample: convolutions (strided, grouped),
    batch norm, pooling, a residual add, global pooling and a classifier."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, stride=2, padding=1), torch.nn.BatchNorm2d(16),
            torch.nn.ReLU(), torch.nn.MaxPool2d(3, stride=2, padding=1))
        self.block = torch.nn.Sequential(
            torch.nn.Conv2d(16, 16, 3, padding=1, groups=4), torch.nn.BatchNorm2d(16),
            torch.nn.ReLU(), torch.nn.Conv2d(16, 16, 1))
        self.head = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(x + self.block(x))
        x = torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return torch.log_softmax(self.head(x), -1)


class ViewFlatten(torch.nn.Module):
    """A CNN head flattened with x.view(x.size(0), -1): the exporter's
    Shape -> Gather -> Concat -> Reshape."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3)
        self.head = torch.nn.Linear(8 * 6 * 6, 10)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return self.head(y.view(y.size(0), -1))


class Attention(torch.nn.Module):
    """A GPT block's causal self-attention and MLP (pre-LN): the heads split
    and merged by view/transpose with sizes the exporter takes with Shape, and
    batched products of two activations."""

    def __init__(self, d=32, heads=4, t=16):
        super().__init__()
        self.heads = heads
        self.ln = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(),
                                       torch.nn.Linear(4 * d, d))
        self.register_buffer("mask", torch.tril(torch.ones(t, t)).view(1, 1, t, t))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.qkv(self.ln(x)).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / (c // self.heads) ** 0.5
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        y = (torch.softmax(att, dim=-1) @ v).transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.proj(y)
        return x + self.mlp(x)


class CachedDecoder(torch.nn.Module):
    """A GPT decoder step with a key-value cache, as language models are
    served: token ids [batch, new] and each layer's past keys and values
    [batch, heads, past, head dim] in; logits and the grown cache out. The
    embedding gathers over a symbolic batch and count, the positions start at
    the past's length, the cache grows by a Concat along a dynamic dim, and
    the causal mask compares positions offset by the past."""

    def __init__(self, d=32, heads=2, vocab=50):
        super().__init__()
        self.heads, self.d = heads, d
        self.embed = torch.nn.Embedding(vocab, d)
        self.position = torch.nn.Embedding(128, d)
        self.ln = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.head = torch.nn.Linear(d, vocab)

    def forward(self, ids, past_k, past_v):
        b, t = ids.shape
        p = past_k.shape[2]
        x = self.embed(ids) + self.position(torch.arange(p, p + t))
        q, k, v = self.qkv(self.ln(x)).split(self.d, dim=2)
        split = lambda z: z.view(b, t, self.heads, self.d // self.heads).transpose(1, 2)
        q = split(q)
        k = torch.cat([past_k, split(k)], dim=2)
        v = torch.cat([past_v, split(v)], dim=2)
        att = (q @ k.transpose(-2, -1)) / (self.d // self.heads) ** 0.5
        later = torch.arange(p + t).unsqueeze(0) > (torch.arange(t).unsqueeze(1) + p)
        att = att.masked_fill(later, float("-inf"))
        y = (torch.softmax(att, dim=-1) @ v).transpose(1, 2).reshape(b, t, self.d)
        return self.head(x + self.proj(y)), k, v


def write_set(directory, inputs, outputs):
    os.makedirs(directory, exist_ok=True)
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for i, t in enumerate(tensors):
            proto = numpy_helper.from_array(t.detach().numpy().astype(np.float32))
            with open(os.path.join(directory, f"{kind}_{i}.pb"), "wb") as f:
                f.write(proto.SerializeToString())


def export(module, example, names, dynamic, path, outputs=("y",)):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.onnx.export(module, example, path, input_names=names, output_names=list(outputs),
                      dynamic_axes=dynamic, opset_version=17)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.manual_seed(0)

    mlp = MLP().eval()
    export(mlp, (torch.randn(2, 16),), ["x"], {"x": {0: "batch"}, "y": {0: "batch"}},
           os.path.join(args.out, "mlp", "model.onnx"))
    reference = MLP().double().eval()
    reference.load_state_dict({k: v.double() for k, v in mlp.state_dict().items()})
    for batch in (0, 1, 3, 21, 32, 45, 70, 127):
        x = torch.randn(batch, 16)
        with torch.no_grad():
            y = reference(x.double())
        write_set(os.path.join(args.out, "mlp", f"batch{batch}"), [x], [y])

    add = Add()
    export(add, (torch.randn(2, 4), torch.randn(2, 4)), ["x", "z"],
           {"x": {0: "n"}, "z": {0: "m"}, "y": {0: "n"}},
           os.path.join(args.out, "add", "model.onnx"))
    for n, m in ((5, 5), (5, 2), (5, 1)):
        x, z = torch.randn(n, 4), torch.randn(m, 4)
        y = torch.tanh(x.double()) + z.double() if n == m else torch.zeros(n, 4)
        write_set(os.path.join(args.out, "add", f"n{n}_m{m}"), [x, z], [y])

    two = TwoBatches().eval()
    export(two, (torch.randn(2, 4, 6, 6), torch.randn(2, 4, 6, 6)), ["x", "z"],
           {"x": {0: "n"}, "z": {0: "m"}, "y0": {0: "n"}, "y1": {0: "m"}, "y2": {0: "n2"}},
           os.path.join(args.out, "two_batches", "model.onnx"), outputs=["y0", "y1", "y2"])
    reference = TwoBatches().double()
    reference.load_state_dict({k: v.double() for k, v in two.state_dict().items()})
    x, z = torch.randn(2, 4, 6, 6), torch.randn(5, 4, 6, 6)
    with torch.no_grad():
        ys = reference(x.double(), z.double())
    write_set(os.path.join(args.out, "two_batches", "n2_m5"), [x, z], list(ys))

    conv_add = ConvAdd().eval()
    export(conv_add, (torch.randn(2, 4, 6, 6), torch.randn(2, 4, 6, 6)), ["x", "z"],
           {"x": {0: "n"}, "z": {0: "m"}, "y": {0: "n"}},
           os.path.join(args.out, "conv_add", "model.onnx"))
    reference = ConvAdd().double()
    reference.load_state_dict({k: v.double() for k, v in conv_add.state_dict().items()})
    for n, m in ((3, 3), (3, 2)):
        x, z = torch.randn(n, 4, 6, 6), torch.randn(m, 4, 6, 6)
        with torch.no_grad():
            y = reference(x.double(), z.double()) if n == m else torch.zeros(n, 4, 6, 6)
        write_set(os.path.join(args.out, "conv_add", f"n{n}_m{m}"), [x, z], [y])

    cnn = CNN()
    for p in cnn.parameters():  # batch norm's statistics and affine away from 0 and 1
        torch.nn.init.uniform_(p, -0.5, 0.5)
    for m in cnn.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    cnn.eval()
    export(cnn, (torch.randn(2, 3, 32, 32),), ["x"], {"x": {0: "batch"}, "y": {0: "batch"}},
           os.path.join(args.out, "cnn", "model.onnx"))
    reference = cnn.double()
    for batch in (1, 3, 8):
        x = torch.randn(batch, 3, 32, 32)
        with torch.no_grad():
            y = reference(x.double())
        write_set(os.path.join(args.out, "cnn", f"batch{batch}"), [x], [y])

    for name, module, shape in (("view", ViewFlatten(), (3, 8, 8)), ("attention", Attention(), (16, 32))):
        module.eval()
        export(module, (torch.randn(2, *shape),), ["x"], {"x": {0: "batch"}, "y": {0: "batch"}},
               os.path.join(args.out, name, "model.onnx"))
        reference = module.double()
        for batch in (1, 3, 8):
            x = torch.randn(batch, *shape)
            with torch.no_grad():
                y = reference(x.double())
            write_set(os.path.join(args.out, name, f"batch{batch}"), [x], [y])

    # A dynamic dim against a static one: it must be that size at run time.
    class AddConstant(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c = torch.nn.Parameter(torch.randn(5, 4))

        def forward(self, x):
            return x + self.c

    add_constant = AddConstant()
    export(add_constant, (torch.randn(5, 4),), ["x"], {"x": {0: "n"}},
           os.path.join(args.out, "add_constant", "model.onnx"))
    for n in (5, 2, 1):
        x = torch.randn(n, 4)
        with torch.no_grad():
            y = x.double() + add_constant.c.double() if n == 5 else torch.zeros(5, 4)
        write_set(os.path.join(args.out, "add_constant", f"n{n}"), [x], [y])

    # A linear layer on [batch, tokens, features]: the rows of its product are
    # batch x tokens.
    linear = torch.nn.Linear(6, 7)
    export(linear, (torch.randn(2, 4, 6),), ["x"], {"x": {0: "batch"}, "y": {0: "batch"}},
           os.path.join(args.out, "linear3d", "model.onnx"))
    for batch in (1, 3, 17):
        x = torch.randn(batch, 4, 6)
        with torch.no_grad():
            y = torch.nn.functional.linear(x.double(), linear.weight.double(), linear.bias.double())
        write_set(os.path.join(args.out, "linear3d", f"batch{batch}"), [x], [y])

    # Flatten past the batch axis: its leading dim is more than the batch
    # (not per sample), refused.
    flatten = helper.make_model(
        helper.make_graph(
            [helper.make_node("Flatten", ["x"], ["y"], axis=2, name="flatten")], "flatten2",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 2, 2])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]),
        opset_imports=[helper.make_opsetid("", 17)])
    os.makedirs(os.path.join(args.out, "flatten2"), exist_ok=True)
    onnx.save(flatten, os.path.join(args.out, "flatten2", "model.onnx"))

    # A LayerNorm whose scale has a symbolic length: dynamic in dim 0, but not
    # a batch (the samples share it): refused, not sliced per sample.
    layer_norm = helper.make_model(
        helper.make_graph(
            [helper.make_node("LayerNormalization", ["x", "scale"], ["y"], axis=-1, name="norm")],
            "ln_scale",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4]),
             helper.make_tensor_value_info("scale", TensorProto.FLOAT, ["D"])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])]),
        opset_imports=[helper.make_opsetid("", 17)])
    os.makedirs(os.path.join(args.out, "ln_scale"), exist_ok=True)
    onnx.save(layer_norm, os.path.join(args.out, "ln_scale", "model.onnx"))
    x = torch.randn(3, 4)
    for d in (4, 5):
        scale = torch.randn(d)
        y = torch.nn.functional.layer_norm(x.double(), (4,), scale.double()) if d == 4 else x
        write_set(os.path.join(args.out, "ln_scale", f"d{d}"), [x, scale], [y])

    # Batched products of two graph inputs with independent symbolic dims:
    # three batch dims (checked equal at run time), and a static 1 against a
    # dynamic batch dim (a broadcast, refused when compiling).
    for name, x_dims, w_dims in (("bmm5", ["a", 3, 2, "m", 5], ["b", 3, 2, 5, "n"]),
                                 ("bmm_broadcast", ["a", 3, "m", 5], [1, 3, 5, 6])):
        model = helper.make_model(
            helper.make_graph(
                [helper.make_node("MatMul", ["x", "w"], ["y"], name="product")], name,
                [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims),
                 helper.make_tensor_value_info("w", TensorProto.FLOAT, w_dims)],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]),
            opset_imports=[helper.make_opsetid("", 17)])
        os.makedirs(os.path.join(args.out, name), exist_ok=True)
        onnx.save(model, os.path.join(args.out, name, "model.onnx"))
    for a, b in ((2, 2), (2, 3)):
        x, w = torch.randn(a, 3, 2, 4, 5), torch.randn(b, 3, 2, 5, 6)
        y = x.double() @ w.double() if a == b else torch.zeros(2, 3, 2, 4, 6)
        write_set(os.path.join(args.out, "bmm5", f"a{a}_b{b}"), [x, w], [y])

    # A shape computed from a dim and an input's value (the batch divided by
    # `d`): a division by a d of 0 is a refused run, not a trap in prepare.
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(np.array([0], np.int64))),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
        helper.make_node("Div", ["batch", "d"], ["rows"]),
        helper.make_node("Constant", [], ["rest"], value=numpy_helper.from_array(np.array([-1], np.int64))),
        helper.make_node("Concat", ["rows", "rest"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape"),
    ]
    divide = helper.make_model(
        helper.make_graph(nodes, "divide",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6]),
                           helper.make_tensor_value_info("d", TensorProto.INT64, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]),
        opset_imports=[helper.make_opsetid("", 17)])
    os.makedirs(os.path.join(args.out, "divide"), exist_ok=True)
    onnx.save(divide, os.path.join(args.out, "divide", "model.onnx"))
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    for d in (2, 0):
        directory = os.path.join(args.out, "divide", f"d{d}")
        os.makedirs(directory, exist_ok=True)
        y = x.reshape(2, 12) if d else np.zeros((1, 1), np.float32)
        for name, array in (("input_0", x), ("input_1", np.array([d], np.int64)), ("output_0", y)):
            with open(os.path.join(directory, name + ".pb"), "wb") as f:
                f.write(numpy_helper.from_array(array).SerializeToString())

    # A dynamic sequence length as well as batch: a GPT block's attention
    # (its mask sliced to the length) and PyTorch's encoder layer, batch first
    # (heads split by a Reshape to batch x heads, computed with Mul).
    encoder = torch.nn.TransformerEncoderLayer(32, 4, 64, activation="gelu", batch_first=True)
    for name, module in (("seq_attention", Attention(t=300)), ("seq_encoder", encoder)):
        module.eval()
        export(module, (torch.randn(2, 16, 32),), ["x"],
               {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}},
               os.path.join(args.out, name, "model.onnx"))
        reference = module.double()
        for batch, seq in ((1, 7), (3, 64), (2, 300)):
            x = torch.randn(batch, seq, 32)
            with torch.no_grad():
                y = reference(x.double())
            write_set(os.path.join(args.out, name, f"b{batch}_t{seq}"), [x], [y])

    # Reductions over dynamic dims: over a symbolic sequence (mean pooling,
    # max, log-sum-exp, L2 norm, sum of squares) and over symbolic H and W
    # and the batch itself.
    class SequenceReductions(torch.nn.Module):
        def forward(self, x):
            return (x.mean(1) + x.amax(1) + torch.logsumexp(x, 1) + x.norm(dim=1) +
                    (x * x).sum(1))

    class SpatialReductions(torch.nn.Module):
        def forward(self, x):
            return (x.mean((2, 3), keepdim=True) + x.amin((2, 3), keepdim=True) -
                    x.sum(0, keepdim=True).mean((2, 3), keepdim=True))

    for name, module, example, dynamic, cases in (
            ("seq_reduce", SequenceReductions(), torch.randn(2, 16, 8),
             {"x": {0: "batch", 1: "seq"}, "y": {0: "batch"}},
             [(1, 1, 8), (3, 7, 8), (2, 64, 8), (1, 300, 8)]),
            ("spatial_reduce", SpatialReductions(), torch.randn(2, 4, 6, 6),
             {"x": {0: "batch", 2: "h", 3: "w"}, "y": {0: "batch"}},
             [(1, 4, 5, 7), (3, 4, 16, 16), (2, 4, 1, 33)])):
        export(module, (example,), ["x"], dynamic, os.path.join(args.out, name, "model.onnx"))
        for shape in cases:
            x = torch.randn(*shape)
            with torch.no_grad():
                y = module(x.double())
            write_set(os.path.join(args.out, name, "_".join(map(str, shape))), [x], [y])

    # Rows of a dynamic length (docs/dynamic-shapes.md): reductions along them
    # keep vector accumulators and end in a masked step, elementwise ops end
    # in one; lengths around the vector widths (8 and 16 lanes, four-vector
    # steps of 32 and 64), against float64 NumPy. Elementwise ops on i64 and
    # f16 rows take masked steps too.
    row_nodes = [
        helper.make_node("Softmax", ["x"], ["softmax"], axis=-1),
        helper.make_node("LogSoftmax", ["x"], ["log_softmax"], axis=-1),
        helper.make_node("ReduceMax", ["x"], ["max"], axes=[-1], keepdims=1),
        helper.make_node("ReduceMin", ["x"], ["min"], axes=[-1], keepdims=0),
        helper.make_node("ReduceSum", ["x", "axes"], ["sum"], keepdims=1),
        helper.make_node("ReduceMean", ["x"], ["mean"], axes=[-1], keepdims=0),
        helper.make_node("ReduceL2", ["x"], ["l2"], axes=[-1], keepdims=0),
        helper.make_node("Erf", ["x"], ["erf"]),
        helper.make_node("Add", ["x", "bias"], ["biased"]),
        helper.make_node("Cast", ["x"], ["as_i64"], to=TensorProto.INT64),
        helper.make_node("Mul", ["as_i64", "as_i64"], ["squares_i64"]),
        helper.make_node("Cast", ["x"], ["as_f16"], to=TensorProto.FLOAT16),
        helper.make_node("Neg", ["as_f16"], ["neg_f16"]),
    ]
    row_outputs = [("softmax", TensorProto.FLOAT, ["n", "t"]),
                   ("log_softmax", TensorProto.FLOAT, ["n", "t"]),
                   ("max", TensorProto.FLOAT, ["n", 1]), ("min", TensorProto.FLOAT, ["n"]),
                   ("sum", TensorProto.FLOAT, ["n", 1]), ("mean", TensorProto.FLOAT, ["n"]),
                   ("l2", TensorProto.FLOAT, ["n"]), ("erf", TensorProto.FLOAT, ["n", "t"]),
                   ("biased", TensorProto.FLOAT, ["n", "t"]),
                   ("squares_i64", TensorProto.INT64, ["n", "t"]),
                   ("neg_f16", TensorProto.FLOAT16, ["n", "t"])]
    rows = helper.make_model(
        helper.make_graph(row_nodes, "rows",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", "t"])],
                          [helper.make_tensor_value_info(*o) for o in row_outputs],
                          [numpy_helper.from_array(np.array([-1], np.int64), "axes"),
                           numpy_helper.from_array(np.array([[0.5]], np.float32), "bias")]),
        opset_imports=[helper.make_opsetid("", 17)])
    os.makedirs(os.path.join(args.out, "rows"), exist_ok=True)
    onnx.save(rows, os.path.join(args.out, "rows", "model.onnx"))
    rng = np.random.default_rng(5)
    for n, t in ((3, 1), (2, 7), (3, 8), (2, 31), (2, 32), (3, 33), (1, 63), (2, 64), (2, 65),
                 (3, 300), (2, 0)):
        x = (rng.standard_normal((n, t)) * 4).astype(np.float32)
        d = x.astype(np.float64)
        e = np.exp(d - d.max(-1, keepdims=True)) if t else d
        lse = np.log(e.sum(-1, keepdims=True)) + d.max(-1, keepdims=True) if t else d
        ys = [e / e.sum(-1, keepdims=True) if t else d, d - lse if t else d,
              d.max(-1, keepdims=True) if t else np.full((n, 1), -np.inf),
              d.min(-1) if t else np.full(n, np.inf), d.sum(-1, keepdims=True),
              d.mean(-1) if t else np.full(n, np.nan), np.sqrt((d * d).sum(-1)),
              np.vectorize(math.erf)(d) if t else d, d + 0.5,
              np.trunc(x).astype(np.int64) ** 2, -x.astype(np.float16)]
        directory = os.path.join(args.out, "rows", f"{n}x{t}")
        os.makedirs(directory, exist_ok=True)
        for kind, arrays in (("input", [x]), ("output", ys)):
            for i, a in enumerate(arrays):
                a = a if a.dtype in (np.int64, np.float16) else a.astype(np.float32)
                with open(os.path.join(directory, f"{kind}_{i}.pb"), "wb") as f:
                    f.write(numpy_helper.from_array(a).SerializeToString())

    # An integer mean over a dynamic dim: over none of its elements it is 0,
    # not a division by zero.
    int_mean = helper.make_model(
        helper.make_graph([helper.make_node("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0)],
                          "int_mean", [helper.make_tensor_value_info("x", TensorProto.INT32, [2, "n", 4])],
                          [helper.make_tensor_value_info("y", TensorProto.INT32, [2, 4])]),
        opset_imports=[helper.make_opsetid("", 17)])
    os.makedirs(os.path.join(args.out, "int_mean"), exist_ok=True)
    onnx.save(int_mean, os.path.join(args.out, "int_mean", "model.onnx"))
    for n in (0, 3):
        x = np.arange(2 * n * 4, dtype=np.int32).reshape(2, n, 4) * 7 - 20
        # An integer mean truncates toward zero, as C's division does.
        y = np.trunc(x.sum(axis=1) / n).astype(np.int32) if n else np.zeros((2, 4), np.int32)
        directory = os.path.join(args.out, "int_mean", f"n{n}")
        os.makedirs(directory, exist_ok=True)
        for kind, array in (("input_0", x), ("output_0", y.astype(np.int32))):
            with open(os.path.join(directory, kind + ".pb"), "wb") as f:
                f.write(numpy_helper.from_array(array).SerializeToString())

    # A decoder step with a key-value cache: batch, new tokens and past
    # length all symbolic; the past may be empty (the prompt's step), and a
    # cache of another batch than the ids' is refused before the run.
    decoder = CachedDecoder().eval()
    dims = {"ids": {0: "batch", 1: "new"}, "past_k": {0: "batch", 2: "past"},
            "past_v": {0: "batch", 2: "past"}, "logits": {0: "batch", 1: "new"},
            "k": {0: "batch", 2: "total"}, "v": {0: "batch", 2: "total"}}
    export(decoder, (torch.zeros(1, 3, dtype=torch.int64), torch.randn(1, 2, 5, 16), torch.randn(1, 2, 5, 16)),
           ["ids", "past_k", "past_v"], dims, os.path.join(args.out, "decoder", "model.onnx"),
           outputs=("logits", "k", "v"))
    for batch, new, past, cache_batch in ((1, 4, 0, 1), (1, 1, 7, 1), (2, 3, 5, 2), (3, 1, 60, 3), (2, 1, 5, 3)):
        ids = torch.randint(0, 50, (batch, new))
        past_k, past_v = torch.randn(cache_batch, 2, past, 16), torch.randn(cache_batch, 2, past, 16)
        # The refused set's outputs are placeholders: no run reaches them.
        outputs = [torch.zeros(batch, new, 50), torch.zeros(batch, 2, past + new, 16),
                   torch.zeros(batch, 2, past + new, 16)]
        if batch == cache_batch:
            with torch.no_grad():
                outputs = decoder.double()(ids, past_k.double(), past_v.double())
            decoder.float()
        directory = os.path.join(args.out, "decoder", f"b{batch}_n{new}_p{past}_c{cache_batch}")
        os.makedirs(directory, exist_ok=True)
        tensors = [("input_0", ids.numpy()), ("input_1", past_k.numpy()), ("input_2", past_v.numpy())]
        tensors += [(f"output_{i}", o.numpy().astype(np.float32)) for i, o in enumerate(outputs)]
        for kind, array in tensors:
            with open(os.path.join(directory, kind + ".pb"), "wb") as f:
                f.write(numpy_helper.from_array(array).SerializeToString())

    # A Concat of 40 inputs along their dynamic dim 0: one op, not a chain of
    # inserts at dynamic offsets (whose bufferization took minutes).
    count = 40
    long_concat = helper.make_model(
        helper.make_graph(
            [helper.make_node("Relu", [f"x{i}"], [f"r{i}"]) for i in range(count)] +
            [helper.make_node("Concat", [f"r{i}" for i in range(count)], ["y"], axis=0, name="concat")],
            "long_concat", [helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [f"n{i}", 4])
                            for i in range(count)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["total", 4])]),
        opset_imports=[helper.make_opsetid("", 17)])
    os.makedirs(os.path.join(args.out, "long_concat"), exist_ok=True)
    onnx.save(long_concat, os.path.join(args.out, "long_concat", "model.onnx"))
    xs = [torch.randn(i % 3, 4) for i in range(count)]
    write_set(os.path.join(args.out, "long_concat", "mixed"), xs, [torch.relu(torch.cat(xs).double())])

    # A sum of ones over a dynamic length (the fill folds into the sum, whose
    # loop then reads nothing along the reduced dim).
    fill_sum = helper.make_model(
        helper.make_graph([helper.make_node("Shape", ["w"], ["s"]),
                           helper.make_node("ConstantOfShape", ["s"], ["f"],
                                            value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
                           helper.make_node("ReduceSum", ["f"], ["y"], keepdims=0)],
                          "fill_sum", [helper.make_tensor_value_info("w", TensorProto.FLOAT, ["n"])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])]),
        opset_imports=[helper.make_opsetid("", 13)])
    os.makedirs(os.path.join(args.out, "fill_sum"), exist_ok=True)
    onnx.save(fill_sum, os.path.join(args.out, "fill_sum", "model.onnx"))
    for n in (3, 40, 0):
        write_set(os.path.join(args.out, "fill_sum", f"n{n}"), [torch.zeros(n)], [torch.tensor(float(n))])
    # The same per row of a [M, K] fill, both dims dynamic.
    fill_rows = helper.make_model(
        helper.make_graph([helper.make_node("Shape", ["w"], ["s"]),
                           helper.make_node("ConstantOfShape", ["s"], ["f"],
                                            value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.5])),
                           helper.make_node("ReduceSum", ["f", "axes"], ["y"], keepdims=0)],
                          "fill_rows", [helper.make_tensor_value_info("w", TensorProto.FLOAT, ["m", "k"])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m"])],
                          [helper.make_tensor("axes", TensorProto.INT64, [1], [1])]),
        opset_imports=[helper.make_opsetid("", 13)])
    os.makedirs(os.path.join(args.out, "fill_rows"), exist_ok=True)
    onnx.save(fill_rows, os.path.join(args.out, "fill_rows", "model.onnx"))
    for m, k in ((2, 3), (5, 77)):
        write_set(os.path.join(args.out, "fill_rows", f"m{m}_k{k}"), [torch.zeros(m, k)], [torch.full((m,), 1.5 * k)])

    # A gather along a dynamic dim: any number of rows, negative indices;
    # an empty table (out-of-range indices, no row to clamp them to) gives
    # zeros.
    gather_axis = helper.make_model(
        helper.make_graph([helper.make_node("Gather", ["table", "ids"], ["y"], axis=0, name="lookup")],
                          "gather_axis",
                          [helper.make_tensor_value_info("table", TensorProto.FLOAT, ["rows", 4]),
                           helper.make_tensor_value_info("ids", TensorProto.INT64, [3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])]),
        opset_imports=[helper.make_opsetid("", 17)])
    os.makedirs(os.path.join(args.out, "gather_axis"), exist_ok=True)
    onnx.save(gather_axis, os.path.join(args.out, "gather_axis", "model.onnx"))
    for rows in (5, 1, 0):
        table = np.random.default_rng(rows).standard_normal((rows, 4)).astype(np.float32)
        ids = np.array([0, 1, -1] if rows == 0 else [0, rows - 1, -1], np.int64)
        y = table[ids] if rows else np.zeros((3, 4), np.float32)
        directory = os.path.join(args.out, "gather_axis", f"rows{rows}")
        os.makedirs(directory, exist_ok=True)
        for name, t in (("input_0", table), ("input_1", ids), ("output_0", y)):
            with open(os.path.join(directory, name + ".pb"), "wb") as f:
                f.write(numpy_helper.from_array(t).SerializeToString())

    # A cumulative sum along the batch is not per sample: refused, by node.
    class Unsupported(torch.nn.Module):
        def forward(self, x):
            return torch.cumsum(x, 0)

    export(Unsupported(), (torch.randn(2, 4),), ["x"], {"x": {0: "batch"}, "y": {0: "batch"}},
           os.path.join(args.out, "cumsum", "model.onnx"))

    # Ops on rows over a dynamic batch, which keep their dynamic lowerings
    # (no loop over the samples without a convolution or pool among them):
    # norms and softmaxes at each axis, transposes, splits, products of two
    # activations, one of them with a broadcast head; then a convolution's
    # output through the same ops, which stay in its loop.
    class RowOps(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = torch.nn.LayerNorm([6, 8])
            self.conv = torch.nn.Conv2d(2, 2, 3, padding=1)

        def forward(self, x, heads):
            a = self.norm(x) + torch.softmax(x, dim=1)
            b = torch.log_softmax(x.transpose(1, 2), dim=-1).transpose(1, 2)
            top, bottom = x.split([2, 4], dim=1)
            scores = torch.softmax(top @ bottom.transpose(1, 2), dim=-1)
            c = scores @ bottom
            # heads [N, 3, 6, 8] against one head of keys [N, 1, 8, 6].
            shared = heads @ x.transpose(1, 2).unsqueeze(1)
            image = self.conv(x.view(x.shape[0], 2, 3, 8))
            d = torch.softmax(image, dim=-1).transpose(2, 3)
            return a + b, c, shared, d

    rows = RowOps().eval()
    export(rows, (torch.randn(2, 6, 8), torch.randn(2, 3, 6, 8)), ["x", "heads"],
           {"x": {0: "batch"}, "heads": {0: "batch"}, "ab": {0: "batch"}, "c": {0: "batch"},
            "shared": {0: "batch"}, "d": {0: "batch"}},
           os.path.join(args.out, "row_ops", "model.onnx"), outputs=("ab", "c", "shared", "d"))
    reference = RowOps().double().eval()
    reference.load_state_dict({k: v.double() for k, v in rows.state_dict().items()})
    for batch in (1, 3, 7):
        x, heads = torch.randn(batch, 6, 8), torch.randn(batch, 3, 6, 8)
        with torch.no_grad():
            outputs = reference(x.double(), heads.double())
        write_set(os.path.join(args.out, "row_ops", f"batch{batch}"), [x, heads], list(outputs))

    # A 128x128 projection: chunks of 64 rows, whose products the schedule
    # splits across threads (32 rows are too little work).
    projection = torch.nn.Linear(128, 128).eval()
    export(projection, (torch.randn(2, 128),), ["x"], {"x": {0: "batch"}, "y": {0: "batch"}},
           os.path.join(args.out, "projection", "model.onnx"))
    reference = torch.nn.Linear(128, 128).double().eval()
    reference.load_state_dict({k: v.double() for k, v in projection.state_dict().items()})
    for batch in (0, 7, 63, 64, 65, 127, 130):
        x = torch.randn(batch, 128)
        with torch.no_grad():
            y = reference(x.double())
        write_set(os.path.join(args.out, "projection", f"batch{batch}"), [x], [y])


if __name__ == "__main__":
    main()
