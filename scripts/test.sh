#!/usr/bin/env bash
# Sets up the machine, builds nnc and runs the whole test suite (lit: dialect,
# frontend, lowering, runtime, end-to-end and ONNX conformance tests; the
# runtime under ASan, UBSan and TSan; a bounded run of the fuzz targets); exits
# non-zero on any failure and ends with one "N passed, M failed" line (and how
# many tests do not apply to this host).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
status=0
# The runtime alone, as an embedder builds it: no LLVM, MLIR or ONNX.
cmake -G Ninja -S . -B "$BUILD_DIR/runtime-only" -DNNC_BUILD_COMPILER=OFF -DNNC_BUILD_PYTHON=OFF \
  -DCMAKE_BUILD_TYPE=Release > /dev/null
ninja -C "$BUILD_DIR/runtime-only" > /dev/null
(cd "$BUILD_DIR/runtime-only" && ctest --output-on-failure) || status=$?
# The runtime again under ASan+UBSan (LeakSanitizer included) and under TSan,
# with clang: its unit tests, the stress test and the embedding examples.
# Allocation failures are statuses the runtime reports, not sanitizer findings.
for sanitizer in address,undefined thread; do
  dir="$BUILD_DIR/runtime-${sanitizer%%,*}"
  if [ ! -f "$dir/build.ninja" ]; then
    CC=clang-22 CXX=clang++-22 cmake -G Ninja -S . -B "$dir" -DNNC_BUILD_COMPILER=OFF -DNNC_BUILD_PYTHON=OFF \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O1 -gline-tables-only -DNDEBUG" \
      -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only -DNDEBUG" -DNNC_SANITIZE="$sanitizer" > /dev/null
  fi
  ninja -C "$dir" > /dev/null
  (cd "$dir" && ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 \
    TSAN_OPTIONS=allocator_may_return_null=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure) || status=$?
done
/usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test" -o "$BUILD_DIR/lit-results.json" || status=$?
# A bounded run of each fuzz target (a minute each), after lit has made the
# bench models its seeds come from.
BENCH_MODELS="$BUILD_DIR/models/opset17" ./scripts/fuzz.sh || status=$?
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
