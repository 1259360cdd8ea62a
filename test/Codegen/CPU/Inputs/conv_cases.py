"""Compiles and runs Conv models whose shapes hit every path of the
shifted-window convolution (stride 1: batches, dilations, asymmetric pads,
rectangular kernels, channel counts that leave ragged register tiles, with and
without bias), a few that keep the patch-matrix form and 1x1 ones whose
spatial size is ragged (channels on the vector), checking each
against a float64 NumPy convolution.

Usage: conv_cases.py NNC NNC_RUN WORKDIR
Prints one line per case: '<name> ok' or '<name> FAIL ...'.
"""
import os
import sys

import numpy as np
from onnx import helper

from case_runner import run_case

nnc, nnc_run, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(11)

# name: (input NCHW, output channels, kernel (kh, kw), pads (top, left,
# bottom, right), strides, dilations, bias)
CASES = {
    "shifted_16x30x30_k3": ((1, 16, 30, 30), 32, (3, 3), (1, 1, 1, 1), (1, 1), (1, 1), True),
    "shifted_batch2": ((2, 8, 24, 40), 16, (3, 3), (1, 1, 1, 1), (1, 1), (1, 1), True),
    "shifted_dilated": ((1, 12, 36, 36), 24, (3, 3), (2, 2, 2, 2), (1, 1), (2, 2), False),
    "shifted_asym_5x3": ((1, 5, 33, 47), 10, (5, 3), (0, 1, 2, 0), (1, 1), (1, 1), True),
    "shifted_ragged_3ch": ((1, 3, 20, 64), 7, (3, 3), (1, 1, 1, 1), (1, 1), (1, 1), False),
    "shifted_no_pad": ((1, 9, 18, 66), 40, (3, 3), (0, 0, 0, 0), (1, 1), (1, 1), True),
    # 128 channels of 9 taps: the reduction is split into cache tiles.
    "shifted_deep_bias": ((1, 128, 20, 30), 32, (3, 3), (1, 1, 1, 1), (1, 1), (1, 1), True),
    "patches_narrow_7x7": ((1, 64, 7, 7), 64, (3, 3), (1, 1, 1, 1), (1, 1), (1, 1), True),
    "patches_strided": ((1, 8, 31, 31), 16, (3, 3), (1, 1, 1, 1), (2, 2), (1, 1), True),
    "stem_7x7_s2": ((1, 3, 64, 64), 64, (7, 7), (3, 3, 3, 3), (2, 2), (1, 1), False),
    "stem_3x3_s2_odd": ((1, 3, 33, 31), 32, (3, 3), (1, 1, 1, 1), (2, 2), (1, 1), True),
    "stem_narrow_patches": ((1, 3, 16, 16), 16, (7, 7), (3, 3, 3, 3), (2, 2), (1, 1), True),
    "stem_narrow_rows": ((1, 2, 16, 16), 16, (5, 5), (2, 2, 2, 2), (2, 2), (1, 1), True),
    "stem_5x4_s2_asym": ((1, 2, 30, 41), 16, (5, 4), (2, 0, 1, 2), (2, 2), (1, 1), True),
    "pointwise_7x7": ((1, 96, 7, 7), 160, (1, 1), (0, 0, 0, 0), (1, 1), (1, 1), True),
    "pointwise_14x14": ((1, 40, 14, 14), 64, (1, 1), (0, 0, 0, 0), (1, 1), (1, 1), False),
    # Several images, one filter: a matmul per image (the image loop a batch loop).
    "pointwise_batch3_shared": ((3, 48, 20, 20), 24, (1, 1), (0, 0, 0, 0), (1, 1), (1, 1), True),
    # Neither 440 channels nor 49 positions fill whole vectors: channels,
    # which waste fewer lanes, go on the vector.
    "pointwise_ragged_440_7x7": ((1, 440, 7, 7), 440, (1, 1), (0, 0, 0, 0), (1, 1), (1, 1), True),
    # Channels on the vector over 11x11 and 13x13 maps: with 8-float vectors
    # the copies back to NCHW transpose 3x8 and 5x8 edge tiles in registers,
    # as 7x7 and 14x14 do 7x8 and 6x8 ones.
    "pointwise_11x11": ((1, 16, 11, 11), 32, (1, 1), (0, 0, 0, 0), (1, 1), (1, 1), True),
    "pointwise_13x13": ((1, 32, 13, 13), 64, (1, 1), (0, 0, 0, 0), (1, 1), (1, 1), False),
    # Taps that read only padding are dropped (nn-trim-dead-taps): all but the
    # center over a 1x1 map, the first row and column of a strided one, the
    # outer rows over a one-row map.
    "dead_taps_center": ((1, 16, 1, 1), 32, (3, 3), (1, 1, 1, 1), (1, 1), (1, 1), True),
    "dead_taps_strided": ((1, 8, 2, 2), 16, (3, 3), (1, 1, 1, 1), (2, 2), (1, 1), True),
    "dead_taps_rows": ((1, 4, 1, 9), 8, (3, 3), (1, 1, 1, 1), (1, 1), (1, 1), False),
}


