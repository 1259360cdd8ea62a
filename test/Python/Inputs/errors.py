"""The nnc package's errors: each failure raises nnc.Error with the runtime's
status code and message (or nnc.CompileError with nnc's diagnostics), and a
session that refused a call still runs. Prints each message for FileCheck.

    errors.py OUT_DIR
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import expect, expect_close, expect_error, mlp_forward, random_mlp, write_mlp  # noqa: E402

import nnc  # noqa: E402
from nnc import StatusCode  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
params = random_mlp(seed=3, inputs=3, hidden=8, outputs=2)
library = nnc.compile(write_mlp(f"{out}/mlp.onnxtext", params, batch=4), f"{out}/mlp.so")

# Loading.
expect_error(nnc.Error, lambda: nnc.Module(f"{out}/missing.so"), StatusCode.NOT_FOUND)
# CHECK: Error NOT_FOUND: cannot open module '{{.*}}missing.so': No such file or directory
with open(f"{out}/not-a-module.so", "w") as f:
    f.write("text\n")
expect_error(nnc.Error, lambda: nnc.Module(f"{out}/not-a-module.so"), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: cannot load module '{{.*}}not-a-module.so': {{.*}}
module = nnc.Module(library)
expect_error(nnc.Error, lambda: module.function("predict"), StatusCode.NOT_FOUND)
# CHECK: Error NOT_FOUND: module '{{.*}}mlp.so' has no function 'predict' (functions: 'main')
expect_error(nnc.Error, lambda: nnc.Session(module, function="predict"), StatusCode.NOT_FOUND)
# CHECK: Error NOT_FOUND: module '{{.*}}mlp.so' has no function 'predict' (functions: 'main')

# Devices: an unknown one, and a CUDA device for a CPU module.
expect_error(nnc.Error, lambda: nnc.Session(module, device="tpu"), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: unknown device 'tpu' (devices: 'cpu', 'cuda', 'cuda:<ordinal>', 'cuda-emulated')
expect_error(nnc.Error, lambda: nnc.Session(module, device="cuda-emulated"), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: module '{{.*}}mlp.so' was compiled for target 'cpu' and cannot run on device 'cuda-emulated'

# Inputs: shape, count, names, conversions.
session = nnc.Session(module)
x = np.ones((4, 3), np.float32)
expect_error(nnc.Error, lambda: session.run([np.ones((3, 3), np.float32)]), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: input 'x': expected shape 4x3 (got 3x3)
expect_error(nnc.Error, lambda: session.run([np.ones(12, np.float32)]), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: input 'x': expected shape 4x3 (got 12)
expect_error(nnc.Error, lambda: session.run([x, x]), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: function 'main' takes 1 input (got 2)
expect_error(nnc.Error, lambda: session.run([]), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: function 'main' takes 1 input (got 0)
expect_error(nnc.Error, lambda: session.run({"z": x}), StatusCode.NOT_FOUND)
# CHECK: Error NOT_FOUND: function 'main' has no input 'z' (inputs: 'x')
expect_error(nnc.Error, lambda: session.run({}), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: function 'main': input 'x' not given
expect_error(nnc.Error, lambda: session.run([x.astype(np.complex64)]), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: input 'x': cannot convert an array of complex64 to f32

# Outputs given by the caller must be written in place as they are.
expect_error(nnc.Error, lambda: session.run([x], outputs=[np.zeros((4, 2), np.float64)]),
             StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: output 'y': expected dtype f32 (got f64)
expect_error(nnc.Error, lambda: session.run([x], outputs=[np.zeros((2, 4), np.float32)]),
             StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: output 'y': expected shape 4x2 (got 2x4)
expect_error(nnc.Error, lambda: session.run([x], outputs=[np.zeros((4, 4), np.float32)[:, ::2]]),
             StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: output 'y': the array must be C-contiguous
read_only = np.zeros((4, 2), np.float32)
read_only.flags.writeable = False
expect_error(nnc.Error, lambda: session.run([x], outputs=[read_only]), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: output 'y': the array is read-only
expect_error(nnc.Error, lambda: session.run([x], outputs=[[[0.0] * 2] * 4]), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: output 'y': expected a numpy array (got list)
expect_error(nnc.Error, lambda: session.run([x], outputs=[None, None]), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: function 'main' takes 1 output (got 2)
expect_error(nnc.Error, lambda: session.run([x], outputs={"out": None}), StatusCode.NOT_FOUND)
# CHECK: Error NOT_FOUND: function 'main' has no output 'out' (outputs: 'y')
# An output over an input's memory: the runtime refuses to run.
memory = np.zeros(12, np.float32)
expect_error(nnc.Error, lambda: session.run([memory.reshape(4, 3)], outputs=[memory[:8].reshape(4, 2)]),
             StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: output 'y''s buffer overlaps input 'x''s

# After all that, the session runs.
expect_close(session.run([x])[0], mlp_forward(params, x)[0], "a run after errors", rtol=1e-5, atol=1e-5)

# An integer input takes integers, never truncated floats.
with open(f"{out}/cast.onnxtext", "w") as f:
    f.write("""<ir_version: 8, opset_import: ["" : 17]>
