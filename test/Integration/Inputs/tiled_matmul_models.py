"""Contractions large enough for every tile of the CUDA target's tiled matmul
(compiler/Codegen/CUDA/TiledMatmul.cpp), with sizes that are and are not
multiples of the tiles, and their float64 references.

    tiled_matmul_models.py OUT  ->  OUT/<name>/model.onnx, test_data_set_0

test_data_set_0's reference is exact. test_data_set_tf32, _bf16 and _f16
take the products of the operands rounded as nnc --precision=tf32, bf16 and
f16 round them before the tensor cores multiply (tf32: to 10 mantissa bits,
ties away from zero, as cvt.rna.tf32.f32; bf16: to 7, ties to even, as
cvt.rn.bf16x2.f32; f16: to IEEE half, ties to even, beyond 65504 an
infinity, as cvt.rn.f16x2.f32), summed in float64.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
from test_sets import write_set  # noqa: E402

# name: (batch, M, K, N). The tile follows the blocks a size gives
# (TiledMatmul.cpp, for 132 SMs): 64 x 64 where that makes 132 blocks, else
# 32 x 32, and 16 x 64 where M is under 32.
CASES = {
    "tile64": (4, 512, 64, 640),           # 8 x 10 x 4 = 320 blocks of 64 x 64
    "tile64_ragged": (3, 700, 70, 1030),   # partial tiles along M, N and K
    "tile32_ragged": (2, 300, 45, 500),    # too few 64 x 64 blocks
    "narrow_ragged": (4, 20, 70, 1000),    # M under 32
    "narrow_n_ragged": (2, 900, 40, 20),   # N under 32: 64 x 16
    "nan_payload": (1, 64, 32, 64),        # a[0, 3, 0] a NaN whose payload tf32 drops
    "f16_range": (1, 64, 32, 64),          # operands past f16's largest and below its normals
}


def round_tf32(x):
    x = x.astype(np.float32)
    bits = x.view(np.uint32)
    rounded = ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), rounded)


def round_bf16(x):
    bits = x.astype(np.float32).view(np.uint32)
    odd = (bits >> np.uint32(16)) & np.uint32(1)
    return ((bits + np.uint32(0x7FFF) + odd) & np.uint32(0xFFFF0000)).view(np.float32)


def round_f16(x):
    with np.errstate(over="ignore"):
        return x.astype(np.float16).astype(np.float32)


def build(out, name, batch, m, k, n):
    rng = np.random.default_rng(sorted(CASES).index(name))
    a = rng.uniform(-1, 1, (batch, m, k)).astype(np.float32)
    if name == "nan_payload":
        a[0, 3, 0] = np.array([0x7F800001], np.uint32).view(np.float32)[0]
    if name == "f16_range":
        a[0, 5, 7] = 7e4     # an infinity in f16: row 5 all infinities
        a[0, 9, :] = 3e-6    # subnormal in f16 (its smallest normal is 6.1e-5)
        a[0, 11, :] = 70000  # infinities of both signs in one sum: NaNs
    w = rng.uniform(-1, 1, (batch, k, n)).astype(np.float32)
    bias = rng.uniform(-1, 1, (n,)).astype(np.float32)
    # MatMul with a bias and a ReLU after it: the tiled schedule takes the
    # contraction, the epilogue stays elementwise.
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "w"], ["p"]),
         helper.make_node("Add", ["p", "bias"], ["s"]),
         helper.make_node("Relu", ["s"], ["y"])],
        name,
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [batch, m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, m, n])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "bias")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    os.makedirs(os.path.join(out, name), exist_ok=True)
    onnx.save(model, os.path.join(out, name, "model.onnx"))
    for suffix, rounded in (("0", lambda x: x), ("tf32", round_tf32), ("bf16", round_bf16),
                            ("f16", round_f16)):
        with np.errstate(invalid="ignore"):
            product = rounded(a).astype(np.float64) @ rounded(w).astype(np.float64)
        ref = np.maximum(product + bias, 0)
        write_set(os.path.join(out, name, "test_data_set_" + suffix), [a],
                  [ref.astype(np.float32)])


if __name__ == "__main__":
    for name, sizes in CASES.items():
        build(sys.argv[1], name, *sizes)
