#!/usr/bin/python3
"""Writes the fuzz targets' seed corpora (scripts/fuzz.sh runs it).

    make_corpus.py --out DIR --bench BENCH_MODELS_DIR

DIR/model:  ONNX's backend node-test models, the text-format models of the
            frontend's lit tests, and the bench models (bench/gen_models.py's
            layout under BENCH_MODELS_DIR) with their large initializers
            turned into graph inputs, so that each seed stays small enough
            to mutate quickly.
DIR/tensor: the node tests' and bench models' test-data tensors (.pb).
The descriptor and bind targets start from their built-in valid case (the
empty input) and need no files.
"""

import argparse
import hashlib
import re
from pathlib import Path

import onnx

NODE_TESTS = Path("/usr/share/libonnx-testdata/data/node")
FRONTEND_TESTS = Path(__file__).resolve().parent.parent / "Frontend" / "ONNX"
MAX_SEED_BYTES = 64 * 1024


def write(folder, data):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def text_models():
    """The .onnxtext models of the frontend tests: whole files, or the
    `#--- name.onnxtext` sections of split-file tests."""
    for path in sorted(FRONTEND_TESTS.glob("**/*.onnxtext")):
        text = path.read_text()
        parts = re.split(r"^#--- .*$", text, flags=re.M)
        for part in parts[1:] if len(parts) > 1 else parts:
            # Text models start with their header; drop the lit comments before it.
            start = part.find("<")
            if start >= 0:
                yield part[start:].encode()


def weightless(model):
    """The model with initializers over 1 KiB as graph inputs instead."""
    graph = model.graph
    keep = []
    for init in graph.initializer:
        if len(init.SerializeToString()) > 1024:
            graph.input.append(onnx.helper.make_tensor_value_info(
                init.name, init.data_type, list(init.dims)))
        else:
            keep.append(init)
    del graph.initializer[:]
    graph.initializer.extend(keep)
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--bench", required=True, type=Path)
    args = parser.parse_args()
    models, tensors = args.out / "model", args.out / "tensor"

    for path in sorted(NODE_TESTS.glob("*/model.onnx")):
        write(models, path.read_bytes())
        for pb in sorted(path.parent.glob("test_data_set_*/*.pb")):
            data = pb.read_bytes()
            if len(data) <= MAX_SEED_BYTES:
                write(tensors, data)
    for data in text_models():
        write(models, data)
    for path in sorted(args.bench.glob("*/model.onnx")):
        write(models, weightless(onnx.load(str(path))).SerializeToString())
        for pb in sorted(path.parent.glob("test_data_set_*/*.pb")):
            data = pb.read_bytes()
            if len(data) <= MAX_SEED_BYTES:
                write(tensors, data)
    for kind in (models, tensors):
        print(f"{kind.name}: {sum(1 for _ in kind.iterdir())} seeds")


if __name__ == "__main__":
    main()