cast (int64[3] i) => (float[3] y)
{
  y = Cast <to = 1> (i)
}
""")
cast = nnc.Session(nnc.compile(f"{out}/cast.onnxtext", f"{out}/cast.so"))
expect_close(cast.run([[1, -2, 3]])[0], [1, -2, 3], "int list into int64")
expect_close(cast.run([np.array([7, 8, 9], np.uint8)])[0], [7, 8, 9], "uint8 into int64")
expect_error(nnc.Error, lambda: cast.run([[1.5, 2.0, 3.0]]), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: input 'i': cannot convert an array of float64 to i64

# Narrowing conversions must keep every value: no wrapped integers, no floats
# overflowing to infinity (float64 rounding to float32 is fine).
with open(f"{out}/narrow.onnxtext", "w") as f:
    f.write("""<ir_version: 8, opset_import: ["" : 17]>
narrow (int32[2] a, uint8[2] b, float[2] f) => (float[2] y)
{
  af = Cast <to = 1> (a)
  bf = Cast <to = 1> (b)
  s = Add (af, bf)
  y = Add (s, f)
}
""")
narrow = nnc.Session(nnc.compile(f"{out}/narrow.onnxtext", f"{out}/narrow.so"))
expect_close(narrow.run({"a": [5, -6], "b": [250, 3], "f": np.array([0.1, 1e30])})[0],
             [255.1, 1e30 - 3], "in-range narrowing", rtol=1e-6)
expect_error(nnc.Error, lambda: narrow.run({"a": [2**40 + 7, 1], "b": [1, 2], "f": [0, 0]}),
             StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: input 'a': values 1..1099511627783 do not fit in int32 (-2147483648..2147483647)
expect_error(nnc.Error, lambda: narrow.run({"a": [1, 2], "b": [-1, 256], "f": [0, 0]}),
             StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: input 'b': values -1..256 do not fit in uint8 (0..255)
expect_error(nnc.Error, lambda: narrow.run({"a": [1, 2], "b": [1, 2], "f": [1e300, 1.0]}),
             StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: input 'f': 1 value(s) overflow float32 to infinity

# The compiler: a model it rejects names the node; a missing model or tool.
with open(f"{out}/unsupported.onnxtext", "w") as f:
    f.write("""<ir_version: 8, opset_import: ["" : 17, "com.example" : 1]>
unsupported (float[2] x) => (float[2] y)
{
  z = Relu (x)
  y = com.example.Frob <alias = "frobnicator"> (z)
}
""")
error = expect_error(nnc.CompileError, lambda: nnc.compile(f"{out}/unsupported.onnxtext", f"{out}/u.so"))
# CHECK: CompileError INVALID_ARGUMENT: nnc failed on '{{.*}}unsupported.onnxtext' (exit code 1):
# CHECK-NEXT: unsupported.onnxtext: node '#1': error: unsupported op 'Frob' (domain 'com.example', opset 1)
expect(isinstance(error, nnc.Error), "CompileError is not an nnc.Error")
expect(error.returncode == 1 and "Frob" in error.stderr, f"returncode {error.returncode}, stderr {error.stderr!r}")
expect(not os.path.exists(f"{out}/u.so"), "a failed compile left a library")
expect_error(nnc.CompileError, lambda: nnc.compile(f"{out}/absent.onnx", f"{out}/a.so"))
# CHECK: CompileError INVALID_ARGUMENT: nnc failed on '{{.*}}absent.onnx'{{.*}}
# CHECK-NEXT: absent.onnx: error: cannot read model file: No such file or directory
expect_error(nnc.CompileError, lambda: nnc.compile(f"{out}/mlp.onnxtext", nnc=f"{out}/no-such-nnc"),
             StatusCode.NOT_FOUND)
# CHECK: CompileError NOT_FOUND: cannot run {{.*}}no-such-nnc{{.*}}
expect_error(nnc.CompileError, lambda: nnc.compile(f"{out}/mlp.onnxtext", f"{out}/b.so", no_such_flag=3))
# CHECK: CompileError INVALID_ARGUMENT: nnc failed on '{{.*}}mlp.onnxtext' (exit code 1):
# CHECK-NEXT: nnc: Unknown command line argument '--no-such-flag=3'.
print("PASS")
# CHECK: PASS
