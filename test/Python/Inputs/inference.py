"""nnc.compile, nnc.Module and nnc.Session on a small MLP, against numpy:
inputs by position and by name, array-likes converted, arrays bound without a
copy and never written, results written in place into caller arrays.

    inference.py OUT_DIR
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import expect, expect_close, expect_error, mlp_forward, random_mlp, write_mlp  # noqa: E402

import nnc  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
params = random_mlp(seed=1, inputs=3, hidden=8, outputs=2)
library = nnc.compile(write_mlp(f"{out}/mlp.onnxtext", params, batch=4), f"{out}/mlp.so")
expect(library == f"{out}/mlp.so" and os.path.isfile(library), f"compile returned {library!r}")

module = nnc.Module(library)
print(f"module target={module.target} functions={module.functions}")
main = module.function("main")
for info in main.inputs + main.outputs:
    print(f"tensor {info.name} {info.dtype} {info.shape} {info.dtype_name}")
# CHECK: module target=cpu functions=['main']
# CHECK: tensor x float32 (4, 3) f32
# CHECK: tensor y float32 (4, 2) f32

session = nnc.Session(module)
print(f"session device={session.device}")
# CHECK: session device=cpu
rng = np.random.default_rng(2)
x = rng.standard_normal((4, 3)).astype(np.float32)
want, _ = mlp_forward(params, x)
tolerance = dict(rtol=1e-5, atol=1e-5)

# Every way of passing the input gives numpy's result; none writes it.
x_before = x.copy()
strided = np.zeros((4, 6), np.float32)
strided[:, ::2] = x
read_only = x.copy()
read_only.flags.writeable = False
ways = {
    "list": [x],
    "tuple": (x,),
    "dict": {"x": x},
    "bare array": x,
    "nested lists (float64)": [x.tolist()],
    "float64 array": [x.astype(np.float64)],
    "non-contiguous view": [strided[:, ::2]],
    "Fortran order": [np.asfortranarray(x)],
    "big-endian": [x.astype(">f4")],
    "read-only": [read_only],
}
for way, inputs in ways.items():
    (y,) = session.run(inputs)
    expect(y.dtype == np.float32 and y.flags.c_contiguous, f"{way}: output {y.dtype}")
    expect_close(y, want, f"input as {way}", **tolerance)
    expect(np.array_equal(x, x_before), f"{way}: the input changed")
print(f"inputs: {len(ways)} ways match numpy")
# CHECK: inputs: 10 ways match numpy

# Integers convert to a float input.
ints = (np.arange(12).reshape(4, 3) % 3) - 1
(y,) = session.run([ints])
expect_close(y, mlp_forward(params, ints)[0], "int64 input", **tolerance)

# Zero copy: a C-contiguous array of the declared dtype is the array bound;
# anything else is converted first.
info = main.inputs[0]
expect(nnc._as_input(x, info, "x") is x, "a float32 C-contiguous input was copied")
expect(nnc._as_input(read_only, info, "x") is read_only, "a read-only input was copied")
expect(not np.shares_memory(nnc._as_input(strided[:, ::2], info, "x"), strided),
       "a strided input was bound in place")

# Results are written in place into caller arrays, which are the ones returned.
into = np.full((4, 2), np.nan, np.float32)
results = session.run([x], outputs=[into])
expect(results[0] is into, "outputs=[array]: a different array was returned")
expect_close(into, want, "outputs=[array]", **tolerance)
into_by_name = np.full((4, 2), np.nan, np.float32)
results = session.run({"x": x}, outputs={"y": into_by_name})
expect(results[0] is into_by_name, "outputs={name: array}: a different array was returned")
expect_close(into_by_name, want, "outputs={name: array}", **tolerance)
(allocated,) = session.run([x], outputs=[None])
expect_close(allocated, want, "outputs=[None]", **tolerance)
print("outputs: written in place")
# CHECK: outputs: written in place

# Each run returns new arrays: an earlier result is not overwritten.
x2 = rng.standard_normal((4, 3)).astype(np.float32)
(first,) = session.run([x])
(second,) = session.run([x2])
expect(first is not second and not np.shares_memory(first, second), "two runs share an output")
expect_close(first, want, "the first run's result after a second run", **tolerance)
expect_close(second, mlp_forward(params, x2)[0], "the second run", **tolerance)

# nnc.load: a callable session; a runtime of one thread gives the same numbers.
run = nnc.load(library, runtime=nnc.Runtime(threads=1))
expect(run.runtime.threads == 1, f"Runtime(threads=1) has {run.runtime.threads} threads")
expect_close(run(x), want, "nnc.load(...)(x)", **tolerance)
expect_close(run(x=x), want, "nnc.load(...)(x=x)", **tolerance)

# compile's options: a symbolic batch pinned with dim={"N": 5} (--dim=N=5);
# without `output`, the library lands next to the model.
symbolic = write_mlp(f"{out}/symbolic.onnxtext", params, batch="N")
pinned = nnc.compile(symbolic, dim={"N": 5})
expect(pinned == f"{out}/symbolic.so", f"default output {pinned!r}")
session5 = nnc.Session(pinned)
print(f"pinned {session5.function.inputs[0].shape} -> {session5.function.outputs[0].shape}")
# CHECK: pinned (5, 3) -> (5, 2)
x5 = rng.standard_normal((5, 3)).astype(np.float32)
expect_close(session5.run([x5])[0], mlp_forward(params, x5)[0], "batch 5", **tolerance)

# Unpinned, the batch stays dynamic (docs/dynamic-shapes.md): one library runs
# every batch, each output a new array of the run's shape; a caller's output
# array must have that shape.
dynamic = nnc.Session(nnc.compile(symbolic, f"{out}/dynamic.so"))
print(f"dynamic {dynamic.function.inputs[0].shape} -> {dynamic.function.outputs[0].shape}")
# CHECK: dynamic (None, 3) -> (None, 2)
for batch in (1, 7, 0, 3):
    xb = rng.standard_normal((batch, 3)).astype(np.float32)
    (yb,) = dynamic.run([xb])
    expect(yb.shape == (batch, 2), f"batch {batch}: shape {yb.shape}")
    expect_close(yb, mlp_forward(params, xb)[0], f"dynamic batch {batch}", **tolerance)
mine = np.zeros((3, 2), np.float32)
(same,) = dynamic.run([xb], outputs=[mine])
expect(same is mine, "a given output array is the one returned")
expect_close(mine, mlp_forward(params, xb)[0], "dynamic batch 3 into a caller array", **tolerance)
x2 = rng.standard_normal((2, 3)).astype(np.float32)
expect_error(nnc.Error, lambda: dynamic.run([x2], outputs=[mine]), nnc.StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: {{.*}}output 'y': the bound buffer has shape 3x2 but these inputs give shape 2x2
print("PASS")
# CHECK: PASS