def reference(x, w, b, pads, strides, dilations):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.zeros((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]))
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x
    oh = (xp.shape[2] - (kh - 1) * dilations[0] - 1) // strides[0] + 1
    ow = (xp.shape[3] - (kw - 1) * dilations[1] - 1) // strides[1] + 1
    out = np.zeros((n, m, oh, ow))
    for i in range(kh):
        for j in range(kw):
            r0, c0 = i * dilations[0], j * dilations[1]
            window = xp[:, :, r0:r0 + (oh - 1) * strides[0] + 1:strides[0],
                        c0:c0 + (ow - 1) * strides[1] + 1:strides[1]]
            out += np.einsum("mc,nchw->nmhw", w[:, :, i, j].astype(np.float64), window)
    if b is not None:
        out += b.astype(np.float64).reshape(1, m, 1, 1)
    return out


failed = 0
for name, (shape, m, kernel, pads, strides, dilations, has_bias) in CASES.items():
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    w = rng.uniform(-1, 1, (m, shape[1]) + kernel).astype(np.float32)
    b = rng.uniform(-1, 1, (m,)).astype(np.float32) if has_bias else None
    y = reference(x, w, b, pads, strides, dilations)
    node = helper.make_node("Conv", ["x", "w"] + (["b"] if has_bias else []), ["y"],
                            kernel_shape=list(kernel), strides=list(strides),
                            dilations=list(dilations), pads=list(pads))
    weights = [("w", w)] + ([("b", b)] if has_bias else [])
    if not run_case(nnc, nnc_run, work, name, node, [("x", x)], ("y", y), weights):
        failed += 1

# Grouped convolutions of several channels per group (one matmul per image
# and group): name: (input NCHW, output channels, group, kernel, pads,
# strides, dilations, bias).
GROUPED = {
    "grouped_8ch_s1": ((2, 32, 14, 14), 32, 4, (3, 3), (1, 1, 1, 1), (1, 1), (1, 1), True),
    "grouped_8ch_s2": ((1, 48, 15, 15), 48, 6, (3, 3), (1, 1, 1, 1), (2, 2), (1, 1), False),
    "grouped_dilated_asym": ((1, 12, 10, 11), 18, 3, (3, 2), (1, 0, 2, 1), (1, 1), (2, 1), True),
}
for name, (shape, m, group, kernel, pads, strides, dilations, has_bias) in GROUPED.items():
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    cg, mg = shape[1] // group, m // group
    w = rng.uniform(-1, 1, (m, cg) + kernel).astype(np.float32)
    b = rng.uniform(-1, 1, (m,)).astype(np.float32) if has_bias else None
    y = np.concatenate([reference(x[:, g * cg:(g + 1) * cg], w[g * mg:(g + 1) * mg],
                                  None if b is None else b[g * mg:(g + 1) * mg],
                                  pads, strides, dilations) for g in range(group)], axis=1)
    node = helper.make_node("Conv", ["x", "w"] + (["b"] if has_bias else []), ["y"],
                            kernel_shape=list(kernel), strides=list(strides),
                            dilations=list(dilations), pads=list(pads), group=group)
    weights = [("w", w)] + ([("b", b)] if has_bias else [])
    if not run_case(nnc, nnc_run, work, name, node, [("x", x)], ("y", y), weights):
        failed += 1

