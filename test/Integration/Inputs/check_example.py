"""Checks an embedding example's printed output for examples/tiny_classifier
against a float64 NumPy evaluation of the same ONNX model.

The examples fill input i, element j with j % 5 + i; for the classifier's one
input of shape 1x4 that is [0, 1, 2, 3].
"""
import re
import sys

import numpy as np
import onnx
import onnx.parser
from onnx import numpy_helper

model = onnx.parser.parse_model(open(sys.argv[1]).read())
w = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
x = np.array([[0.0, 1.0, 2.0, 3.0]])
hidden = np.maximum(x @ w["w1"].T + w["b1"], 0)
logits = hidden @ w["w2"].T + w["b2"]
expected = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()

text = sys.stdin.read()
m = re.search(r"output 'probabilities' \(f32 1x3\): (.*)", text)
if not m:
    sys.exit("no 'probabilities' output in:\n" + text)
got = np.array([float(v) for v in m.group(1).split()])
err = np.abs(got - expected.ravel()).max()
print(f"max abs error {err:.3g} against float64 NumPy")
sys.exit(0 if err <= 1e-5 else 1)
