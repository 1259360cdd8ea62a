"""String tensors through the Python package (docs/strings.md, docs/python.md):
a StringNormalizer and a Cast to text compiled with nnc.compile, run with
arrays of str and bytes, against Python's own str.upper and numpy's str();
what the package refuses, it says."""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

import nnc
from nnc import StatusCode

out = sys.argv[1]


def expect(condition, what):
    if not condition:
        print(f"FAIL: {what}")
        sys.exit(1)


nodes = [helper.make_node("StringNormalizer", ["words"], ["kept"], case_change_action="UPPER",
                          stopwords=["the"]),
         helper.make_node("Cast", ["x"], ["text"], to=TensorProto.STRING)]
graph = helper.make_graph(
    nodes, "strings",
    [helper.make_tensor_value_info("words", TensorProto.STRING, ["n"]),
     helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
    [helper.make_tensor_value_info("kept", TensorProto.STRING, None),
     helper.make_tensor_value_info("text", TensorProto.STRING, [2, 2])])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(out, "strings.onnx"))
session = nnc.load(nnc.compile(os.path.join(out, "strings.onnx")))
print("inputs:", [(i.name, i.dtype_name, i.dtype) for i in session.function.inputs])
# CHECK: inputs: [('words', 'string', dtype('O')), ('x', 'f32', dtype('float32'))]

x = np.array([[0.5, 1e-5], [np.nan, -2.0]], np.float32)
for words in (np.array(["the", "été", "Σοφία", "THE"]), ["the", "été", "Σοφία", "THE"],
              np.array([b"the", "été".encode(), "Σοφία".encode(), b"THE"], dtype=object)):
    kept, text = session(words, x)
    expect(kept.dtype == object and kept.tolist() == ["ÉTÉ", "ΣΟΦΊΑ"], f"kept {kept!r}")
    expect(text.shape == (2, 2) and text.tolist() == [[str(v) for v in row] for row in x],
           f"text {text!r}")
print("kept:", kept.tolist(), "text:", text.tolist())
# CHECK: kept: ['ÉTÉ', 'ΣΟΦΊΑ'] text: {{\[\[}}'0.5', '1e-05'], ['nan', '-2.0']]

# A fresh array each run, of the run's length.
kept, _ = session(np.array(["the", "the"]), x)
print("all stopwords:", kept.tolist())
# CHECK: all stopwords: ['']


def expect_error(call, code):
    try:
        call()
    except nnc.Error as error:
        expect(error.code == code, f"code {error.code} for {error}")
        print(f"Error {code.name}: {error}")
        return
    print("FAIL: no error")
    sys.exit(1)


expect_error(lambda: session([1, 2], x), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: input 'words': element 0 is a int, not a str or bytes
expect_error(lambda: session(["a\0b"], x), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: input 'words': element 0 holds a NUL character, which a C string cannot
expect_error(lambda: session(["caf\udce9"], x), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: input 'words': element 0 is not valid Unicode (a lone surrogate): it has no UTF-8 form
expect_error(lambda: session.run([["a"], x], [None, np.empty((2, 2), object)]),
             StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: output 'text': a string output comes back as a new array (pass None for it)
# Text the runtime cannot read fails the run, naming it.
expect_error(lambda: session([b"\x80bad"], x), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: function 'main' of module '{{.*}}strings.so': cannot compare '\x80bad' with stopwords: invalid UTF-8
