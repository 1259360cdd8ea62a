"""The nnc package as `cmake --install` lays it out (components python,
runtime and tools): importable from the prefix's site directory, its
extension loading the prefix's libnnc_runtime.so, and nnc.compile finding the
prefix's nnc with no $NNC and nothing on PATH.

    installed.py PREFIX OUT_DIR
"""

import glob
import os
import subprocess
import sys

prefix, out = (os.path.realpath(p) for p in sys.argv[1:3])
packages = glob.glob(f"{prefix}/lib*/python3*/*-packages/nnc/__init__.py")
if len(packages) != 1:
    sys.exit(f"FAIL: expected one installed package under {prefix}, found {packages}")
site = os.path.dirname(os.path.dirname(packages[0]))
print(f"package: {os.path.relpath(site, prefix)}/nnc")
# CHECK: package: lib{{.*}}/python3{{.*}}-packages/nnc

# A fresh interpreter that sees only the prefix: no build tree on its paths.
check = r"""
import os, sys
import numpy as np
import nnc
prefix, out = sys.argv[1:3]
assert nnc.__file__.startswith(prefix + "/"), nnc.__file__
with open("/proc/self/maps") as maps:
    runtimes = {line.split()[-1] for line in maps if "libnnc_runtime" in line}
assert runtimes and all(r.startswith(prefix + "/") for r in runtimes), runtimes
print("runtime:", os.path.relpath(runtimes.pop(), prefix))
with open(f"{out}/affine.onnxtext", "w") as f:
    f.write('''<ir_version: 8, opset_import: ["" : 17]>
affine (float[2,2] x) => (float[2,2] y)
<
  float[2,2] w = {1.5, -2.0, 0.25, 4.0},
  float[2] b = {0.5, -1.0}
>
{
  h = MatMul (x, w)
  y = Add (h, b)
}
''')
library = nnc.compile(f"{out}/affine.onnxtext")
x = np.array([[1.0, 2.0], [-3.0, 0.5]], np.float32)
want = x.astype(np.float64) @ np.array([[1.5, -2.0], [0.25, 4.0]]) + np.array([0.5, -1.0])
got = nnc.load(library)(x)
assert np.allclose(got, want, rtol=1e-6, atol=1e-6), (got, want)
print("compiled with", os.path.relpath(nnc._find_nnc(None), prefix), "and ran")
"""
env = {k: v for k, v in os.environ.items() if k not in ("NNC", "LD_LIBRARY_PATH", "PYTHONHOME")}
env.update(PYTHONPATH=site, PATH="/usr/bin:/bin")
result = subprocess.run([sys.executable, "-c", check, prefix, out], env=env, cwd=out,
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
print(result.stdout, end="")
# CHECK: runtime: lib{{.*}}/libnnc_runtime.so
# CHECK: compiled with bin/nnc and ran
if result.returncode != 0:
    sys.exit(f"FAIL: the installed package failed (exit code {result.returncode})")
print("PASS")
# CHECK: PASS
