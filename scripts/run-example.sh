#!/usr/bin/env bash
# Sets up the machine, builds nnc, and runs its main job on the shipped example
# model: import it and print its nn IR after the graph stage.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
"$BUILD_DIR/bin/nnc" examples/tiny_classifier.onnxtext --emit=nn
