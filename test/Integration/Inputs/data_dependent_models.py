"""Models whose output sizes the data gives, for data-dependent.test: NonZero
and Compress, alone and followed by other ops, with test data sets whose
references numpy computes.

    data_dependent_models.py --out DIR

writes DIR/<model>/model.onnx and DIR/<model>/<set>/{input_*,output_*}.pb.
"""

import argparse
import os

import numpy as np
from onnx import TensorProto, helper

from test_sets import value, write_model, write_set

F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    out = ap.parse_args().out
    rng = np.random.default_rng(5)

    # (y, t) = (nonzero(x), transpose(nonzero(x)) + 1): the second output is
    # computed from a buffer sized before the run for every element.
    write_model(out, "nonzero",
                [helper.make_node("NonZero", ["x"], ["y"], name="nonzero"),
                 helper.make_node("Transpose", ["y"], ["t0"]),
                 helper.make_node("Constant", [], ["one"],
                                  value=helper.make_tensor("one", I64, [], [1])),
                 helper.make_node("Add", ["t0", "one"], ["t"])],
                [value("x", F32, [3, 4])],
                [value("y", I64, [2, "n"]), value("t", I64, ["n", 2])])
    sets = {
        "some": rng.standard_normal((3, 4)).astype(np.float32) * (rng.random((3, 4)) < 0.5),
        "none": np.zeros((3, 4), np.float32),
        "all": np.ones((3, 4), np.float32),
        "nan": np.array([[np.nan, 0, -0.0, 2], [0, 0, 0, 0], [0, 1e-30, 0, 0]], np.float32),
    }
    for label, x in sets.items():
        y = np.array(np.nonzero(x), dtype=np.int64).reshape(2, -1)
        write_set(os.path.join(out, "nonzero", label), [x], [y, y.T + 1])

    # y = compress(x, c, axis=1) * 2, and the flattened compress of x.
    write_model(out, "compress",
                [helper.make_node("Compress", ["x", "c"], ["s"], name="compress", axis=1),
                 helper.make_node("Constant", [], ["two"],
                                  value=helper.make_tensor("two", F32, [], [2.0])),
                 helper.make_node("Mul", ["s", "two"], ["y"]),
                 helper.make_node("Compress", ["x", "f"], ["z"], name="flat")],
                [value("x", F32, [2, 5]), value("c", BOOL, [4]), value("f", BOOL, [10])],
                [value("y", F32, [2, "k"]), value("z", F32, ["m"])])
    x = rng.standard_normal((2, 5)).astype(np.float32)
    for label, c, f in (("mixed", [True, False, True, True], rng.random(10) < 0.5),
                        ("empty", [False] * 4, np.zeros(10, bool)),
                        ("full", [True] * 4, np.ones(10, bool))):
        c, f = np.array(c), np.array(f)
        write_set(os.path.join(out, "compress", label), [x, c, f],
                  [np.compress(c, x, axis=1) * 2, np.compress(f, x)])
    nms(out, rng)
    unique(out, rng)
    more(out, rng)
    refused(out)


def nms_reference(boxes, scores, max_output, iou, score, centered):
    """NonMaxSuppression by torchvision's nms per batch and class (corners
    reordered to x1 < x2, y1 < y2), as ONNX orders its rows."""
    import torch
    import torchvision

    rows = []
    for b in range(scores.shape[0]):
        if centered:
            xc, yc, w, h = boxes[b].T
            corners = np.stack([xc - w / 2, yc - h / 2, xc + w / 2, yc + h / 2], axis=1)
        else:
            y1, x1, y2, x2 = boxes[b].T
            corners = np.stack([np.minimum(x1, x2), np.minimum(y1, y2),
                                np.maximum(x1, x2), np.maximum(y1, y2)], axis=1)
        for c in range(scores.shape[1]):
            candidates = np.nonzero(scores[b, c] > score)[0]
            keep = torchvision.ops.nms(torch.tensor(corners[candidates], dtype=torch.float64),
                                       torch.tensor(scores[b, c, candidates], dtype=torch.float64),
                                       float(iou)).numpy()
            rows += [[b, c, candidates[k]] for k in keep[:max_output]]
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def nms(out, rng):
    """NonMaxSuppression on random boxes, against torchvision."""
    for centered in (0, 1):
        name = f"nms_center{centered}"
        write_model(out, name,
                    [helper.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou", "score"],
                                      ["selected"], name="nms", center_point_box=centered)],
                    [value("boxes", F32, [2, 20, 4]), value("scores", F32, [2, 3, 20]),
                     value("max", I64, [1]), value("iou", F32, [1]), value("score", F32, [1])],
                    [value("selected", I64, ["k", 3])])
        for label, limit, iou, score in (("suppress", 20, 0.1, 0.1), ("tight", 4, 0.2, 0.3),
                                         ("none", 0, 0.5, 0.0)):
            corner = rng.random((2, 20, 2)) * 10
            size = rng.random((2, 20, 2)) * 4 + 0.5
            if centered:
                boxes = np.concatenate([corner, size], axis=2)
            else:
                # y1, x1, y2, x2, some with the corners swapped.
                boxes = np.concatenate([corner, corner + size], axis=2)
                swap = rng.random((2, 20)) < 0.3
                boxes[swap] = boxes[swap][:, [2, 3, 0, 1]]
            boxes = boxes.astype(np.float32)
            scores = rng.random((2, 3, 20)).astype(np.float32)
            reference = nms_reference(boxes.astype(np.float64), scores, limit, np.float32(iou),
                                      np.float32(score), centered)
            write_set(os.path.join(out, name, label),
                      [boxes, scores, np.array([limit], np.int64), np.array([iou], np.float32),
                       np.array([score], np.float32)], [reference])


