"""Models that read the counts the data gives as values, for detection.test:
a detector's post-processing as torchvision writes it (per class: the
scores above a threshold, the top min(K, count) of them, then one
non-maximum suppression over every class), exported by PyTorch, and small
ONNX graphs that compute with a count. References from the PyTorch module
and from numpy.

    detection_models.py --out DIR

writes DIR/<model>/model.onnx and DIR/<model>/<set>/{input_*,output_*}.pb.
"""

import argparse
import os
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper

from test_sets import value, write_model, write_set

F32, I64 = TensorProto.FLOAT, TensorProto.INT64


def ints(name, values):
    return helper.make_tensor(name, I64, [len(values)], values)


def postprocess(out, rng):
    """torchvision's detection post-processing (SSD's, RetinaNet's) on given
    boxes and per-class scores: the If of batched_nms ("no boxes: return
    nothing") included, as PyTorch exports it."""
    import torch
    from torchvision.models.detection import _utils as det_utils
    from torchvision.ops import boxes as box_ops

    classes, count = 4, 60

    class Post(torch.nn.Module):
        def forward(self, boxes, scores):
            kept_boxes, kept_scores, kept_labels = [], [], []
            for label in range(1, classes):
                score = scores[:, label]
                keep = score > 0.5
                score, box = score[keep], boxes[keep]
                k = det_utils._topk_min(score, 8, 0)
                score, idxs = score.topk(k)
                kept_boxes.append(box[idxs])
                kept_scores.append(score)
                kept_labels.append(torch.full_like(score, fill_value=label, dtype=torch.int64))
            boxes = torch.cat(kept_boxes, 0)
            scores = torch.cat(kept_scores, 0)
            labels = torch.cat(kept_labels, 0)
            keep = box_ops.batched_nms(boxes, scores, labels, 0.4)[:10]
            return boxes[keep], scores[keep], labels[keep]

    def inputs(scale):
        corner = rng.random((count, 2)) * 100
        boxes = np.concatenate([corner, corner + rng.random((count, 2)) * 40 + 1], 1)
        return boxes.astype(np.float32), (rng.random((count, classes)) * scale).astype(np.float32)

    post = Post().eval()
    os.makedirs(os.path.join(out, "postprocess"), exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(post, tuple(torch.from_numpy(a) for a in inputs(1.0)),
                          os.path.join(out, "postprocess", "model.onnx"), opset_version=17,
                          input_names=["boxes", "scores"], output_names=["b", "s", "l"])
    # A few boxes per class (fewer than K), many (K per class, then 10 in
    # all), and none above the threshold (the empty branch).
    for label, scale in (("few", 0.52), ("many", 1.0), ("none", 0.5)):
        boxes, scores = inputs(scale)
        with torch.no_grad():
            ref = post(torch.from_numpy(boxes), torch.from_numpy(scores))
        write_set(os.path.join(out, "postprocess", label), [boxes, scores], [r.numpy() for r in ref])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    out = ap.parse_args().out
    rng = np.random.default_rng(11)

    postprocess(out, rng)

    # The positive elements of x, their top min(3, count), and the last two
    # (or fewer): a TopK and a Slice of a count, sized by its bound.
    write_model(out, "top_of_count",
                [helper.make_node("Greater", ["x", "zero"], ["positive"]),
                 helper.make_node("Compress", ["x", "positive"], ["v"], axis=0),
                 helper.make_node("Shape", ["v"], ["n"]),
                 helper.make_node("Concat", ["three", "n"], ["candidates"], axis=0),
                 helper.make_node("ReduceMin", ["candidates"], ["k"], keepdims=1),
                 helper.make_node("TopK", ["v", "k"], ["top", "where"], name="topk"),
                 helper.make_node("Slice", ["v", "start", "end"], ["last"], name="slice")],
                [value("x", F32, [10])],
                [value("top", F32, ["k"]), value("where", I64, ["k"]), value("last", F32, ["t"])],
                [helper.make_tensor("zero", F32, [], [0.0]), ints("three", [3]),
                 ints("start", [-2]), ints("end", [2**62])])
    for label, x in (("many", rng.standard_normal(10)), ("two", np.array([-1, 2, -3, -4, 5, -6, -7, -8, -9, -1.0])),
                     ("one", np.array([-1, -2, -3, -4, 5, -6, -7, -8, -9, -1.0])),
                     ("none", -np.ones(10))):
        x = x.astype(np.float32)
        v = x[x > 0]
        order = np.argsort(-v, kind="stable")[:min(3, len(v))]
        write_set(os.path.join(out, "top_of_count", label), [x], [v[order], order.astype(np.int64), v[-2:]])

    # NonZero of an input of a symbolic dim (0 rows too), and NonZero of a
    # count (the positions of the positive ones among those kept): each
    # bounded by its input's element count.
    write_model(out, "nonzero_of_dynamic",
                [helper.make_node("NonZero", ["x"], ["y"], name="nonzero"),
                 helper.make_node("Greater", ["y", "zero"], ["positive"]),
                 helper.make_node("NonZero", ["positive"], ["z"], name="nonzero_of_count")],
                [value("x", F32, ["rows", 3])], [value("y", I64, [2, "n"]), value("z", I64, [2, "m"])],
                [helper.make_tensor("zero", I64, [], [0])])
    for rows in (4, 0):
        x = (rng.standard_normal((rows, 3)) * (rng.random((rows, 3)) < 0.6)).astype(np.float32)
        y = np.array(np.nonzero(x), np.int64).reshape(2, -1)
        write_set(os.path.join(out, "nonzero_of_dynamic", f"rows{rows}"), [x],
                  [y, np.array(np.nonzero(y > 0), np.int64).reshape(2, -1)])

    # A two-stage detector's box decoding (Faster R-CNN's): the proposals
    # kept over six stages (each a count bounded by the one before), their
    # features and boxes gathered apart; the regression reshaped to
    # [count, -1] by the boxes' count, then [count, -1, 4] (the -1s known:
    # the two counts share their origin), scaled by each box's width (two
    # gathers of one count broadcast), flattened per row and cut into boxes
    # ([count * 3, 4]: an exact quotient of the count's size).
    stages = [helper.make_node("Greater", ["scores", "zero"], ["kept0"]),
              helper.make_node("NonZero", ["kept0"], ["nz0"]),
              helper.make_node("Squeeze", ["nz0", "axis0"], ["idx0"])]
    for k in range(1, 6):
        stages += [helper.make_node("Gather", ["scores", f"idx{k - 1}"], [f"s{k}"], axis=0),
                   helper.make_node("Greater", [f"s{k}", "zero"], [f"kept{k}"]),
                   helper.make_node("NonZero", [f"kept{k}"], [f"nz{k}"]),
                   helper.make_node("Squeeze", [f"nz{k}", "axis0"], [f"sel{k}"]),
                   helper.make_node("Gather", [f"idx{k - 1}", f"sel{k}"], [f"idx{k}"], axis=0)]
    weight = rng.standard_normal((8, 12)).astype(np.float32)
    bias = rng.standard_normal(12).astype(np.float32)
    write_model(out, "box_decoding",
                stages + [
                 helper.make_node("Gather", ["boxes", "idx5"], ["props"], axis=0),
                 helper.make_node("Gather", ["feats", "idx5"], ["f"], axis=0),
                 helper.make_node("Gather", ["props", "two"], ["x1"], axis=1),
                 helper.make_node("Gather", ["props", "zero_i"], ["x0"], axis=1),
                 helper.make_node("Sub", ["x1", "x0"], ["w"]),
                 helper.make_node("MatMul", ["f", "weight"], ["mm"]),
                 helper.make_node("Add", ["mm", "bias"], ["reg"]),
                 helper.make_node("Shape", ["props"], ["ps"]),
                 helper.make_node("Gather", ["ps", "zero_i"], ["n"], axis=0),
                 helper.make_node("Unsqueeze", ["n", "axis0"], ["n1"]),
                 helper.make_node("Concat", ["n1", "minus1"], ["shape2"], axis=0),
                 helper.make_node("Reshape", ["reg", "shape2"], ["reg2"]),
                 helper.make_node("Concat", ["n1", "minus1", "four"], ["shape3"], axis=0),
                 helper.make_node("Reshape", ["reg2", "shape3"], ["deltas"]),
                 helper.make_node("Unsqueeze", ["w", "axes12"], ["w3"]),
                 helper.make_node("Mul", ["deltas", "w3"], ["scaled"]),
                 helper.make_node("Flatten", ["scaled"], ["rows"], axis=1),
                 helper.make_node("Reshape", ["rows", "boxes_shape"], ["y"])],
                [value("scores", F32, [12]), value("boxes", F32, [12, 4]), value("feats", F32, [12, 8])],
                [value("y", F32, ["m", 4])],
                [helper.make_tensor("zero", F32, [], [0.0]), ints("axis0", [0]),
                 helper.make_tensor("two", I64, [], [2]), helper.make_tensor("zero_i", I64, [], [0]),
                 onnx.numpy_helper.from_array(weight, "weight"), onnx.numpy_helper.from_array(bias, "bias"),
                 ints("minus1", [-1]), ints("four", [4]), ints("axes12", [1, 2]),
                 ints("boxes_shape", [-1, 4])])
    for label, kept in (("many", 7), ("one", 1), ("none", 0)):
        scores = -np.ones(12, np.float32)
        scores[rng.permutation(12)[:kept]] = 1
        boxes = rng.uniform(0, 10, (12, 4)).astype(np.float32)
        feats = rng.standard_normal((12, 8)).astype(np.float32)
        idx = np.nonzero(scores > 0)[0]
        props, f = boxes[idx].astype(np.float64), feats[idx].astype(np.float64)
        reg = f @ weight.astype(np.float64) + bias
        scaled = reg.reshape(len(idx), 3, 4) * (props[:, 2] - props[:, 0])[:, None, None]
        write_set(os.path.join(out, "box_decoding", label), [scores, boxes, feats],
                  [scaled.reshape(-1, 4).astype(np.float32)])

    # Regions of a dynamic count scattered back into place (MultiScaleRoIAlign
    # puts each level's pooled regions at their rows) and flattened per row.
    write_model(out, "scatter_regions",
                [helper.make_node("Shape", ["x"], ["dims"]),
                 helper.make_node("ConstantOfShape", ["dims"], ["zeros"],
                                  value=helper.make_tensor("v", F32, [1], [0.0])),
                 helper.make_node("Reshape", ["rows", "column"], ["rows2d"]),
                 helper.make_node("Expand", ["rows2d", "dims"], ["where"]),
                 helper.make_node("Add", ["x", "x"], ["doubled"]),
                 helper.make_node("ScatterElements", ["zeros", "where", "doubled"], ["placed"], axis=0,
                                  name="scatter"),
                 helper.make_node("Flatten", ["placed"], ["y"], axis=1, name="flatten")],
                [value("x", F32, ["r", 2, 3]), value("rows", I64, ["r"])], [value("y", F32, ["r", 6])],
                [ints("column", [-1, 1, 1])])
    for regions in (5, 1, 0):
        x = rng.standard_normal((regions, 2, 3)).astype(np.float32)
        rows = rng.permutation(regions).astype(np.int64)
        placed = np.zeros_like(x)
        placed[rows] = 2 * x
        write_set(os.path.join(out, "scatter_regions", f"r{regions}"), [x, rows], [placed.reshape(regions, 6)])

    # A count's size as a value: the run's, not the bound.
    write_model(out, "size_of_count",
                [helper.make_node("NonZero", ["x"], ["n"], name="nonzero"),
                 helper.make_node("Size", ["n"], ["s"], name="size")],
                [value("x", F32, [3, 4])], [value("s", I64, [])])
    x = (rng.standard_normal((3, 4)) * (rng.random((3, 4)) < 0.5)).astype(np.float32)
    write_set(os.path.join(out, "size_of_count", "data"), [x], [np.array(2 * np.count_nonzero(x), np.int64)])

    # A size that shrinks as the count grows (12 - count): its bound would
    # plan too small a buffer, so it is refused.
    write_model(out, "shrinking",
                [helper.make_node("NonZero", ["x"], ["n"], name="nonzero"),
                 helper.make_node("Shape", ["n"], ["dims"]),
                 helper.make_node("Slice", ["dims", "one", "two"], ["count"]),
                 helper.make_node("Sub", ["twelve", "count"], ["difference"], name="sub"),
                 helper.make_node("Max", ["difference", "none"], ["rest"], name="max"),
                 helper.make_node("ConstantOfShape", ["rest"], ["y"], name="fill")],
                [value("x", F32, [3, 4])], [value("y", F32, ["r"])],
                [ints("one", [1]), ints("two", [2]), ints("twelve", [12]), ints("none", [0])])

    # The same through a product by a negative factor, max(20 - 2 * count, 0).
    write_model(out, "shrinking_product",
                [helper.make_node("NonZero", ["x"], ["n"], name="nonzero"),
                 helper.make_node("Shape", ["n"], ["dims"]),
                 helper.make_node("Slice", ["dims", "one", "two"], ["count"]),
                 helper.make_node("Mul", ["count", "minus_two"], ["product"], name="mul"),
                 helper.make_node("Add", ["product", "twenty"], ["difference"], name="add"),
                 helper.make_node("Max", ["difference", "none"], ["rest"], name="max"),
                 helper.make_node("ConstantOfShape", ["rest"], ["y"], name="fill")],
                [value("x", F32, [10])], [value("y", F32, ["r"])],
                [ints("one", [1]), ints("two", [2]), ints("minus_two", [-2]), ints("twenty", [20]),
                 ints("none", [0])])

    # Two counts that must agree but need not (each input's positive
    # elements): the checks only the run could make, refused.
    positives = [helper.make_node("Greater", ["x", "zero"], ["px"]),
                 helper.make_node("NonZero", ["px"], ["nx"]),
                 helper.make_node("Squeeze", ["nx", "axis0"], ["ix"]),
                 helper.make_node("Greater", ["y", "zero"], ["py"]),
                 helper.make_node("NonZero", ["py"], ["ny"]),
                 helper.make_node("Squeeze", ["ny", "axis0"], ["iy"])]
    counts = [helper.make_tensor("zero", F32, [], [0.0]), ints("axis0", [0])]
    write_model(out, "nms_counts",
                positives + [
                    helper.make_node("Gather", ["boxes", "ix"], ["b"], axis=0),
                    helper.make_node("Gather", ["y", "iy"], ["s"], axis=0),
                    helper.make_node("Unsqueeze", ["b", "axis0"], ["b3"]),
                    helper.make_node("Unsqueeze", ["s", "axes01"], ["s3"]),
                    helper.make_node("NonMaxSuppression", ["b3", "s3", "keep"], ["kept"], name="nms")],
                [value("x", F32, [6]), value("y", F32, [6]), value("boxes", F32, [6, 4])],
                [value("kept", I64, ["k", 3])],
                counts + [ints("axes01", [0, 1]), ints("keep", [6])])
    write_model(out, "scatter_counts",
                positives + [
                    helper.make_node("Unsqueeze", ["ix", "axis1"], ["where"]),
                    helper.make_node("Gather", ["rows", "iy"], ["updates"], axis=0),
                    helper.make_node("ScatterElements", ["table", "where", "updates"], ["t"],
                                     axis=0, name="scatter")],
                [value("x", F32, [6]), value("y", F32, [6]), value("rows", F32, [6, 1]),
                 value("table", F32, [6, 1])],
                [value("t", F32, [6, 1])], counts + [ints("axis1", [1])])
    write_model(out, "scatter_too_many",
                positives[:3] + [
                    helper.make_node("Unsqueeze", ["ix", "axis1"], ["where"]),
                    helper.make_node("Gather", ["rows", "ix"], ["updates"], axis=0),
                    helper.make_node("ScatterElements", ["table", "where", "updates"], ["t"],
                                     axis=1, name="scatter")],
                [value("x", F32, [6]), value("rows", F32, [6, 1]), value("table", F32, [2, 1])],
                [value("t", F32, [2, 1])], counts + [ints("axis1", [1])])

    # The rows of a TopK of a count (min(3, count)), put back into place by
    # index.expand(k, 4) as PyTorch exports it, Expand(index, where(shape
    # == -1, 1, shape)): the index is a gather along a count's dim, one of
    # two buffers (nothing read when the count is 0), whose dim is its size.
    write_model(out, "expand_of_topk",
                positives[:3] + [
                    helper.make_node("Gather", ["x", "ix"], ["v"], axis=0),
                    helper.make_node("Shape", ["v"], ["n"]),
                    helper.make_node("Concat", ["three", "n"], ["candidates"], axis=0),
                    helper.make_node("ReduceMin", ["candidates"], ["k"], keepdims=1),
                    helper.make_node("TopK", ["v", "k"], ["top", "at"]),
                    helper.make_node("Gather", ["ix", "at"], ["kept"], axis=0),
                    helper.make_node("Unsqueeze", ["kept", "axis1"], ["index"]),
                    helper.make_node("Shape", ["index"], ["dims"]),
                    helper.make_node("Gather", ["dims", "zero_i"], ["rows"], axis=0),
                    helper.make_node("Unsqueeze", ["rows", "axis0"], ["rows1"]),
                    helper.make_node("Concat", ["rows1", "four"], ["shape"], axis=0),
                    helper.make_node("Shape", ["shape"], ["length"]),
                    helper.make_node("ConstantOfShape", ["length"], ["ones"],
                                     value=helper.make_tensor("one", I64, [1], [1])),
                    helper.make_node("Mul", ["ones", "minus1"], ["minus_ones"]),
                    helper.make_node("Equal", ["shape", "minus_ones"], ["unchanged"]),
                    helper.make_node("Where", ["unchanged", "ones", "shape"], ["to"]),
                    helper.make_node("Expand", ["index", "to"], ["where"], name="expand"),
                    helper.make_node("Gather", ["table", "kept"], ["updates"], axis=0),
                    helper.make_node("ScatterElements", ["zeros", "where", "updates"], ["y"], axis=0,
                                     name="scatter")],
                [value("x", F32, [6]), value("table", F32, [6, 4])], [value("y", F32, [6, 4])],
                counts + [ints("three", [3]), ints("axis1", [1]), helper.make_tensor("zero_i", I64, [], [0]),
                          ints("four", [4]), ints("minus1", [-1]),
                          onnx.numpy_helper.from_array(np.zeros((6, 4), np.float32), "zeros")])
    for label, kept in (("many", 5), ("one", 1), ("none", 0)):
        x = -np.ones(6, np.float32)
        x[rng.permutation(6)[:kept]] = rng.permutation(kept).astype(np.float32) + 1
        table = rng.standard_normal((6, 4)).astype(np.float32)
        top = np.argsort(-x, kind="stable")[:min(3, kept)]
        y = np.zeros_like(table)
        y[top] = table[top]
        write_set(os.path.join(out, "expand_of_topk", label), [x, table], [y])


if __name__ == "__main__":
    main()
