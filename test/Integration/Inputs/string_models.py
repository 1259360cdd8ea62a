#!/usr/bin/python3
"""String tensors: models with StringNormalizer, Cast to and from text and
ops that move strings, with references from Python itself (str.lower and
str.upper, NumPy's str() of a number, float()), never from nnc.

Usage: string_models.py --out DIR. Writes DIR/<model>/model.onnx and one
test-data folder per case: DIR/<model>/<case>/input_N.pb, output_N.pb.
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = [helper.make_opsetid("", 17)]


def text(values, shape=None):
    array = np.array(values, dtype=object)
    return array.reshape(shape) if shape is not None else array


def write_set(directory, inputs, outputs):
    os.makedirs(directory, exist_ok=True)
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for i, t in enumerate(tensors):
            proto = numpy_helper.from_array(np.asarray(t))
            with open(os.path.join(directory, f"{kind}_{i}.pb"), "wb") as f:
                f.write(proto.SerializeToString())


def save(out, name, nodes, inputs, outputs):
    graph = helper.make_graph(nodes, name, inputs, outputs)
    model = helper.make_model(graph, opset_imports=OPSET)
    os.makedirs(os.path.join(out, name), exist_ok=True)
    onnx.save(model, os.path.join(out, name, "model.onnx"))


def normalize(words, stopwords, sensitive, action):
    """ONNX's StringNormalizer on a list, by Python's own case mappings."""
    fold = (lambda s: s) if sensitive else str.lower
    kept = [w for w in words if fold(w) not in {fold(s) for s in stopwords}]
    change = {"LOWER": str.lower, "UPPER": str.upper, "NONE": lambda s: s}[action]
    kept = [change(w) for w in kept]
    return kept if kept else [""]


# Letters whose full case mapping (Python's) is one code point, the simple
# mapping the runtime applies: Latin-1, Latin Extended-A, Greek, Cyrillic,
# and an astral letter (Deseret).
WORDS = ["Monday", "été", "ÉTÉ", "Ünïcode", "straße", "Σοφία", "МОСКВА", "𐐀𐐨", "plain", ""]


def string_normalizer(out):
    stopwords = ["monday", "ÉTÉ"]
    for action in ("LOWER", "UPPER", "NONE"):
        for sensitive in (0, 1):
            name = f"normalize_{action.lower()}_{'sensitive' if sensitive else 'insensitive'}"
            node = helper.make_node("StringNormalizer", ["x"], ["y"], case_change_action=action,
                                    is_case_sensitive=sensitive, stopwords=stopwords,
                                    locale="en_US")
            save(out, name, [node], [helper.make_tensor_value_info("x", TensorProto.STRING, ["n"])],
                 [helper.make_tensor_value_info("y", TensorProto.STRING, None)])
            # "straße".upper() is "STRASSE" in Python (a full mapping); the
            # simple mapping keeps ß, as ONNX Runtime does: left out of UPPER.
            words = [w for w in WORDS if not (action == "UPPER" and "ß" in w)]
            write_set(os.path.join(out, name, "words"), [text(words)],
                      [text(normalize(words, stopwords, sensitive, action))])
            write_set(os.path.join(out, name, "all_stopwords"), [text(["MONDAY", "monday"])],
                      [text(normalize(["MONDAY", "monday"], stopwords, sensitive, action))])
            write_set(os.path.join(out, name, "none"), [text([])],
                      [text(normalize([], stopwords, sensitive, action))])
    # [1, C], no stopwords.
    node = helper.make_node("StringNormalizer", ["x"], ["y"], case_change_action="UPPER")
    save(out, "normalize_2d", [node],
         [helper.make_tensor_value_info("x", TensorProto.STRING, [1, "n"])],
         [helper.make_tensor_value_info("y", TensorProto.STRING, None)])
    words = ["a", "Bé", "ωμέγα"]
    write_set(os.path.join(out, "normalize_2d", "words"), [text(words, (1, 3))],
              [text([w.upper() for w in words], (1, 3))])
    # Invalid UTF-8 (a lone continuation byte) fails the run.
    write_set(os.path.join(out, "normalize_2d", "invalid"),
              [np.array([b"ok", b"\x80bad"], dtype=object).reshape(1, 2)],
              [text(["OK", "?"], (1, 2))])


F32 = np.array([0.5, -0.0, 1e-5, 1e-4, 0.0001234, 123456789.0, 1e16, 3.4028235e38, 1.4e-45,
                np.nan, np.inf, -np.inf, 0.1, 2.0 / 3], dtype=np.float32)
F64 = np.array([0.1, 1e-300, 2.0 / 3, 1e16, 123456.0, -np.inf, 5e-324], dtype=np.float64)
I64 = np.array([0, -1, 2**63 - 1, -(2**63), 42], dtype=np.int64)
U8 = np.array([0, 7, 255], dtype=np.uint8)


def casts(out):
    for name, values, dtype in (("f32", F32, TensorProto.FLOAT), ("f64", F64, TensorProto.DOUBLE),
                                ("i64", I64, TensorProto.INT64), ("u8", U8, TensorProto.UINT8)):
        model = f"cast_{name}"
        nodes = [helper.make_node("Cast", ["x"], ["s"], to=TensorProto.STRING),
                 helper.make_node("Cast", ["s"], ["back"], to=dtype)]
        save(out, model, nodes, [helper.make_tensor_value_info("x", dtype, ["n"])],
             [helper.make_tensor_value_info("s", TensorProto.STRING, ["n"]),
              helper.make_tensor_value_info("back", dtype, ["n"])])
        write_set(os.path.join(out, model, "values"), [values],
                  [text([str(v) for v in values]), values])
    # A scalar, and the dims of a string tensor (Shape).
    nodes = [helper.make_node("Cast", ["x"], ["s"], to=TensorProto.STRING),
             helper.make_node("Cast", ["s"], ["back"], to=TensorProto.FLOAT),
             helper.make_node("Shape", ["words"], ["dims"])]
    save(out, "cast_scalar", nodes,
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, []),
          helper.make_tensor_value_info("words", TensorProto.STRING, ["n", 2])],
         [helper.make_tensor_value_info("s", TensorProto.STRING, []),
          helper.make_tensor_value_info("back", TensorProto.FLOAT, []),
          helper.make_tensor_value_info("dims", TensorProto.INT64, [2])])
    x = np.array(-2.5e-7, np.float32)
    write_set(os.path.join(out, "cast_scalar", "set"), [x, text(["a", "b", "c", "d", "e", "f"], (3, 2))],
              [np.array(str(x), dtype=object), x, np.array([3, 2], np.int64)])
    # Text as people write it, to numbers.
    nodes = [helper.make_node("Cast", ["s"], ["x"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["s"], ["d"], to=TensorProto.DOUBLE)]
    save(out, "parse", nodes, [helper.make_tensor_value_info("s", TensorProto.STRING, ["n"])],
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"]),
          helper.make_tensor_value_info("d", TensorProto.DOUBLE, ["n"])])
    words = ["3.14", " 1E8 ", "+INF", "-inf", "NaN", "1e-5", "-0", "0.1", "1e39", "7"]
    with np.errstate(over="ignore"):  # 1e39 is an f32 infinity
        as_f32 = np.array([float(w) for w in words], dtype=np.float32)
    write_set(os.path.join(out, "parse", "words"), [text(words)],
              [as_f32, np.array([float(w) for w in words], dtype=np.float64)])
    write_set(os.path.join(out, "parse", "not_a_number"), [text(["1.5", "abc"])],
              [np.zeros(2, np.float32), np.zeros(2, np.float64)])
    nodes = [helper.make_node("Cast", ["s"], ["i"], to=TensorProto.INT8)]
    save(out, "parse_i8", nodes, [helper.make_tensor_value_info("s", TensorProto.STRING, [2])],
         [helper.make_tensor_value_info("i", TensorProto.INT8, [2])])
    write_set(os.path.join(out, "parse_i8", "range"), [text(["-128", "128"])],
              [np.zeros(2, np.int8)])


def movement(out):
    """Strings moved by Transpose, Reshape, Slice, Gather, Concat, Where,
    then upper-cased: the texts arrive where numpy puts them."""
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
        helper.make_node("Reshape", ["t", "flat"], ["r"]),
        helper.make_node("Slice", ["r", "starts", "ends"], ["s"]),
        helper.make_node("Gather", ["s", "picks"], ["g"], axis=0),
        helper.make_node("Concat", ["g", "r"], ["c"], axis=0),
        helper.make_node("Slice", ["c", "rev_starts", "rev_ends", "axes", "rev_steps"], ["c_rev"]),
        helper.make_node("Where", ["mask", "c", "c_rev"], ["w"]),
        helper.make_node("StringNormalizer", ["w"], ["y"], case_change_action="UPPER"),
    ]
    inits = [numpy_helper.from_array(np.array([-1], np.int64), "flat"),
             numpy_helper.from_array(np.array([1], np.int64), "starts"),
             numpy_helper.from_array(np.array([5], np.int64), "ends"),
             numpy_helper.from_array(np.array([3, 0, 0], np.int64), "picks"),
             numpy_helper.from_array(np.array([-1], np.int64), "rev_starts"),
             numpy_helper.from_array(np.array([-100], np.int64), "rev_ends"),
             numpy_helper.from_array(np.array([0], np.int64), "axes"),
             numpy_helper.from_array(np.array([-1], np.int64), "rev_steps")]
    graph = helper.make_graph(
        nodes, "movement",
        [helper.make_tensor_value_info("x", TensorProto.STRING, [2, 3]),
         helper.make_tensor_value_info("mask", TensorProto.BOOL, [9])],
        [helper.make_tensor_value_info("y", TensorProto.STRING, None)], inits)
    os.makedirs(os.path.join(out, "movement"), exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=OPSET),
              os.path.join(out, "movement", "model.onnx"))
    x = text(["a", "b", "c", "d", "e", "f"], (2, 3))
    r = x.T.reshape(-1)
    c = np.concatenate([r[1:5][[3, 0, 0]], r])
    mask = np.array([i % 2 == 0 for i in range(9)])
    w = np.where(mask, c, c[::-1])
    write_set(os.path.join(out, "movement", "set"), [x, mask],
              [text([s.upper() for s in w])])


def movement_more(out):
    """Strings through Unsqueeze, Expand, Tile, Flatten, Split, GatherND,
    Squeeze and Identity."""
    nodes = [
        helper.make_node("Unsqueeze", ["x", "zero"], ["u"]),
        helper.make_node("Expand", ["u", "expand_to"], ["e"]),
        helper.make_node("Tile", ["e", "repeats"], ["t"]),
        helper.make_node("Flatten", ["t"], ["f"], axis=1),
        helper.make_node("Split", ["f", "parts"], ["a", "b"], axis=1),
        helper.make_node("GatherND", ["a", "picks"], ["g"]),
        helper.make_node("Unsqueeze", ["g", "zero"], ["g1"]),
        helper.make_node("Squeeze", ["g1", "zero"], ["y"]),
        helper.make_node("Identity", ["b"], ["z"]),
    ]
    inits = [numpy_helper.from_array(np.array([0], np.int64), "zero"),
             numpy_helper.from_array(np.array([2, 2, 3], np.int64), "expand_to"),
             numpy_helper.from_array(np.array([1, 1, 2], np.int64), "repeats"),
             numpy_helper.from_array(np.array([5, 7], np.int64), "parts"),
             numpy_helper.from_array(np.array([[0, 1], [1, 4]], np.int64), "picks")]
    graph = helper.make_graph(
        nodes, "movement_more", [helper.make_tensor_value_info("x", TensorProto.STRING, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.STRING, None),
         helper.make_tensor_value_info("z", TensorProto.STRING, None)], inits)
    os.makedirs(os.path.join(out, "movement_more"), exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=OPSET),
              os.path.join(out, "movement_more", "model.onnx"))
    x = text(["é", "b", "c", "d", "", "f"], (2, 3))
    f = np.tile(np.broadcast_to(x[None], (2, 2, 3)), (1, 1, 2)).reshape(2, 12)
    a, b = f[:, :5], f[:, 5:]
    write_set(os.path.join(out, "movement_more", "set"), [x], [text([a[0, 1], a[1, 4]]), b])


def movement_other(out):
    """Strings through the other ops that may take them: OneHot's values,
    DepthToSpace, a sequence built and concatenated, Dropout at inference,
    and an If on a condition given at run time."""
    then_branch = helper.make_graph(
        [helper.make_node("Identity", ["w"], ["picked"])], "then", [],
        [helper.make_tensor_value_info("picked", TensorProto.STRING, [4])])
    else_branch = helper.make_graph(
        [helper.make_node("Slice", ["w", "rev_starts", "rev_ends", "axes", "rev_steps"], ["picked"])],
        "else", [], [helper.make_tensor_value_info("picked", TensorProto.STRING, [4])])
    nodes = [
        helper.make_node("OneHot", ["hot", "depth", "values"], ["o"], axis=-1),
        helper.make_node("DepthToSpace", ["d"], ["ds"], blocksize=2),
        helper.make_node("SequenceConstruct", ["w", "w"], ["seq"]),
        helper.make_node("ConcatFromSequence", ["seq"], ["cat"], axis=0),
        helper.make_node("Dropout", ["cat"], ["kept"]),
        helper.make_node("If", ["cond"], ["chosen"], then_branch=then_branch, else_branch=else_branch),
    ]
    inits = [numpy_helper.from_array(np.array(3, np.int64), "depth"),
             numpy_helper.from_array(np.array([-1], np.int64), "rev_starts"),
             numpy_helper.from_array(np.array([-100], np.int64), "rev_ends"),
             numpy_helper.from_array(np.array([0], np.int64), "axes"),
             numpy_helper.from_array(np.array([-1], np.int64), "rev_steps")]
    graph = helper.make_graph(
        nodes, "movement_other",
        [helper.make_tensor_value_info("hot", TensorProto.INT64, [2]),
         helper.make_tensor_value_info("values", TensorProto.STRING, [2]),
         helper.make_tensor_value_info("d", TensorProto.STRING, [1, 4, 1, 1]),
         helper.make_tensor_value_info("w", TensorProto.STRING, [4]),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("o", TensorProto.STRING, [2, 3]),
         helper.make_tensor_value_info("ds", TensorProto.STRING, [1, 1, 2, 2]),
         helper.make_tensor_value_info("kept", TensorProto.STRING, [8]),
         helper.make_tensor_value_info("chosen", TensorProto.STRING, [4])], inits)
    os.makedirs(os.path.join(out, "movement_other"), exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=OPSET),
              os.path.join(out, "movement_other", "model.onnx"))
    hot, values = np.array([2, 0], np.int64), text(["off", "ön"])
    d, w = text(["a", "b", "c", "d"], (1, 4, 1, 1)), text(["w", "x", "y", "ζ"])
    o = np.where(np.arange(3)[None, :] == hot[:, None], values[1], values[0]).astype(object)
    ds = d.reshape(1, 2, 2, 1, 1).transpose(0, 3, 4, 1, 2).reshape(1, 1, 2, 2)
    for cond in (True, False):
        write_set(os.path.join(out, "movement_other", "then" if cond else "else"),
                  [hot, values, d, w, np.array(cond)],
                  [o, ds, np.concatenate([w, w]), w if cond else w[::-1]])


def refused(out):
    # Strings compared by an op that would compare their addresses.
    nodes = [helper.make_node("Equal", ["a", "b"], ["y"])]
    save(out, "equal", nodes, [helper.make_tensor_value_info("a", TensorProto.STRING, [2]),
                               helper.make_tensor_value_info("b", TensorProto.STRING, [2])],
         [helper.make_tensor_value_info("y", TensorProto.BOOL, [2])])
    node = helper.make_node("StringNormalizer", ["x"], ["y"], locale="tr_TR")
    save(out, "turkish", [node], [helper.make_tensor_value_info("x", TensorProto.STRING, [2])],
         [helper.make_tensor_value_info("y", TensorProto.STRING, None)])
    node = helper.make_node("Cast", ["x"], ["y"], to=TensorProto.STRING)
    save(out, "bool_text", [node], [helper.make_tensor_value_info("x", TensorProto.BOOL, [2])],
         [helper.make_tensor_value_info("y", TensorProto.STRING, [2])])
    node = helper.make_node("StringNormalizer", ["x"], ["y"], locale="TR.UTF-8")
    save(out, "turkish_upper", [node], [helper.make_tensor_value_info("x", TensorProto.STRING, [2])],
         [helper.make_tensor_value_info("y", TensorProto.STRING, None)])
    node = helper.make_node("StringNormalizer", ["x"], ["y"], stopwords=[b"\xff\xfe"])
    save(out, "stopword_utf8", [node], [helper.make_tensor_value_info("x", TensorProto.STRING, [2])],
         [helper.make_tensor_value_info("y", TensorProto.STRING, None)])
    node = helper.make_node("Identity", ["x"], ["y"])
    save(out, "passthrough", [node], [helper.make_tensor_value_info("x", TensorProto.STRING, [2])],
         [helper.make_tensor_value_info("y", TensorProto.STRING, [2])])
    nodes = [helper.make_node("Pad", ["x", "pads"], ["y"])]
    graph = helper.make_graph(
        nodes, "pad", [helper.make_tensor_value_info("x", TensorProto.STRING, [2])],
        [helper.make_tensor_value_info("y", TensorProto.STRING, None)],
        [numpy_helper.from_array(np.array([1, 1], np.int64), "pads")])
    os.makedirs(os.path.join(out, "pad"), exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=OPSET), os.path.join(out, "pad", "model.onnx"))
    # A Loop whose body makes text and collects it as a scan output.
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Cast", ["i"], ["text"], to=TensorProto.STRING)],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("text", TensorProto.STRING, [])])
    # Unrolled (a constant trip count), it compiles; a loop of a trip count
    # given at run time cannot collect strings.
    for name, trips in (("loop_unrolled", []), ("loop", [helper.make_tensor_value_info("trips", TensorProto.INT64, [])])):
        graph = helper.make_graph(
            [helper.make_node("Loop", ["trips", ""], ["texts"], body=body)], name, trips,
            [helper.make_tensor_value_info("texts", TensorProto.STRING, None)],
            [] if trips else [numpy_helper.from_array(np.array(3, np.int64), "trips")])
        os.makedirs(os.path.join(out, name), exist_ok=True)
        onnx.save(helper.make_model(graph, opset_imports=OPSET), os.path.join(out, name, "model.onnx"))
    write_set(os.path.join(out, "loop_unrolled", "set"), [], [text(["0", "1", "2"])])
    # A shape read from text: its dims would need the run's strings.
    nodes = [helper.make_node("Cast", ["s"], ["shape"], to=TensorProto.INT64),
             helper.make_node("Reshape", ["x", "shape"], ["y"])]
    save(out, "shape_from_text", nodes,
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6]),
          helper.make_tensor_value_info("s", TensorProto.STRING, [2])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    string_normalizer(args.out)
    casts(args.out)
    movement(args.out)
    movement_more(args.out)
    movement_other(args.out)
    refused(args.out)


if __name__ == "__main__":
    main()
