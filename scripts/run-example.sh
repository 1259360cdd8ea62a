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

# Training: an MLP learns a synthetic 4-class task (docs/training.md). nnc
# derives the training functions, nnc-run trains it for 60 steps (one loss line
# each), the trained weights go back into an ONNX model, and that model,
# compiled for inference, classifies unseen points.
EX="$BUILD_DIR/train_mlp"
/usr/bin/python3 examples/train_mlp.py make "$EX"
"$BUILD_DIR/bin/nnc" "$EX/mlp.onnx" --train --loss=cross-entropy --optimizer=adamw --lr=0.02 -o "$EX/train.so"
"$BUILD_DIR/bin/nnc-run" "$EX/train.so" --train "$EX/train" --steps 60 --save-checkpoint "$EX/mlp.ckpt"
"$BUILD_DIR/bin/nnc" "$EX/mlp.onnx" --emit=onnx --checkpoint="$EX/mlp.ckpt" -o "$EX/trained.onnx"
"$BUILD_DIR/bin/nnc" "$EX/trained.onnx" -o "$EX/trained.so"
mkdir -p "$EX/out"
"$BUILD_DIR/bin/nnc-run" "$EX/trained.so" --inputs "$EX/test/input_0.pb" --save-outputs "$EX/out"
/usr/bin/python3 examples/train_mlp.py check "$EX" "$EX/mlp.ckpt" "$EX/out/output_0.pb"
