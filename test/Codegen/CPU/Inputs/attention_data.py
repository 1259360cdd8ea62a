"""Test data for dynamic-attention.test: q [4, T, 32], k [4, 32, T] and
v [4, T, 32], and by NumPy in float64 the scores q @ k and
softmax(scores) @ v, in DIR/t<T> for T = 1, 7, 8, 9, 37 (edges of an
8-row, 32-column register tile and of a 16-lane step; 37 = 32 + 5). And
for products whose heads broadcast over a dynamic batch N, q [N, 4, 5, 8]
times k [N, 1, 8, 6] and q1 [N, 1, 5, 8] times k4 [N, 4, 8, 6], in
DIR/n<N> for N = 1, 3, 7. And a decoding step's products, q [4, M, 32]
times keys [4, 32, P], in DIR/m<M>_p<P> for (M, P) = (1, 100), (3, 5),
(7, 40), (13, 13), (15, 1), (0, 9)."""

import os
import sys

import numpy as np
from onnx import numpy_helper

out = sys.argv[1]
for t in (1, 7, 8, 9, 37):
    rng = np.random.default_rng(t)
    q, k, v = (rng.standard_normal(shape).astype(np.float32)
               for shape in ((4, t, 32), (4, 32, t), (4, t, 32)))
    scores = q.astype(np.float64) @ k.astype(np.float64)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    attended = (e / e.sum(axis=-1, keepdims=True)) @ v.astype(np.float64)
    directory = os.path.join(out, f"t{t}")
    os.makedirs(directory, exist_ok=True)
    for name, array in (("input_0", q), ("input_1", k), ("input_2", v),
                        ("output_0", scores.astype(np.float32)),
                        ("output_1", attended.astype(np.float32))):
        with open(os.path.join(directory, name + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(array).SerializeToString())

for n in (1, 3, 7):
    rng = np.random.default_rng(100 + n)
    q, k, q1, k4 = (rng.standard_normal(shape).astype(np.float32)
                    for shape in ((n, 4, 5, 8), (n, 1, 8, 6), (n, 1, 5, 8), (n, 4, 8, 6)))
    directory = os.path.join(out, f"n{n}")
    os.makedirs(directory, exist_ok=True)
    for name, array in (("input_0", q), ("input_1", k), ("input_2", q1), ("input_3", k4),
                        ("output_0", (q.astype(np.float64) @ k).astype(np.float32)),
                        ("output_1", (q1.astype(np.float64) @ k4).astype(np.float32))):
        with open(os.path.join(directory, name + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(array).SerializeToString())

for m, p in ((1, 100), (3, 5), (7, 40), (13, 13), (15, 1), (0, 9)):
    rng = np.random.default_rng(1000 + 100 * m + p)
    q = rng.standard_normal((4, m, 32)).astype(np.float32)
    keys = rng.standard_normal((4, 32, p)).astype(np.float32)
    directory = os.path.join(out, f"m{m}_p{p}")
    os.makedirs(directory, exist_ok=True)
    for name, array in (("input_0", q), ("input_1", keys),
                        ("output_0", (q.astype(np.float64) @ keys).astype(np.float32))):
        with open(os.path.join(directory, name + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(array).SerializeToString())