# Two convolutions with a ReLU between: the ReLU writes its result straight
# into the interior of the second convolution's padded input.
x = rng.uniform(-1, 1, (1, 8, 20, 40)).astype(np.float32)
w1 = rng.uniform(-1, 1, (8, 8, 3, 3)).astype(np.float32)
w2 = rng.uniform(-1, 1, (16, 8, 3, 3)).astype(np.float32)
hidden = np.maximum(reference(x, w1, None, (1, 1, 1, 1), (1, 1), (1, 1)), 0)
y = reference(hidden, w2, None, (1, 1, 1, 1), (1, 1), (1, 1))
nodes = [helper.make_node("Conv", ["x", "w1"], ["h"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["h"], ["r"]),
         helper.make_node("Conv", ["r", "w2"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
if not run_case(nnc, nnc_run, work, "chain_conv_relu_conv", nodes, [("x", x)], ("y", y),
                [("w1", w1), ("w2", w2)]):
    failed += 1

# Depthwise convolutions (one filter per channel), strided ones computing
# every column and keeping every other: name: (input NCHW, kernel, pads,
# strides, bias). The depthwise_last ones have channels that fill vectors
# better than their positions, and run channels-last: 4 output columns per
# tile, an edge of 3 (7 columns) or 2 (14 columns at stride 2 with a pad on
# one side only).
DEPTHWISE = {
    "depthwise_s1": ((1, 24, 20, 36), (3, 3), (1, 1, 1, 1), (1, 1), True),
    "depthwise_s2": ((1, 24, 28, 28), (3, 3), (1, 1, 1, 1), (2, 2), False),
    "depthwise_last_s1": ((2, 64, 7, 7), (3, 3), (1, 1, 1, 1), (1, 1), True),
    "depthwise_last_s2": ((1, 96, 28, 28), (3, 3), (0, 0, 1, 1), (2, 2), False),
    "depthwise_last_5x5": ((1, 32, 14, 14), (5, 5), (2, 2, 2, 2), (1, 1), True),
    "depthwise_s2_odd": ((1, 16, 15, 17), (3, 3), (0, 1, 1, 0), (2, 2), True),
    "depthwise_s2_5x5": ((1, 8, 33, 40), (5, 5), (2, 2, 2, 2), (2, 2), True),
    "depthwise_rows_s2": ((1, 8, 18, 34), (3, 3), (1, 1, 1, 1), (2, 1), False),
    "depthwise_5x5_pairs": ((1, 24, 14, 28), (5, 5), (2, 2, 2, 2), (1, 1), True),
    "depthwise_5x5_odd_rows": ((1, 8, 13, 20), (5, 5), (2, 2, 2, 2), (1, 1), True),
    "depthwise_5x1_pairs": ((2, 16, 12, 20), (5, 1), (2, 0, 2, 0), (1, 1), False),
    # ConvNeXt's 7x7 (49 taps), NCHW and channels-last, and at stride 2.
    "depthwise_7x7": ((1, 8, 30, 40), (7, 7), (3, 3, 3, 3), (1, 1), True),
    "depthwise_last_7x7": ((2, 64, 14, 14), (7, 7), (3, 3, 3, 3), (1, 1), True),
    "depthwise_7x7_s2": ((1, 16, 23, 29), (7, 7), (3, 2, 3, 2), (2, 2), False),
}
for name, (shape, kernel, pads, strides, has_bias) in DEPTHWISE.items():
    c = shape[1]
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    w = rng.uniform(-1, 1, (c, 1) + kernel).astype(np.float32)
    b = rng.uniform(-1, 1, (c,)).astype(np.float32) if has_bias else None
    y = np.concatenate([reference(x[:, i:i + 1], w[i:i + 1], None if b is None else b[i:i + 1],
                                  pads, strides, (1, 1)) for i in range(c)], axis=1)
    node = helper.make_node("Conv", ["x", "w"] + (["b"] if has_bias else []), ["y"],
                            kernel_shape=list(kernel), strides=list(strides), pads=list(pads),
                            group=c)
    weights = [("w", w)] + ([("b", b)] if has_bias else [])
    if not run_case(nnc, nnc_run, work, name, node, [("x", x)], ("y", y), weights):
        failed += 1

# Strided transposed convolutions, computed phase by phase (sub-pixel):
# name: (input NCHW, output channels, kernel, pads, strides, output padding,
# bias, filter a run-time input (a training step's input gradient) or a
# weight). resnet_grad_* are the input gradients of ResNet's strided 3x3 and
# 1x1 convolutions; pointwise_s2 leaves three of four phases with no tap
# (bias only); mixed_s3x2 has phases with one and two taps per dim;
# tiny_phases has phases of one output row or one tap (unit strided slices);
# phase_past_input has phases whose taps read no input row (only past its
# end: the bias alone), the input gradient of a 3x3 stride-3 convolution.
def transposed_reference(x, w, b, pads, strides, output_padding):
    n, c, h, wd = x.shape
    m, kh, kw = w.shape[1:]
    full = np.zeros((n, m, (h - 1) * strides[0] + kh + output_padding[0],
                     (wd - 1) * strides[1] + kw + output_padding[1]))
    for i in range(kh):
        for j in range(kw):
            full[:, :, i:i + (h - 1) * strides[0] + 1:strides[0],
                 j:j + (wd - 1) * strides[1] + 1:strides[1]] += np.einsum(
                     "cm,nchw->nmhw", w[:, :, i, j].astype(np.float64), x)
    out = full[:, :, pads[0]:full.shape[2] - pads[2], pads[1]:full.shape[3] - pads[3]]
    if b is not None:
        out = out + b.astype(np.float64).reshape(1, m, 1, 1)
    return out


TRANSPOSED = {
    "transposed_resnet_grad_3x3": ((2, 32, 14, 14), 16, (3, 3), (1, 1, 1, 1), (2, 2), (1, 1), False, True),
    "transposed_resnet_grad_1x1": ((2, 32, 14, 14), 16, (1, 1), (0, 0, 0, 0), (2, 2), (1, 1), False, True),
    "transposed_pointwise_s2_bias": ((1, 8, 9, 11), 12, (1, 1), (0, 0, 0, 0), (2, 2), (0, 0), True, False),
    "transposed_4x4_s2_gan": ((1, 16, 8, 8), 8, (4, 4), (1, 1, 1, 1), (2, 2), (0, 0), True, False),
    "transposed_mixed_s3x2": ((1, 6, 7, 10), 10, (5, 3), (2, 0, 1, 1), (3, 2), (2, 1), True, True),
    "transposed_tiny_phases": ((4, 12, 2, 2), 8, (3, 3), (1, 1, 1, 1), (2, 2), (0, 0), False, True),
    "transposed_phase_past_input": ((1, 2, 1, 1), 3, (3, 3), (1, 1, 1, 1), (3, 3), (2, 2), True, True),
}
for name, (shape, m, kernel, pads, strides, out_pad, has_bias, runtime_w) in TRANSPOSED.items():
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    w = rng.uniform(-1, 1, (shape[1], m) + kernel).astype(np.float32)
    b = rng.uniform(-1, 1, (m,)).astype(np.float32) if has_bias else None
    y = transposed_reference(x, w, b, pads, strides, out_pad)
    node = helper.make_node("ConvTranspose", ["x", "w"] + (["b"] if has_bias else []), ["y"],
                            kernel_shape=list(kernel), strides=list(strides), pads=list(pads),
                            output_padding=list(out_pad))
    inputs = [("x", x)] + ([("w", w)] if runtime_w else [])
    weights = ([] if runtime_w else [("w", w)]) + ([("b", b)] if has_bias else [])
    if not run_case(nnc, nnc_run, work, name, node, inputs, ("y", y), weights):
        failed += 1

# A grouped one (the spread input's path) whose pads crop every input row
# away from some windows: the pad of a whole dim cropped is all zeros.
x = rng.uniform(-1, 1, (1, 2, 1, 3)).astype(np.float32)
w = rng.uniform(-1, 1, (2, 1, 2, 3)).astype(np.float32)
y = np.concatenate([transposed_reference(x[:, g:g + 1], w[g:g + 1], None, (2, 0, 0, 0), (2, 1), (1, 0))
                    for g in range(2)], axis=1)
node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], kernel_shape=[2, 3], strides=[2, 1],
                        pads=[2, 0, 0, 0], output_padding=[1, 0], group=2)
if not run_case(nnc, nnc_run, work, "transposed_grouped_cropped", node, [("x", x), ("w", w)], ("y", y)):
    failed += 1

# Conv -> BatchNormalization -> Clip(0, 6), MobileNetV2's block: batch norm,
# max and min fuse into one pass. At 32x32 the output channels stay rows of
# the matmul; at 28x28 (P = 784, ragged) they go along the vector, and the
# fused pass copies [P, M] back to NCHW in transposed 16x16 (and 16x12) tiles.
for name, size in (("chain_conv_bn_clip", 32), ("chain_conv_bn_clip_28x28", 28)):
    x = rng.uniform(-1, 1, (1, 16, size, size)).astype(np.float32)
    w = rng.uniform(-0.5, 0.5, (32, 16, 1, 1)).astype(np.float32)
    scale, shift = rng.uniform(0.5, 2, 32).astype(np.float32), rng.uniform(-1, 1, 32).astype(np.float32)
    mean, var = rng.uniform(-1, 1, 32).astype(np.float32), rng.uniform(0.5, 2, 32).astype(np.float32)
    conv = reference(x, w, None, (0, 0, 0, 0), (1, 1), (1, 1))
    per_channel = lambda v: v.astype(np.float64).reshape(1, -1, 1, 1)
    normed = (conv - per_channel(mean)) / np.sqrt(per_channel(var) + 1e-5) * per_channel(scale) + \
        per_channel(shift)
    y = np.clip(normed, 0, 6)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[1, 1]),
             helper.make_node("BatchNormalization", ["c", "scale", "shift", "mean", "var"], ["n"]),
             helper.make_node("Clip", ["n", "lo", "hi"], ["y"])]
    if not run_case(nnc, nnc_run, work, name, nodes, [("x", x)], ("y", y),
                    [("w", w), ("scale", scale), ("shift", shift), ("mean", mean), ("var", var),
                     ("lo", np.array(0, np.float32)), ("hi", np.array(6, np.float32))]):
        failed += 1

