"""Recurrent models with a symbolic sequence length, and Loops with a
run-time trip count, for dynamic-recurrent.test, and test data sets at
several lengths.

    recurrent_models.py --out DIR

writes DIR/<model>/model.onnx and DIR/<model>/t<length>/{input_*,output_*}.pb:
- PyTorch's LSTM (two layers, bidirectional, batch first), GRU (two layers)
  and RNN (ReLU), exported with the sequence length symbolic; references from
  the same modules in float64;
- single LSTM, GRU and RNN nodes with what PyTorch does not export
  (sequence_lens as a run-time input, initial states, peepholes, clip, the
  reverse direction, layout 1, another activation), down to length 0;
  references from the ONNX specification's formulas in float64
  (numpy_reference.py).
"""

import argparse
import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Frontend", "ONNX", "Inputs"))
from numpy_reference import recurrent  # noqa: E402


def write_set(directory, inputs, outputs):
    os.makedirs(directory, exist_ok=True)
    for kind, arrays in (("input", inputs), ("output", outputs)):
        for i, a in enumerate(arrays):
            a = a.detach().numpy() if isinstance(a, torch.Tensor) else a
            dtype = np.int32 if a.dtype.kind in "iu" else np.float32
            with open(os.path.join(directory, f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a.astype(dtype)).SerializeToString())


class Stacked(torch.nn.Module):
    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        out = self.rnn(x)
        y, state = out[0], out[1]
        if isinstance(state, tuple):
            return (y,) + state
        return y, state


def pytorch_models(out):
    batch, features = 3, 10
    for name, rnn, outputs in (
            ("lstm", torch.nn.LSTM(features, 16, num_layers=2, bidirectional=True,
                                   batch_first=True), ("y", "h", "c")),
            ("gru", torch.nn.GRU(features, 12, num_layers=2), ("y", "h")),
            ("rnn", torch.nn.RNN(features, 8, nonlinearity="relu"), ("y", "h"))):
        module = Stacked(rnn).eval()
        seq_axis = 1 if rnn.batch_first else 0
        example = torch.randn(batch, 5, features) if rnn.batch_first else torch.randn(5, batch, features)
        path = os.path.join(out, name, "model.onnx")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        torch.onnx.export(module, (example,), path, input_names=["x"], output_names=list(outputs),
                          dynamic_axes={"x": {seq_axis: "seq"}, "y": {seq_axis: "seq"}},
                          opset_version=17)
        reference = Stacked(rnn).double()
        for length in (1, 7, 64, 300):
            shape = [batch, features]
            shape.insert(seq_axis, length)
            x = torch.randn(*shape)
            with torch.no_grad():
                ys = reference(x.double())
            write_set(os.path.join(out, name, f"t{length}"), [x], list(ys))


class Settle(torch.nn.Module):
    """A scripted while loop: h <- 0.8 tanh(h W + b) while fewer than
    max_steps steps ran and the mean of |h| is above 0.05, summing the
    states."""
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Linear(16, 16)

    def forward(self, h, max_steps: int):
        step = 0
        total = torch.zeros_like(h)
        while step < max_steps and bool(h.abs().mean() > 0.05):
            h = torch.tanh(self.w(h)) * 0.8
            total = total + h
            step += 1
        return h, total


class Unroll(torch.nn.Module):
    """A scripted loop over max_steps appending to lists: each state
    stacked, and each state's first row concatenated."""
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Linear(16, 16)

    def forward(self, h, max_steps: int):
        states = []
        rows = []
        for _ in range(max_steps):
            h = torch.tanh(self.w(h))
            states.append(h)
            rows.append(h[:1])
        return torch.stack(states, 1), torch.cat(rows, 0)


class Collect(torch.nn.Module):
    """A scripted loop whose only loop-carried value is the list it appends
    to."""
    def forward(self, h, max_steps: int):
        out = []
        for i in range(max_steps):
            out.append(h * float(i))
        return torch.stack(out)


class UnrollUntil(torch.nn.Module):
    """The same loop cut short by a break: a while loop whose only trip
    count is INT64_MAX, appending (refused)."""
    def forward(self, h, max_steps: int):
        rows = []
        for _ in range(max_steps):
            h = 0.5 * h
            rows.append(h[:1])
            if bool(h.abs().mean() <= 0.3):
                break
        return torch.cat(rows, 0)


def export_scripted(out, name, module_class, outputs, steps_list):
    """`module_class` scripted and exported to DIR/name (inputs h [2, 16] and
    max_steps), with data sets s<steps> whose references come from the same
    weights in float64."""
    module = module_class().eval()
    path = os.path.join(out, name, "model.onnx")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.onnx.export(torch.jit.script(module), (torch.randn(2, 16), 10), path, opset_version=16,
                      input_names=["h", "max_steps"], output_names=outputs)
    reference = torch.jit.script(module_class().eval())
    reference.load_state_dict(module.state_dict())
    reference = reference.double()
    for steps in steps_list:
        h = torch.randn(2, 16)
        with torch.no_grad():
            results = reference(h.double(), steps)
        if isinstance(results, torch.Tensor):
            results = (results,)
        save_set(os.path.join(out, name, f"s{steps}"),
                 (("h", h.numpy()), ("max_steps", np.array(steps, np.int64))),
                 [r.numpy().astype(np.float32) for r in results])


