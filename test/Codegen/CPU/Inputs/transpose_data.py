"""Test data for dynamic-transpose.test: keys [8, T, 64] and their transpose
[8, 64, T] by NumPy, in DIR/t<T> for T = 0, 5, 16, 37."""

import os
import sys

import numpy as np
from onnx import numpy_helper

out = sys.argv[1]
for t in (0, 5, 16, 37):
    k = np.random.default_rng(t).standard_normal((8, t, 64)).astype(np.float32)
    directory = os.path.join(out, f"t{t}")
    os.makedirs(directory, exist_ok=True)
    for name, array in (("input_0", k), ("output_0", k.transpose(0, 2, 1).copy())):
        with open(os.path.join(directory, name + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(array).SerializeToString())
