#!/usr/bin/env bash
# Sets up the machine, builds nnc, then does its main job on the shipped
# example model: compile it to a shared library and run it through the runtime,
# printing its output and latency.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
"$BUILD_DIR/bin/nnc" examples/tiny_classifier.onnxtext --dim N=1 -o "$BUILD_DIR/tiny_classifier.so"
echo "compiled examples/tiny_classifier.onnxtext to $BUILD_DIR/tiny_classifier.so"
"$BUILD_DIR/bin/nnc-run" "$BUILD_DIR/tiny_classifier.so" --print-outputs --bench 1000