# MobileNetV2's inverted residual block at batch 2 and 14x14: a 1x1
# expansion, Clip, a 3x3 depthwise convolution (stride 1 or 2), Clip, a 1x1
# projection, and at stride 1 the residual add. The 1x1 convolutions put
# channels on the vector, and so does the depthwise one, with no transposed
# copy between them.
for name, stride in (("inverted_residual", 1), ("inverted_residual_s2", 2)):
    x = rng.uniform(-1, 1, (2, 32, 14, 14)).astype(np.float32)
    w1 = rng.uniform(-0.3, 0.3, (96, 32, 1, 1)).astype(np.float32)
    b1 = rng.uniform(-1, 1, 96).astype(np.float32)
    wd = rng.uniform(-0.5, 0.5, (96, 1, 3, 3)).astype(np.float32)
    bd = rng.uniform(-1, 1, 96).astype(np.float32)
    w2 = rng.uniform(-0.3, 0.3, (32, 96, 1, 1)).astype(np.float32)
    expanded = np.clip(reference(x, w1, b1, (0, 0, 0, 0), (1, 1), (1, 1)), 0, 6)
    depthwise = np.concatenate(
        [reference(expanded[:, i:i + 1], wd[i:i + 1].astype(np.float64), bd[i:i + 1],
                   (1, 1, 1, 1), (stride, stride), (1, 1)) for i in range(96)], axis=1)
    y = reference(np.clip(depthwise, 0, 6), w2, None, (0, 0, 0, 0), (1, 1), (1, 1))
    if stride == 1:
        y = y + x
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["e"], kernel_shape=[1, 1]),
             helper.make_node("Clip", ["e", "lo", "hi"], ["ec"]),
             helper.make_node("Conv", ["ec", "wd", "bd"], ["d"], kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1], strides=[stride, stride], group=96),
             helper.make_node("Clip", ["d", "lo", "hi"], ["dc"]),
             helper.make_node("Conv", ["dc", "w2"], ["p" if stride == 1 else "y"],
                              kernel_shape=[1, 1])]
    if stride == 1:
        nodes.append(helper.make_node("Add", ["p", "x"], ["y"]))
    if not run_case(nnc, nnc_run, work, name, nodes, [("x", x)], ("y", y),
                    [("w1", w1), ("b1", b1), ("wd", wd), ("bd", bd), ("w2", w2),
                     ("lo", np.array(0, np.float32)), ("hi", np.array(6, np.float32))]):
        failed += 1