def scripted_while(out):
    """PyTorch's export of a scripted while loop (a Loop of trip count
    INT64_MAX, its initial condition an If, its body computing the next)."""
    export_scripted(out, "scripted_while", Settle, ["h_out", "total"], (0, 3, 100))


def scripted_append(out):
    """PyTorch's export of scripted loops appending to lists (a Loop carrying
    a sequence from SequenceEmpty, SequenceInsert in its body,
    ConcatFromSequence after it); and of one cut short by a break
    (refused)."""
    export_scripted(out, "scripted_append", Unroll, ["states", "rows"], (1, 4, 40))
    export_scripted(out, "scripted_collect", Collect, ["stacked"], (1, 5))
    # Refused: a body that appends to one carried sequence and makes the
    # result another's next value.
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["x", "fi"], ["e"]),
         helper.make_node("SequenceInsert", ["s1_in", "e"], ["s1_out"]),
         helper.make_node("SequenceInsert", ["s1_in", "e"], ["s2_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("s1_in", TensorProto.FLOAT, [3]),
         helper.make_tensor_sequence_value_info("s2_in", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("s1_out", TensorProto.FLOAT, [3]),
         helper.make_tensor_sequence_value_info("s2_out", TensorProto.FLOAT, [3])])
    save_model(out, "append_crossed", helper.make_graph(
        [helper.make_node("SequenceEmpty", [], ["s1"], dtype=TensorProto.FLOAT),
         helper.make_node("SequenceEmpty", [], ["s2"], dtype=TensorProto.FLOAT),
         helper.make_node("Loop", ["M", "", "s1", "s2"], ["t1", "t2"], name="crossed", body=body),
         helper.make_node("ConcatFromSequence", ["t2"], ["y"], axis=0, new_axis=1)],
        "append_crossed",
        [helper.make_tensor_value_info("M", TensorProto.INT64, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["M", 3])]))
    # The same with a constant trip count of 4: unrolled, each iteration's
    # sequence carried into the next.
    model = onnx.load(os.path.join(out, "scripted_append", "model.onnx"))
    model.graph.initializer.append(numpy_helper.from_array(np.array(4, np.int64), "four"))
    for node in model.graph.node:
        if node.op_type == "Loop":
            node.input[0] = "four"
    os.makedirs(os.path.join(out, "append_unrolled"), exist_ok=True)
    onnx.save(model, os.path.join(out, "append_unrolled", "model.onnx"))
    path = os.path.join(out, "scripted_until", "model.onnx")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.onnx.export(torch.jit.script(UnrollUntil()), (torch.randn(2, 16), 10), path,
                      opset_version=16, input_names=["h", "max_steps"], output_names=["rows"])


def onnx_models(out, rng):
    batch, features, hidden = 3, 6, 5
    for name, op, attrs, gates in (
            ("lstm_node", "LSTM", dict(direction="bidirectional", clip=3.0), 4),
            ("gru_node", "GRU", dict(direction="reverse", linear_before_reset=1), 3),
            ("rnn_node", "RNN", dict(layout=1, activations=["LeakyRelu"], activation_alpha=[0.2]), 1)):
        dirs = 2 if attrs.get("direction") == "bidirectional" else 1
        layout = attrs.get("layout", 0)
        x_shape = ["batch_fixed", "seq"] if layout else ["seq", "batch_fixed"]
        x_shape = [batch if d == "batch_fixed" else d for d in x_shape] + [features]
        state_shape = [batch, dirs, hidden] if layout else [dirs, batch, hidden]
        w = rng.standard_normal((dirs, gates * hidden, features)).astype(np.float32) * 0.5
        r = rng.standard_normal((dirs, gates * hidden, hidden)).astype(np.float32) * 0.5
        b = rng.standard_normal((dirs, 2 * gates * hidden)).astype(np.float32) * 0.5
        inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R"),
                 numpy_helper.from_array(b, "B")]
        names = ["X", "W", "R", "B", "lens", "h0"]
        inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape),
                  helper.make_tensor_value_info("lens", TensorProto.INT32, [batch]),
                  helper.make_tensor_value_info("h0", TensorProto.FLOAT, state_shape)]
        outputs = ["Y", "Y_h"]
        y_shape = ([batch, "seq", dirs, hidden] if layout else ["seq", dirs, batch, hidden])
        out_infos = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, y_shape),
                     helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, state_shape)]
        if op == "LSTM":
            names += ["c0", "P"]
            inputs.append(helper.make_tensor_value_info("c0", TensorProto.FLOAT, state_shape))
            p = rng.standard_normal((dirs, 3 * hidden)).astype(np.float32) * 0.5
            inits.append(numpy_helper.from_array(p, "P"))
            outputs.append("Y_c")
            out_infos.append(helper.make_tensor_value_info("Y_c", TensorProto.FLOAT, state_shape))
        node = helper.make_node(op, names, outputs, hidden_size=hidden, **attrs)
        model = helper.make_model(helper.make_graph([node], name, inputs, out_infos, inits),
                                  opset_imports=[helper.make_opsetid("", 17)])
        os.makedirs(os.path.join(out, name), exist_ok=True)
        with open(os.path.join(out, name, "model.onnx"), "wb") as f:
            f.write(model.SerializeToString())
        for length in (0, 1, 5, 40):
            x = rng.standard_normal([length if d == "seq" else d for d in x_shape]).astype(np.float32)
            # Every step, about half of them, and at most one.
            lens = np.array([length, length // 2, min(length, 1)], np.int32)
            h0 = rng.standard_normal(state_shape).astype(np.float32)
            args = [x, w, r, b, lens, h0]
            feeds = [x, lens, h0]
            if op == "LSTM":
                c0 = rng.standard_normal(state_shape).astype(np.float32)
                args += [c0, p]
                feeds.append(c0)
            results = recurrent(op, args, attrs)
            write_set(os.path.join(out, name, f"t{length}"), feeds, results[:len(outputs)])


def loop_models(out, rng):
    """ONNX Loops whose trip count is a run-time input: a for loop carrying a
    state through tanh(h W + x[i]) and scanning 2h."""
    n = 4
    w = (rng.standard_normal((n, n)) * 0.5).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Gather", ["xs", "i"], ["x_i"], axis=0),
         helper.make_node("MatMul", ["h_in", "W"], ["hw"]),
         helper.make_node("Add", ["hw", "x_i"], ["pre"]),
         helper.make_node("Tanh", ["pre"], ["h_out"]),
         helper.make_node("Add", ["h_out", "h_out"], ["scan"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_in", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("scan", TensorProto.FLOAT, [n])])
    loop = helper.make_node("Loop", ["M", "cond", "h0"], ["h", "scans"], name="steps", body=body)
    graph = helper.make_graph(
        [loop], "loop",
        [helper.make_tensor_value_info("M", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h0", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("xs", TensorProto.FLOAT, [40, n])],
        [helper.make_tensor_value_info("h", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("scans", TensorProto.FLOAT, ["iterations", n])],
        [numpy_helper.from_array(w, "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    os.makedirs(os.path.join(out, "loop"), exist_ok=True)
    with open(os.path.join(out, "loop", "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for trips, go in ((0, True), (1, True), (5, True), (40, True), (7, False), (-3, True)):
        h0 = rng.standard_normal(n).astype(np.float32)
        xs = rng.standard_normal((40, n)).astype(np.float32)
        h = h0.astype(np.float64)
        scans = []
        for i in range(max(trips, 0) if go else 0):
            h = np.tanh(h @ w.astype(np.float64) + xs[i])
            scans.append(2 * h)
        scans = np.array(scans).reshape(-1, n)
        directory = os.path.join(out, "loop", f"m{trips}_{'go' if go else 'stop'}")
        os.makedirs(directory, exist_ok=True)
        for i, (name, a) in enumerate((("M", np.array(trips, np.int64)), ("cond", np.array(go)),
                                       ("h0", h0), ("xs", xs))):
            with open(os.path.join(directory, f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, name).SerializeToString())
        for i, a in enumerate((h, scans)):
            with open(os.path.join(directory, f"output_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a.astype(np.float32)).SerializeToString())


def save_model(out, name, graph):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    os.makedirs(os.path.join(out, name), exist_ok=True)
    with open(os.path.join(out, name, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())


def save_set(directory, inputs, outputs):
    """Named inputs (name, array) and outputs, each keeping its dtype."""
    os.makedirs(directory, exist_ok=True)
    for i, (name, a) in enumerate(inputs):
        with open(os.path.join(directory, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, name).SerializeToString())
    for i, a in enumerate(outputs):
        with open(os.path.join(directory, f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a).SerializeToString())


def settling_body(n, prefix=""):
    """A while loop's body: h <- 0.5 tanh(h W) (W from outside), going on
    while the absolute sum of h is above 0.5, each h scanned; its names
    prefixed (a body nested in another's names its values apart)."""
    v = lambda name: prefix + name
    return helper.make_graph(
        [helper.make_node("MatMul", [v("h_in"), "W"], [v("hw")]),
         helper.make_node("Tanh", [v("hw")], [v("t")]),
         helper.make_node("Mul", [v("t"), v("half")], [v("h_out")]),
         helper.make_node("Abs", [v("h_out")], [v("a")]),
         helper.make_node("ReduceSum", [v("a")], [v("s")], keepdims=0),
         helper.make_node("Greater", [v("s"), v("half")], [v("cond_out")]),
         helper.make_node("Identity", [v("h_out")], [v("h_scan")])],
        "body",
        [helper.make_tensor_value_info(v("i"), TensorProto.INT64, []),
         helper.make_tensor_value_info(v("cond_in"), TensorProto.BOOL, []),
         helper.make_tensor_value_info(v("h_in"), TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info(v("cond_out"), TensorProto.BOOL, []),
         helper.make_tensor_value_info(v("h_out"), TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info(v("h_scan"), TensorProto.FLOAT, [n])],
        [numpy_helper.from_array(np.array(0.5, np.float32), v("half"))])


def while_models(out, rng):
    """ONNX Loops whose body computes the condition (while loops):
    - "while": a trip count M given at run time, h <- tanh(h W) halving until
      its absolute sum drops below 0.5, each h scanned: the scan output has
      as many rows as iterations ran, which only the run knows;
    - "while_nocount": no trip count, an initial condition given at run time,
      a float halved and an int64 counter until the float is at most 1;
    - "while_const": the trip count a constant INT64_MAX and the condition a
      constant true, as PyTorch exports a scripted while loop;
    - "while_unbounded": no trip count and a scan output (refused)."""
    n = 4
    w = (rng.standard_normal((n, n)) * 0.8).astype(np.float32)
    body = settling_body(n)
    loop = helper.make_node("Loop", ["M", "", "h0"], ["h", "hs"], name="until_small", body=body)
    save_model(out, "while", helper.make_graph(
        [loop], "while",
        [helper.make_tensor_value_info("M", TensorProto.INT64, []),
         helper.make_tensor_value_info("h0", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("h", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("hs", TensorProto.FLOAT, ["iterations", n])],
        [numpy_helper.from_array(w, "W")]))
    # The same loop, its scan output only summed inside the model.
    save_model(out, "while_internal", helper.make_graph(
        [loop, helper.make_node("ReduceSum", ["hs", "axis0"], ["total"], keepdims=0)], "while_internal",
        [helper.make_tensor_value_info("M", TensorProto.INT64, []),
         helper.make_tensor_value_info("h0", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("total", TensorProto.FLOAT, [n])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(np.array([0], np.int64), "axis0")]))
    for name, trips, scale in (("stop1", 100, 0.1), ("stop_late", 100, 40.0), ("count2", 2, 40.0),
                               ("count0", 0, 40.0)):
        h0 = (rng.standard_normal(n) * scale).astype(np.float32)
        h = h0.astype(np.float64)
        hs = []
        for _ in range(trips):
            h = np.tanh(h @ w.astype(np.float64)) * 0.5
            hs.append(h)
            if np.abs(h).sum() <= 0.5:
                break
        hs = np.array(hs).reshape(-1, n)
        save_set(os.path.join(out, "while", name), (("M", np.array(trips, np.int64)), ("h0", h0)),
                 (h.astype(np.float32), hs.astype(np.float32)))
        save_set(os.path.join(out, "while_internal", name),
                 (("M", np.array(trips, np.int64)), ("h0", h0)), (hs.sum(axis=0).astype(np.float32),))

    def halving(trip_count, condition, scan=False):
        body = helper.make_graph(
            [helper.make_node("Mul", ["x_in", "half"], ["x_out"]),
             helper.make_node("Add", ["k_in", "one"], ["k_out"]),
             helper.make_node("Greater", ["x_out", "one_f"], ["cond_out"])],
            "body",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
             helper.make_tensor_value_info("x_in", TensorProto.FLOAT, []),
             helper.make_tensor_value_info("k_in", TensorProto.INT64, [])],
            [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
             helper.make_tensor_value_info("x_out", TensorProto.FLOAT, []),
             helper.make_tensor_value_info("k_out", TensorProto.INT64, [])] +
            ([helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [])] if scan else []),
            [numpy_helper.from_array(np.array(0.5, np.float32), "half"),
             numpy_helper.from_array(np.array(1, np.int64), "one"),
             numpy_helper.from_array(np.array(1, np.float32), "one_f")])
        return helper.make_node("Loop", [trip_count, condition, "x0", "k0"],
                                ["x", "k"] + (["xs"] if scan else []), name="halve", body=body)

    x_k = [helper.make_tensor_value_info("x", TensorProto.FLOAT, []),
           helper.make_tensor_value_info("k", TensorProto.INT64, [])]
    save_model(out, "while_nocount", helper.make_graph(
        [halving("", "go")], "while_nocount",
        [helper.make_tensor_value_info("go", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x0", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("k0", TensorProto.INT64, [])], x_k))
    save_model(out, "while_const", helper.make_graph(
        [halving("M", "go")], "while_const",
        [helper.make_tensor_value_info("x0", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("k0", TensorProto.INT64, [])], x_k,
        [numpy_helper.from_array(np.array(np.iinfo(np.int64).max, np.int64), "M"),
         numpy_helper.from_array(np.array(True), "go")]))
    save_model(out, "while_unbounded", helper.make_graph(
        [halving("", "go", scan=True)], "while_unbounded",
        [helper.make_tensor_value_info("go", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x0", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("k0", TensorProto.INT64, [])],
        x_k + [helper.make_tensor_value_info("xs", TensorProto.FLOAT, ["iterations"])]))
    for name, go, x0 in (("x1000", True, 1000.0), ("x3", True, 3.0), ("x0_5", True, 0.5),
                         ("stopped", False, 1000.0)):
        x, k = np.float32(x0), 7
        if go:
            while True:
                x, k = np.float32(x * 0.5), k + 1
                if not x > 1:
                    break
        outputs = (np.array(x, np.float32), np.array(k, np.int64))
        save_set(os.path.join(out, "while_nocount", name),
                 (("go", np.array(go)), ("x0", np.array(x0, np.float32)), ("k0", np.array(7, np.int64))),
                 outputs)
        if go:
            save_set(os.path.join(out, "while_const", name),
                     (("x0", np.array(x0, np.float32)), ("k0", np.array(7, np.int64))), outputs)


def scan_models(out, rng):
    """A Scan over a symbolic sequence length: two scan inputs, the second
    read backwards along axis 1, a state through tanh(h W + x_t + y_t V), and
    two scan outputs, the second written backwards along axis 1."""
    n = 3
    w = (rng.standard_normal((n, n)) * 0.5).astype(np.float32)
    v = (rng.standard_normal((2, n)) * 0.5).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("MatMul", ["h_in", "W"], ["hw"]),
         helper.make_node("MatMul", ["y_t", "V"], ["yv"]),
         helper.make_node("Add", ["hw", "x_t"], ["a"]),
         helper.make_node("Add", ["a", "yv"], ["pre"]),
         helper.make_node("Tanh", ["pre"], ["h_out"]),
         helper.make_node("Identity", ["h_out"], ["first"]),
         helper.make_node("Add", ["h_out", "h_out"], ["second"])],
        "body",
        [helper.make_tensor_value_info("h_in", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("x_t", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("y_t", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("first", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("second", TensorProto.FLOAT, [n])])
    scan = helper.make_node("Scan", ["h0", "xs", "ys"], ["h", "firsts", "seconds"], name="scan",
                            body=body, num_scan_inputs=2, scan_input_axes=[0, 1],
                            scan_input_directions=[0, 1], scan_output_axes=[0, 1],
                            scan_output_directions=[0, 1])
    save_model(out, "scan", helper.make_graph(
        [scan], "scan",
        [helper.make_tensor_value_info("h0", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("xs", TensorProto.FLOAT, ["seq", n]),
         helper.make_tensor_value_info("ys", TensorProto.FLOAT, [2, "seq"])],
        [helper.make_tensor_value_info("h", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("firsts", TensorProto.FLOAT, ["seq", n]),
         helper.make_tensor_value_info("seconds", TensorProto.FLOAT, [n, "seq"])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(v, "V")]))
    # A body that reads no element of its second scan input: the lengths are
    # still checked.
    unused = helper.make_graph(
        [helper.make_node("Add", ["s", "x_t"], ["s_out"])], "body",
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("x_t", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("y_t", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [n])])
    save_model(out, "scan_unused", helper.make_graph(
        [helper.make_node("Scan", ["h0", "xs", "ys"], ["h"], name="sum", body=unused, num_scan_inputs=2)],
        "scan_unused",
        [helper.make_tensor_value_info("h0", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("xs", TensorProto.FLOAT, ["seq", n]),
         helper.make_tensor_value_info("ys", TensorProto.FLOAT, ["other", n])],
        [helper.make_tensor_value_info("h", TensorProto.FLOAT, [n])]))
    h0 = rng.standard_normal(n).astype(np.float32)
    xs = rng.standard_normal((3, n)).astype(np.float32)
    save_set(os.path.join(out, "scan_unused", "t3_5"),
             (("h0", h0), ("xs", xs), ("ys", rng.standard_normal((5, n)).astype(np.float32))),
             ((h0.astype(np.float64) + xs.sum(axis=0)).astype(np.float32),))
    for length, other in ((0, 0), (1, 1), (7, 7), (300, 300), (5, 4)):
        h0 = rng.standard_normal(n).astype(np.float32)
        xs = rng.standard_normal((length, n)).astype(np.float32)
        ys = rng.standard_normal((2, other)).astype(np.float32)
        h = h0.astype(np.float64)
        firsts = np.zeros((length, n))
        seconds = np.zeros((n, length))
        for t in range(min(length, other)):
            h = np.tanh(h @ w.astype(np.float64) + xs[t] + ys[:, other - 1 - t] @ v.astype(np.float64))
            firsts[t] = h
            seconds[:, length - 1 - t] = 2 * h
        name = f"t{length}" if length == other else f"t{length}_{other}"
        save_set(os.path.join(out, "scan", name), (("h0", h0), ("xs", xs), ("ys", ys)),
                 (h.astype(np.float32), firsts.astype(np.float32), seconds.astype(np.float32)))


def nested_models(out, rng):
    """Loops of run-time lengths in the body of another: "nested_while", an
    outer for loop of M iterations whose body runs a while loop (h <- tanh(h
    W) halving, at most K times, until its absolute sum is at most 0.5),
    sums that loop's scan output inside the body and scans the result; and
    "nested_resized", the inner trip count the outer iteration number
    (refused)."""
    n = 4
    w = (rng.standard_normal((n, n)) * 0.8).astype(np.float32)
    inner = settling_body(n, "inner_")
    outer = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Mul", ["h_in", "four"], ["g0"]),
         helper.make_node("Loop", ["K", "", "g0"], ["g", "gs"], name="settle", body=inner),
         helper.make_node("ReduceSum", ["gs", "axis0"], ["total"], keepdims=0),
         helper.make_node("Add", ["g", "total"], ["h_out"]),
         helper.make_node("Identity", ["total"], ["scan"])],
        "outer_body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_in", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("scan", TensorProto.FLOAT, [n])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "h0"], ["h", "totals"], name="outer", body=outer)],
        "nested_while",
        [helper.make_tensor_value_info("M", TensorProto.INT64, []),
         helper.make_tensor_value_info("K", TensorProto.INT64, []),
         helper.make_tensor_value_info("h0", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("h", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("totals", TensorProto.FLOAT, ["M", n])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(np.array(4, np.float32), "four"),
         numpy_helper.from_array(np.array([0], np.int64), "axis0")])
    save_model(out, "nested_while", graph)
    # The inner trip count the outer iteration number: its scan output's
    # buffer changes size between the outer iterations (refused).
    body_graph = graph.node[0].attribute[0].g  # the copy the outer Loop holds
    next(node for node in body_graph.node if node.op_type == "Loop").input[0] = "i"
    save_model(out, "nested_resized", graph)
    for trips, limit in ((0, 10), (1, 10), (6, 10), (6, 2), (20, 0)):
        h0 = rng.standard_normal(n).astype(np.float32)
        h = h0.astype(np.float64)
        totals = []
        for _ in range(trips):
            g = 4 * h
            gs = []
            for _ in range(limit):
                g = np.tanh(g @ w.astype(np.float64)) * 0.5
                gs.append(g)
                if np.abs(g).sum() <= 0.5:
                    break
            total = np.array(gs).reshape(-1, n).sum(axis=0)
            h = g + total
            totals.append(total)
        save_set(os.path.join(out, "nested_while", f"m{trips}_k{limit}"),
                 (("M", np.array(trips, np.int64)), ("K", np.array(limit, np.int64)), ("h0", h0)),
                 (h.astype(np.float32), np.array(totals, np.float32).reshape(-1, n)))


def recurrences_in_loops(out, rng):
    """A Scan and a GRU over a symbolic sequence length inside the body of a
    Loop whose trip count M is an input: "scan_in_loop" runs a cumulative sum
    over xs [T, 3] per iteration and adds its trace's sum; "gru_in_loop"
    feeds each iteration's final GRU state back as the next initial one."""
    n = 3
    scan_body = helper.make_graph(
        [helper.make_node("Add", ["s", "x_t"], ["s_out"]), helper.make_node("Identity", ["s_out"], ["tr"])],
        "scan_body",
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("x_t", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("tr", TensorProto.FLOAT, [n])])
    def loop_of(nodes, state_shape, outputs):
        return helper.make_graph(
            [helper.make_node("Identity", ["cond_in"], ["cond_out"])] + nodes, "body",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
             helper.make_tensor_value_info("h_in", TensorProto.FLOAT, state_shape)],
            [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
             helper.make_tensor_value_info(outputs, TensorProto.FLOAT, state_shape)])
    body = loop_of([helper.make_node("Scan", ["h_in", "xs"], ["h_s", "trace"], body=scan_body,
                                     num_scan_inputs=1, name="inner_scan"),
                    helper.make_node("ReduceSum", ["trace", "axis0"], ["tot"], keepdims=0),
                    helper.make_node("Add", ["h_s", "tot"], ["h_out"])], [n], "h_out")
    save_model(out, "scan_in_loop", helper.make_graph(
        [helper.make_node("Loop", ["M", "", "h0"], ["h"], body=body, name="outer")], "scan_in_loop",
        [helper.make_tensor_value_info("M", TensorProto.INT64, []),
         helper.make_tensor_value_info("h0", TensorProto.FLOAT, [n]),
         helper.make_tensor_value_info("xs", TensorProto.FLOAT, ["T", n])],
        [helper.make_tensor_value_info("h", TensorProto.FLOAT, [n])],
        [numpy_helper.from_array(np.array([0], np.int64), "axis0")]))
    for trips, length in ((3, 5), (0, 4), (2, 0), (4, 50)):
        h0 = rng.standard_normal(n).astype(np.float32)
        xs = rng.standard_normal((length, n)).astype(np.float32)
        h = h0.astype(np.float64)
        for _ in range(trips):
            trace = h + np.cumsum(xs.astype(np.float64), axis=0)
            h = (trace[-1] if length else h) + trace.sum(axis=0)
        save_set(os.path.join(out, "scan_in_loop", f"m{trips}_t{length}"),
                 (("M", np.array(trips, np.int64)), ("h0", h0), ("xs", xs)), (h.astype(np.float32),))

    batch, inputs, hidden = 2, 3, 4
    w = (rng.standard_normal((1, 3 * hidden, inputs)) * 0.5).astype(np.float32)
    r = (rng.standard_normal((1, 3 * hidden, hidden)) * 0.5).astype(np.float32)
    body = loop_of([helper.make_node("GRU", ["xs", "W", "R", "", "", "h_in"], ["", "h_out"],
                                     hidden_size=hidden, name="gru")], [1, batch, hidden], "h_out")
    save_model(out, "gru_in_loop", helper.make_graph(
        [helper.make_node("Loop", ["M", "", "h0"], ["h"], body=body, name="outer")], "gru_in_loop",
        [helper.make_tensor_value_info("M", TensorProto.INT64, []),
         helper.make_tensor_value_info("h0", TensorProto.FLOAT, [1, batch, hidden]),
         helper.make_tensor_value_info("xs", TensorProto.FLOAT, ["T", batch, inputs])],
        [helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, batch, hidden])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R")]))
    for trips, length in ((3, 5), (0, 4), (2, 17)):
        h0 = rng.standard_normal((1, batch, hidden)).astype(np.float32)
        xs = rng.standard_normal((length, batch, inputs)).astype(np.float32)
        h = h0
        for _ in range(trips):
            h = recurrent("GRU", [xs, w, r, None, None, h], {})[1]
        save_set(os.path.join(out, "gru_in_loop", f"m{trips}_t{length}"),
                 (("M", np.array(trips, np.int64)), ("h0", h0), ("xs", xs)),
                 (np.asarray(h, np.float32),))


def loop_refusals(out):
    """Loops whose trip count M is an input, with data sets: a scan output
    used only inside the model (a buffer of a run-time size in a function of
    static inputs and outputs: M sizes it before the run), and a Loop in
    another's body; then refused: a check in a loop's body that changes with
    the iteration, and on the CUDA target a loop that only carries a value."""
    def body(nodes, outputs, inits=()):
        return helper.make_graph(
            nodes, "body",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
             helper.make_tensor_value_info("h_in", TensorProto.FLOAT, [])],
            outputs, list(inits))
    def save(name, nodes, inputs, outputs, inits=()):
        graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        os.makedirs(os.path.join(out, name), exist_ok=True)
        with open(os.path.join(out, name, "model.onnx"), "wb") as f:
            f.write(model.SerializeToString())
    carry = body([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                  helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
                  helper.make_node("Add", ["h_in", "fi"], ["h_out"])],
                 [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
                  helper.make_tensor_value_info("h_out", TensorProto.FLOAT, []),
                  helper.make_tensor_value_info("fi", TensorProto.FLOAT, [])])
    scalar_in = [helper.make_tensor_value_info("M", TensorProto.INT64, []),
                 helper.make_tensor_value_info("h0", TensorProto.FLOAT, [])]
    # The scan output only summed.
    save("loop_internal",
         [helper.make_node("Loop", ["M", "", "h0"], ["h", "scan"], name="sum_steps", body=carry),
          helper.make_node("ReduceSum", ["scan"], ["total"], keepdims=0)],
         scalar_in, [helper.make_tensor_value_info("total", TensorProto.FLOAT, [])])
    for trips in (0, 5, 100, -2):
        save_set(os.path.join(out, "loop_internal", f"m{trips}"),
                 (("M", np.array(trips, np.int64)), ("h0", np.array(1.5, np.float32))),
                 (np.array(sum(range(max(trips, 0))), np.float32),))
    # Only the carried value: static outputs (CUDA refuses the loop itself).
    carry_only = body([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                       helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
                       helper.make_node("Add", ["h_in", "fi"], ["h_out"])],
                      [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
                       helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [])])
    save("loop_carry", [helper.make_node("Loop", ["M", "", "h0"], ["h"], name="count", body=carry_only)],
         scalar_in, [helper.make_tensor_value_info("h", TensorProto.FLOAT, [])])
    # A run-time Loop in the body of another.
    inner = helper.make_node("Loop", ["M", "", "h_in"], ["h_out"], name="inner", body=carry_only)
    outer = body([helper.make_node("Identity", ["cond_in"], ["cond_out"]), inner],
                 [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
                  helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [])])
    save("loop_nested", [helper.make_node("Loop", ["M", "", "h0"], ["h"], name="outer", body=outer)],
         scalar_in, [helper.make_tensor_value_info("h", TensorProto.FLOAT, [])])
    # A check that changes with the iteration: 0..i folded into two rows.
    varying = body([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                    helper.make_node("Add", ["i", "one"], ["n"]),
                    helper.make_node("Range", ["zero", "n", "one"], ["r"], name="steps"),
                    helper.make_node("Reshape", ["r", "rows"], ["r2"], name="fold"),
                    helper.make_node("ReduceSum", ["r2"], ["s"], keepdims=0),
                    helper.make_node("Cast", ["s"], ["sf"], to=TensorProto.FLOAT),
                    helper.make_node("Add", ["h_in", "sf"], ["h_out"])],
                   [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
                    helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [])],
                   [numpy_helper.from_array(np.array(1, np.int64), "one"),
                    numpy_helper.from_array(np.array(0, np.int64), "zero"),
                    numpy_helper.from_array(np.array([2, -1], np.int64), "rows")])
    # A while loop in a branch of an If whose condition is known only at
    # run time: both branches run, so the loop would run untaken (refused).
    countdown = body([helper.make_node("Sub", ["h_in", "one_f"], ["h_out"]),
                      helper.make_node("Greater", ["h_out", "zero_f"], ["cond_out"])],
                     [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
                      helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [])],
                     [numpy_helper.from_array(np.array(1, np.float32), "one_f"),
                      numpy_helper.from_array(np.array(0, np.float32), "zero_f")])
    branch = lambda nodes, out_name: helper.make_graph(
        nodes, "branch", [], [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, [])])
    save("if_while",
         [helper.make_node("Greater", ["h0", "zero"], ["positive"]),
          helper.make_node("If", ["positive"], ["h"], name="choose",
                           then_branch=branch([helper.make_node("Loop", ["", "", "h0"], ["t"],
                                                                name="down", body=countdown)], "t"),
                           else_branch=branch([helper.make_node("Neg", ["h0"], ["e"])], "e"))],
         [helper.make_tensor_value_info("h0", TensorProto.FLOAT, [])],
         [helper.make_tensor_value_info("h", TensorProto.FLOAT, [])],
         [numpy_helper.from_array(np.array(0, np.float32), "zero")])
    # A Loop with no trip count, its condition an input, whose body passes
    # its condition on.
    save("loop_never_ends", [helper.make_node("Loop", ["", "go", "h0"], ["h"], name="count", body=carry_only)],
         [helper.make_tensor_value_info("go", TensorProto.BOOL, []), scalar_in[1]],
         [helper.make_tensor_value_info("h", TensorProto.FLOAT, [])])
    # Sequences carried through a run-time Loop that nnc refuses: one that
    # starts with an element, one the body reads, and the stack concatenated
    # along another axis than the first.
    def appending(extra_nodes=()):
        return helper.make_graph(
            [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
             helper.make_node("SequenceInsert", ["s_in", "x"], ["s_out"])] + list(extra_nodes),
            "body",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
             helper.make_tensor_sequence_value_info("s_in", TensorProto.FLOAT, [2, 3])],
            [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
             helper.make_tensor_sequence_value_info("s_out", TensorProto.FLOAT, [2, 3])])
    x_in = [helper.make_tensor_value_info("M", TensorProto.INT64, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])]
    concat = lambda axis, new_axis: helper.make_node("ConcatFromSequence", ["t"], ["y"], axis=axis,
                                                     new_axis=new_axis)
    y_out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    save("seq_not_empty",
         [helper.make_node("SequenceConstruct", ["x"], ["s"]),
          helper.make_node("Loop", ["M", "", "s"], ["t"], name="collect", body=appending()),
          concat(0, 1)], x_in, y_out)
    save("seq_read_in_body",
         [helper.make_node("SequenceEmpty", [], ["s"], dtype=TensorProto.FLOAT),
          helper.make_node("Loop", ["M", "", "s"], ["t"], name="collect",
                           body=appending([helper.make_node("SequenceLength", ["s_in"], ["len"],
                                                            name="length")])),
          concat(0, 1)], x_in, y_out)
    save("seq_concat_axis1",
         [helper.make_node("SequenceEmpty", [], ["s"], dtype=TensorProto.FLOAT),
          helper.make_node("Loop", ["M", "", "s"], ["t"], name="collect", body=appending()),
          helper.make_node("ConcatFromSequence", ["t"], ["y"], axis=1, name="join")], x_in, y_out)
    save("loop_varying_check", [helper.make_node("Loop", ["M", "", "h0"], ["h"], name="outer", body=varying)],
         scalar_in, [helper.make_tensor_value_info("h", TensorProto.FLOAT, [])])
    for trips in (0, 1, 5, 30, -1):
        m = max(trips, 0)
        save_set(os.path.join(out, "loop_nested", f"m{trips}"),
                 (("M", np.array(trips, np.int64)), ("h0", np.array(1.5, np.float32))),
                 (np.array(1.5 + m * sum(range(m)), np.float32),))


def dynamic_batch_model(out, rng):
    """An LSTM whose batch is symbolic too: refused, naming the node."""
    w = rng.standard_normal((1, 8, 3)).astype(np.float32)
    r = rng.standard_normal((1, 8, 2)).astype(np.float32)
    node = helper.make_node("LSTM", ["X", "W", "R"], ["Y"], name="encoder_lstm", hidden_size=2)
    graph = helper.make_graph(
        [node], "dynamic_batch",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["seq", "batch", 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["seq", 1, "batch", 2])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    os.makedirs(os.path.join(out, "lstm_dynamic_batch"), exist_ok=True)
    with open(os.path.join(out, "lstm_dynamic_batch", "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())


def train_slice_model(out, rng):
    """Static inputs and outputs, a sequence cut to a run-time length inside
    (a Slice to an input's value) feeding an LSTM: training refuses it."""
    w = rng.standard_normal((1, 16, 3)).astype(np.float32)
    r = rng.standard_normal((1, 16, 4)).astype(np.float32)
    head = rng.standard_normal((4, 2)).astype(np.float32)
    nodes = [helper.make_node("Slice", ["x", "start", "end"], ["cut"], name="cut"),
             helper.make_node("LSTM", ["cut", "W", "R"], ["", "h"], name="lstm", hidden_size=4),
             helper.make_node("Squeeze", ["h", "axis"], ["h2"]),
             helper.make_node("MatMul", ["h2", "head"], ["y"])]
    graph = helper.make_graph(
        nodes, "train_slice",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [10, 2, 3]),
         helper.make_tensor_value_info("end", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R"),
         numpy_helper.from_array(head, "head"), numpy_helper.from_array(np.array([0], np.int64), "start"),
         numpy_helper.from_array(np.array([0], np.int64), "axis")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    os.makedirs(os.path.join(out, "train_slice"), exist_ok=True)
    with open(os.path.join(out, "train_slice", "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.manual_seed(0)
    pytorch_models(args.out)
    onnx_models(args.out, np.random.default_rng(0))
    dynamic_batch_model(args.out, np.random.default_rng(1))
    loop_models(args.out, np.random.default_rng(2))
    while_models(args.out, np.random.default_rng(4))
    scan_models(args.out, np.random.default_rng(5))
    nested_models(args.out, np.random.default_rng(6))
    scripted_while(args.out)
    scripted_append(args.out)
    recurrences_in_loops(args.out, np.random.default_rng(7))
    train_slice_model(args.out, np.random.default_rng(3))
    loop_refusals(args.out)


if __name__ == "__main__":
    main()