def unique(out, rng):
    """Unique of repeated values and slices, sorted and in order of first
    occurrence, against numpy (NaNs equal, sorted last)."""
    cases = {
        "unique_flat_sorted": (None, 1, rng.integers(0, 5, (3, 4)).astype(np.float32)),
        "unique_flat_first": (None, 0, rng.integers(-3, 3, 10).astype(np.float32)),
        "unique_rows": (0, 1, rng.integers(0, 2, (6, 3)).astype(np.float32)),
        "unique_columns": (-1, 0, rng.integers(0, 2, (2, 7)).astype(np.float32)),
        "unique_nan": (None, 1, np.array([2, np.nan, 1, np.nan, 2, -1], np.float32)),
    }
    for name, (axis, is_sorted, x) in cases.items():
        attrs = {"sorted": is_sorted} if axis is None else {"sorted": is_sorted, "axis": axis}
        write_model(out, name,
                    [helper.make_node("Unique", ["x"], ["y", "indices", "inverse", "counts"],
                                      name="unique", **attrs)],
                    [value("x", F32, list(x.shape))],
                    [value("y", F32, ["k"] if axis is None else
                           [d if a != axis % x.ndim else "k" for a, d in enumerate(x.shape)]),
                     value("indices", I64, ["k"]),
                     value("inverse", I64, [x.size if axis is None else x.shape[axis]]),
                     value("counts", I64, ["k"])])
        y, indices, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                                return_counts=True, axis=axis)
        inverse = inverse.reshape(-1)
        if not is_sorted:
            # In order of first occurrence.
            order = np.argsort(indices, kind="stable")
            position = np.empty_like(order)
            position[order] = np.arange(len(order))
            y = np.take(y, order, axis=0 if axis is None else axis)
            indices, counts, inverse = indices[order], counts[order], position[inverse]
        write_set(os.path.join(out, name, "data"), [x],
                  [y, indices.astype(np.int64), inverse.astype(np.int64), counts.astype(np.int64)])


def more(out, rng):
    """Booleans in Unique, an absent score threshold, and a count that sizes
    only intermediates."""
    write_model(out, "unique_bool",
                [helper.make_node("Unique", ["x"], ["y", "indices", "inverse", "counts"], sorted=1)],
                [value("x", BOOL, [5])],
                [value("y", BOOL, ["k"]), value("indices", I64, ["k"]), value("inverse", I64, [5]),
                 value("counts", I64, ["k"])])
    x = np.array([True, False, True, True, False])
    y, indices, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                            return_counts=True)
    write_set(os.path.join(out, "unique_bool", "data"), [x],
              [y, indices.astype(np.int64), inverse.astype(np.int64), counts.astype(np.int64)])

    # No score threshold: every box takes part, one scored -inf too.
    write_model(out, "nms_no_threshold",
                [helper.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou"],
                                  ["selected"], name="nms")],
                [value("boxes", F32, [1, 6, 4]), value("scores", F32, [1, 1, 6]),
                 value("max", I64, [1]), value("iou", F32, [1])],
                [value("selected", I64, ["k", 3])])
    boxes = np.array([[[i, i, i + 1, i + 1] for i in range(6)]], np.float32)
    scores = np.array([[[0.5, -np.inf, 0.9, 0.1, 0.3, 0.7]]], np.float32)
    order = [2, 5, 0, 4, 3, 1]
    write_set(os.path.join(out, "nms_no_threshold", "data"),
              [boxes, scores, np.array([10], np.int64), np.array([0.5], np.float32)],
              [np.array([[0, 0, k] for k in order], np.int64)])

    # The count sizes intermediates only: the output is static.
    write_model(out, "nonzero_gram",
                [helper.make_node("NonZero", ["x"], ["n"], name="nonzero"),
                 helper.make_node("Cast", ["n"], ["f"], to=F32),
                 helper.make_node("Transpose", ["f"], ["t"]),
                 helper.make_node("MatMul", ["f", "t"], ["y"])],
                [value("x", F32, [3, 4])], [value("y", F32, [2, 2])])
    x = (rng.standard_normal((3, 4)) * (rng.random((3, 4)) < 0.5)).astype(np.float32)
    f = np.array(np.nonzero(x), np.float64)
    write_set(os.path.join(out, "nonzero_gram", "data"), [x], [(f @ f.T).astype(np.float32)])


def refused(out):
    """A count that must equal another input's dim: a check only the run
    could make. A count read as a value (Size of a NonZero) that could size
    something before the run."""
    write_model(out, "nonzero_add",
                [helper.make_node("NonZero", ["x"], ["n"], name="nonzero"),
                 helper.make_node("Transpose", ["n"], ["t"]),
                 helper.make_node("Add", ["t", "y"], ["z"], name="add")],
                [value("x", F32, [3, 4]), value("y", I64, ["m", 2])],
                [value("z", I64, ["m", 2])])


if __name__ == "__main__":
    main()
