"""Writing ONNX test data sets, as ONNX's backend tests lay them out:
DIR/input_<i>.pb and DIR/output_<i>.pb, one TensorProto each."""

import os

from onnx import numpy_helper


def write_set(directory, inputs, outputs=()):
    """numpy arrays as a test data set; no outputs for a set that must be refused."""
    os.makedirs(directory, exist_ok=True)
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for i, t in enumerate(tensors):
            with open(os.path.join(directory, f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(t).SerializeToString())
