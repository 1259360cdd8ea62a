"""Writes the test data set of collectives.mlir's kernel: output_0.pb, y[4][64]
as PTX defines the shuffles (an out-of-range lane keeps its own value).

usage: collectives_data.py OUT_DIR
"""

import os
import sys

import numpy as np
from onnx import numpy_helper

t = np.arange(64)
lane = t % 32
v = (63 - t).astype(np.float32)  # the reversed values each thread reads
warp_sum = np.where(t < 32, v[:32].sum(), v[32:].sum())
down = np.where(lane < 31, v[np.minimum(t + 1, 63)], v)
up = np.where(lane >= 2, v[np.maximum(t - 2, 0)], v)
idx = v[t - lane + 5]
y = np.stack([warp_sum, down, up, idx]).astype(np.float32)

os.makedirs(sys.argv[1], exist_ok=True)
with open(os.path.join(sys.argv[1], "output_0.pb"), "wb") as f:
    f.write(numpy_helper.from_array(y, "y").SerializeToString())
