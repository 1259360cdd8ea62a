#!/usr/bin/env bash
# Sets up the machine, builds nnc and runs the whole test suite (lit: dialect,
# frontend, lowering, runtime, end-to-end and ONNX conformance tests); exits
# non-zero on any failure and ends with one "N passed, M failed" line (and how
# many tests do not apply to this host).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
status=0
# The runtime alone, as an embedder builds it: no LLVM, MLIR or ONNX.
cmake -G Ninja -S . -B "$BUILD_DIR/runtime-only" -DNNC_BUILD_COMPILER=OFF -DCMAKE_BUILD_TYPE=Release > /dev/null
ninja -C "$BUILD_DIR/runtime-only" > /dev/null
(cd "$BUILD_DIR/runtime-only" && ctest --output-on-failure) || status=$?
/usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test" -o "$BUILD_DIR/lit-results.json" || status=$?
/usr/bin/python3 - "$BUILD_DIR/lit-results.json" <<'PY'
import json, sys
tests = json.load(open(sys.argv[1]))["tests"]
passed = sum(t["code"] in ("PASS", "XFAIL") for t in tests)
# UNSUPPORTED: the test does not apply to this host (foreign-cpu on AVX-512).
skipped = sum(t["code"] == "UNSUPPORTED" for t in tests)
print(f"{passed} passed, {len(tests) - passed - skipped} failed"
      + (f", {skipped} unsupported on this host" if skipped else ""))
PY
exit $status
