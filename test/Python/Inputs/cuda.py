"""A model compiled with nnc.compile(..., target="cuda") runs on the
cuda-emulated device (no GPU needed) with numpy's numbers; device="cuda"
either runs on a GPU with the same numbers or, where there is none, raises
nnc.Error (never a silent CPU run).

    cuda.py OUT_DIR [--no-gpu]

--no-gpu: the machine is known to have no GPU (a fake driver with none), so
device="cuda" must fail.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import expect, expect_close, expect_error, mlp_forward, random_mlp, write_mlp  # noqa: E402

import nnc  # noqa: E402
from nnc import StatusCode  # noqa: E402

out = sys.argv[1]
no_gpu = "--no-gpu" in sys.argv[2:]
os.makedirs(out, exist_ok=True)
params = random_mlp(seed=5, inputs=6, hidden=16, outputs=3)
model = write_mlp(f"{out}/mlp.onnxtext", params, batch=4)
cuda_library = nnc.compile(model, f"{out}/mlp-cuda.so", target="cuda")
cuda_module = nnc.Module(cuda_library)
print(f"target {cuda_module.target} precision {cuda_module.precision}")
# CHECK: target cuda precision f32
# NO-GPU: target cuda precision f32
# Its products are too small for the tensor cores: with --precision=tf32
# the module still computes, and says it computes, in f32.
tf32_module = nnc.Module(nnc.compile(model, f"{out}/mlp-tf32.so", target="cuda", precision="tf32"))
print(f"precision {tf32_module.precision}")
# CHECK: precision f32
# NO-GPU: precision f32

rng = np.random.default_rng(6)
x = rng.standard_normal((4, 6)).astype(np.float32)
x2 = rng.standard_normal((4, 6)).astype(np.float32)
want, _ = mlp_forward(params, x)
tolerance = dict(rtol=1e-5, atol=1e-5)

# The CPU library for comparison.
cpu = nnc.Session(nnc.compile(model, f"{out}/mlp-cpu.so"))
(cpu_y,) = cpu.run([x])
expect_close(cpu_y, want, "cpu", **tolerance)

if not no_gpu:
    emulated = nnc.Session(cuda_module, device="cuda-emulated")
    print(f"emulated device: {emulated.device}")
    # CHECK: emulated device: cuda-emulated (kernels on the host CPU{{.*}})
    into = np.zeros((4, 3), np.float32)
    (y,) = emulated.run({"x": x}, outputs=[into])
    expect(y is into, "cuda-emulated: outputs= not returned")
    expect_close(y, want, "cuda-emulated against numpy", **tolerance)
    expect_close(y, cpu_y, "cuda-emulated against the CPU library", **tolerance)
    # A second run replays what the first recorded (a CUDA graph on a GPU).
    expect_close(emulated.run([x2])[0], mlp_forward(params, x2)[0], "cuda-emulated, second run", **tolerance)
    print("cuda-emulated: matches numpy")
    # CHECK: cuda-emulated: matches numpy

# Devices that do not fit the module.
expect_error(nnc.Error, lambda: nnc.Session(cuda_module, device="cpu"), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: module '{{.*}}mlp-cuda.so' was compiled for target 'cuda' and cannot run on device 'cpu'
expect_error(nnc.Error, lambda: nnc.Session(cuda_module, device="cuda:first"), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: device 'cuda:first': expected 'cuda:' followed by a device ordinal

# A GPU: there or not, never the CPU instead.
try:
    gpu = nnc.Session(cuda_module, device="cuda")
except nnc.Error as error:
    expect(error.code == StatusCode.UNAVAILABLE, f"device='cuda' failed with {error.code!r}: {error}")
    print(f"cuda: unavailable: {error.code.name}: {error}")
else:
    expect(not no_gpu, f"device='cuda' ran without a GPU: {gpu.device}")
    expect(gpu.device.startswith("cuda:"), f"device='cuda' runs on {gpu.device!r}")
    expect_close(gpu.run([x])[0], want, f"{gpu.device} against numpy", rtol=1e-4, atol=1e-5)
    expect_close(gpu.run([x2])[0], mlp_forward(params, x2)[0], f"{gpu.device}, second run", rtol=1e-4, atol=1e-5)
    print(f"cuda: matches numpy on {gpu.device}")
# CHECK: cuda: {{unavailable: UNAVAILABLE|matches numpy on cuda:0}}
# NO-GPU: cuda: unavailable: UNAVAILABLE: {{.*}}
print("PASS")
# CHECK: PASS
# NO-GPU: PASS
