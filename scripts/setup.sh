#!/usr/bin/env bash
# Installs every Debian package nnc's build, tests and model generator need.
# Idempotent: when everything is present it only checks and returns in about a second.
set -euo pipefail

PACKAGES=(
  cmake ninja-build ccache g++ git
  # pkg-config, for the install test (test/Install/).
  pkgconf
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 lld-22
  # The sanitizer and libFuzzer runtimes for clang (docs/robustness.md).
  libclang-rt-22-dev
  libonnx-dev protobuf-compiler libprotobuf-dev libonnx-testdata
  python3 python3-torch python3-onnx python3-numpy
  # torchvision's classifiers for the wide bench (bench/gen_models.py --set wide).
  python3-torchvision
  # The Python package (python/, docs/python.md): pybind11 and Python's headers.
  pybind11-dev python3-dev
  libtcmalloc-minimal4
  # PyTorch's BLAS: without it Debian's reference BLAS serves, some 30x
  # slower, and the training bench's peer would be a strawman.
  libopenblas0-pthread
)

missing=()
for p in "${PACKAGES[@]}"; do
  # dpkg-query prints "install ok installed" only for fully installed packages.
  if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "setup: done"
