"""Writes ONNX test data sets (input_<i>.pb, output_<i>.pb) for nnc-run's
tests against the hand-written module modules/test_module.c.

usage: make_test_data.py OUT_DIR

Each subdirectory of OUT_DIR is one case; see nnc-run.test for what each
checks. Tensors use raw_data (numpy_helper.from_array) and the typed fields
(helper.make_tensor) so that both decoders are exercised.
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

A = np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5  # 0 .. 2.5
B = np.arange(6, dtype=np.float32).reshape(2, 3) + 1  # 1 .. 6


def write(directory, name, tensor):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(tensor if isinstance(tensor, bytes) else tensor.SerializeToString())


def typed(name, array, data_type):
    return helper.make_tensor(name, data_type, array.shape, array.flatten().tolist())


def main_case(out, case, a=A, b=B, c=None, skip=()):
    """A data set for function 'main' (c = a + b); `c` overrides the reference."""
    directory = os.path.join(out, case)
    files = {
        "input_0.pb": numpy_helper.from_array(a, "a"),
        "input_1.pb": typed("b", b, TensorProto.FLOAT),
        "output_0.pb": numpy_helper.from_array(a + b if c is None else c, "c"),
    }
    for name, tensor in files.items():
        if name not in skip:
            write(directory, name, tensor)
    return directory


def bf16_raw(name, values):
    bits = (np.array(values, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return helper.make_tensor(name, TensorProto.BFLOAT16, [len(values)], bits.tobytes(), raw=True)


def types_case(out, case, i64_reference):
    """Function 'types' (identity per dtype): inputs in typed fields, references
    in raw_data, so every dtype goes through both decoders."""
    directory = os.path.join(out, case)
    values = [
        ("f32", np.float32, TensorProto.FLOAT, [1.5, -2.25]),
        ("f64", np.float64, TensorProto.DOUBLE, [0.1, -3.5]),
        ("f16", np.float16, TensorProto.FLOAT16, [1.5, -0.25]),
        ("bf16", None, TensorProto.BFLOAT16, [1.5, -0.25]),
        ("i8", np.int8, TensorProto.INT8, [-7, 100]),
        ("i16", np.int16, TensorProto.INT16, [-300, 3000]),
        ("i32", np.int32, TensorProto.INT32, [-70000, 5]),
        ("i64", np.int64, TensorProto.INT64, [-(2**40), 2**53 + 1]),
        ("u8", np.uint8, TensorProto.UINT8, [0, 255]),
        ("u16", np.uint16, TensorProto.UINT16, [65535, 1]),
        ("u32", np.uint32, TensorProto.UINT32, [4000000000, 7]),
        ("u64", np.uint64, TensorProto.UINT64, [2**63 + 5, 1]),
        ("bool", np.bool_, TensorProto.BOOL, [True, False]),
    ]
    for i, (suffix, dtype, data_type, vals) in enumerate(values):
        if dtype is np.float16:
            inp = helper.make_tensor("in_" + suffix, data_type, [2], np.array(vals, dtype))
        else:
            inp = helper.make_tensor("in_" + suffix, data_type, [2], vals)
        write(directory, "input_%d.pb" % i, inp)
        if suffix == "i64":
            vals = i64_reference
        if dtype is None:
            ref = bf16_raw("out_" + suffix, vals)
        else:
            ref = numpy_helper.from_array(np.array(vals, dtype), "out_" + suffix)
        write(directory, "output_%d.pb" % i, ref)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    main_case(out, "good")
    main_case(out, "near", c=(A + B) * np.float32(1 + 1e-6))
    off = (A + B).copy()
    off[1, 2] += 0.01
    main_case(out, "off-by-0.01", c=off)
    # NaN and inf where both sides have them pass.
    special_a = A.copy()
    special_a[0, 0] = np.nan
    special_a[0, 1] = np.inf
    main_case(out, "nan-inf", a=special_a)
    nan_ref = (A + B).copy()
    nan_ref[1, 1] = np.nan
    main_case(out, "nan-mismatch", c=nan_ref)

    main_case(out, "wrong-dtype", a=A.astype(np.float64))
    main_case(out, "wrong-shape", b=B.reshape(3, 2), c=A + B)
    main_case(out, "wrong-reference", c=(A + B).reshape(6))
    main_case(out, "missing-output", skip=("output_0.pb",))
    main_case(out, "missing-input", skip=("input_1.pb",))
    extra = main_case(out, "extra-input")
    write(extra, "input_2.pb", numpy_helper.from_array(A, "z"))

    bad = main_case(out, "truncated")
    write(bad, "input_0.pb", b"\x0a\xff\xff\xff\x0f")  # dims: a length past the end
    bad = main_case(out, "raw-size")
    tensor = numpy_helper.from_array(A, "a")
    tensor.raw_data = tensor.raw_data[:20]
    write(bad, "input_0.pb", tensor)
    bad = main_case(out, "typed-count")
    tensor = typed("b", B, TensorProto.FLOAT)
    del tensor.float_data[5:]
    write(bad, "input_1.pb", tensor)
    bad = main_case(out, "string")
    write(bad, "input_0.pb", helper.make_tensor("a", TensorProto.STRING, [1], [b"text"]))
    # Strings are texts in string_data; raw_data cannot hold them.
    bad = main_case(out, "string-raw")
    tensor = helper.make_tensor("a", TensorProto.STRING, [2], [b"x", b"y"])
    del tensor.string_data[:]
    tensor.raw_data = bytes(16)
    write(bad, "input_0.pb", tensor)
    bad = main_case(out, "string-nul")
    write(bad, "input_0.pb", helper.make_tensor("a", TensorProto.STRING, [1], [b"a\0b"]))
    bad = main_case(out, "text")
    write(bad, "input_0.pb", b"not a tensor at all\n")

    scale = os.path.join(out, "scale")
    write(scale, "input_0.pb", numpy_helper.from_array(np.array([1, 2, 3, 4.5], np.float32), "x"))
    write(scale, "input_1.pb", numpy_helper.from_array(np.array(3, np.int32), "k"))
    write(scale, "output_0.pb", numpy_helper.from_array(np.array([3, 6, 9, 13.5], np.float32), "y"))
    write(scale, "output_1.pb", numpy_helper.from_array(np.array(31.5, np.float64), "total"))

    types_case(out, "types", [-(2**40), 2**53 + 1])
    # 2^53 + 1 and 2^53 are the same double: only an exact comparison sees this.
    types_case(out, "types-i64-off-by-one", [-(2**40), 2**53])


if __name__ == "__main__":
    main()