# A DenseNet block: each layer convolves the ReLU of the concat of the block's
# input and every feature before it; the block's output concatenates them
# all. The layers' concats are views of the output's prefixes
# (nnc-share-concat-prefixes). The dense_block_reread case also concatenates
# an early prefix again after later features were inserted.
for name, reread in (("dense_block", False), ("dense_block_reread", True)):
    x = rng.uniform(-1, 1, (1, 8, 10, 10)).astype(np.float32)
    features, nodes, weights, names = [x.astype(np.float64)], [], [], ["x"]
    for layer in range(3):
        c = 8 + 4 * layer
        w = rng.uniform(-0.5, 0.5, (4, c, 3, 3)).astype(np.float32)
        joined = np.concatenate(features, axis=1)
        features.append(reference(np.maximum(joined, 0), w, None, (1, 1, 1, 1), (1, 1), (1, 1)))
        if layer == 0:
            nodes.append(helper.make_node("Relu", ["x"], ["r0"]))
        else:
            nodes.append(helper.make_node("Concat", names[:], [f"c{layer}"], axis=1))
            nodes.append(helper.make_node("Relu", [f"c{layer}"], [f"r{layer}"]))
        nodes.append(helper.make_node("Conv", [f"r{layer}", f"w{layer}"], [f"f{layer}"],
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        names.append(f"f{layer}")
        weights.append((f"w{layer}", w))
    outputs = names + (["c1"] if reread else [])
    y = np.concatenate(features + ([np.concatenate(features[:2], axis=1)] if reread else []), axis=1)
    nodes.append(helper.make_node("Concat", outputs, ["y"], axis=1))
    if not run_case(nnc, nnc_run, work, name, nodes, [("x", x)], ("y", y), weights):
        failed += 1
sys.exit(1 if failed else 0)
