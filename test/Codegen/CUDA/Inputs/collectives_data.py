"""Writes the test data sets of collectives.mlir's kernels: output_0.pb,
y[4][64], as PTX defines the shuffles (an out-of-range lane keeps its own
value) into OUT_DIR, and as it defines mma.sync.m16n8k8 with tf32 operands
into MMA_DIR: lane l = 4 g + t holds A's rows g and g + 8 at columns t and
t + 4 (registers a0: (g, t), a1: (g + 8, t), a2: (g, t + 4), a3:
(g + 8, t + 4)), B's column g at rows t and t + 4, and C's and D's rows g and
g + 8 at columns 2 t and 2 t + 1 (c0: (g, 2t), c1: (g, 2t + 1), c2:
(g + 8, 2t), c3: (g + 8, 2t + 1)).

usage: collectives_data.py OUT_DIR MMA_DIR
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



def write(out, y):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y.astype(np.float32), "y").SerializeToString())


write(sys.argv[1], y)

# mma: register r of lane l holds A: 4 l + r, B: 2 l + r + 1, C: r.
A, B, C = np.zeros((16, 8)), np.zeros((8, 8)), np.zeros((16, 8))
for l in range(32):
    g, t = l // 4, l % 4
    for r in range(4):
        A[g + 8 * (r & 1), t + 4 * (r >> 1)] = 4 * l + r
        C[g + 8 * (r >> 1), 2 * t + (r & 1)] = r
    for r in range(2):
        B[t + 4 * r, g] = 2 * l + r + 1
D = A @ B + C
mma = np.zeros((4, 64))
for l in range(64):
    g, t = (l % 32) // 4, l % 4
    for r in range(4):
        mma[r, l] = D[g + 8 * (r >> 1), 2 * t + (r & 1)]
write(sys.argv[2], mma)
