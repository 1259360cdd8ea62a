"""What the case scripts of this directory share: writing an ONNX test data
set for nnc-run --test-data, and the message of a tool's first error line."""
import os

from onnx import numpy_helper


def write_test_data(directory, feeds, expected):
    """feeds, expected: [(name, array)] in input and output order."""
    os.makedirs(directory, exist_ok=True)
    for kind, arrays in (("input", feeds), ("output", expected)):
        for i, (name, value) in enumerate(arrays):
            with open(os.path.join(directory, f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(value, name).SerializeToString())
    return directory


def first_error(text):
    """The first 'error:' line of `text`, without the file name before it."""
    lines = [l for l in text.splitlines() if "error:" in l]
    return lines[0].split(": ", 1)[1] if lines else "no error line"
