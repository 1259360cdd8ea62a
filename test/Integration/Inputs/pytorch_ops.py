#!/usr/bin/python3
"""PyTorch-exported op coverage for nnc, end to end on the CPU.

Small PyTorch modules, each exercising one family of commonly exported ops, are
exported with torch.onnx.export (static shapes) at several opsets and written in
ONNX's test-data layout with PyTorch's eval-mode results as the reference:

    OUT/<case>/opset<N>/model.onnx
    OUT/<case>/opset<N>/test_data_set_0/input_<i>.pb, output_<i>.pb
    OUT/manifest.json          every exported model, its ONNX ops, expected failures

The check mode compiles every model with `nnc --target=cpu` and runs it with
`nnc-run --test-data` (default tolerance: atol 1e-5 + rtol 1e-4; integer and
bool outputs exactly), printing one line per model and a summary:

    pytorch_ops.py --out DIR [--cases a,b] [--verbose] [--keep-going]
                                    export the models and reference data
    pytorch_ops.py --out DIR --check NNC NNC_RUN [--jobs N]
                                    compile and run them
    pytorch_ops.py --list           print the cases

A case whose failure is a known nnc gap is marked with `xfail` and the reason;
it prints XFAIL when it fails and counts as a failure (XPASS) when it passes, so
the list stays true.  Ops the exporter cannot export at these opsets are kept
in UNEXPORTABLE: the export is attempted, and it is an error if it succeeds.

Needs Debian's interpreter (/usr/bin/python3): python3-torch 1.13,
python3-onnx 1.12, python3-numpy.
"""

import argparse
import concurrent.futures
import json
import math
import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

SEED = 0
MANIFEST = "manifest.json"
DEFAULT_OPSETS = (13, 17)
# Opset 11 is added where the exported form differs from 13's: Clip, Pad,
# Resize, Split/Squeeze/Unsqueeze and ReduceSum take attributes or other
# inputs there, and Softmax/LogSoftmax coerce to 2-D.
WITH_11 = (11, 13, 17)


# --------------------------------------------------------------------------
# Check mode: needs no torch, only the manifest and the two binaries.
# --------------------------------------------------------------------------

COMPILE_TIMEOUT, RUN_TIMEOUT = 300, 120


def tail(text, n=6):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return "\n".join("    " + l for l in lines[-n:])


def check_one(out_dir, entry, nnc, nnc_run):
    """Compile and run one model; returns (ok, diagnostics, seconds)."""
    start = time.time()
    try:
        ok, detail = compile_and_run(out_dir, entry, nnc, nnc_run)
    except OSError as e:
        ok, detail = False, f"cannot run a tool: {e}"
    return ok, detail, time.time() - start


def compile_and_run(out_dir, entry, nnc, nnc_run):
    model_dir = out_dir / entry["dir"]
    so = model_dir / "model.so"
    cmd = [nnc, "--target=cpu", str(model_dir / "model.onnx"), "-o", str(so)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return False, "compile timed out"
    if p.returncode != 0:
        return False, "compile failed:\n" + p.stderr + p.stdout
    cmd = [nnc_run, str(so), "--test-data", str(model_dir / "test_data_set_0")]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return False, "run timed out"
    lines = [l for l in p.stdout.splitlines() if l.startswith("output ")]
    ok = (p.returncode == 0 and len(lines) == entry["outputs"]
          and all(l.endswith(": ok") for l in lines))
    if ok:
        return True, ""
    if len(lines) != entry["outputs"]:
        return False, f"run: {len(lines)} outputs, expected {entry['outputs']}:\n{p.stdout}{p.stderr}"
    # The report without its header and the outputs that are fine.
    bad = [l for l in p.stdout.splitlines()[1:] if not l.endswith(": ok")]
    return False, f"run failed (exit {p.returncode}):\n" + "\n".join(bad) + "\n" + p.stderr


def check(out_dir, nnc, nnc_run, jobs):
    manifest = json.loads((out_dir / MANIFEST).read_text())
    entries = manifest["models"]
    start = time.time()
    counts = {"PASS": 0, "XFAIL": 0, "FAIL": 0, "XPASS": 0}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        results = pool.map(lambda e: check_one(out_dir, e, nnc, nnc_run), entries)
        for entry, (ok, detail, seconds) in zip(entries, results):
            xfail, match = entry["xfail"], entry["xfail_match"]
            if ok:
                status = "XPASS" if xfail else "PASS"
            elif xfail and (match is None or match in detail):
                status = "XFAIL"
            else:
                status = "FAIL"
                if xfail:   # failing, but not in the known way
                    detail = f"expected the failure to say {match!r}\n{detail}"
            counts[status] += 1
            line = f"{status:<5} {entry['dir']:<40} {seconds:5.2f} s"
            if xfail:
                line += f"  [xfail: {xfail}]"
            print(line, flush=True)
            if not ok:
                print(tail(detail, 4 if status == "XFAIL" else 12), flush=True)
    for skip in manifest["skipped"]:
        print(f"SKIP  {skip['name']}  [{skip['reason']}]")
    ops = sorted({op for e in entries for op in e["ops"]})
    print(f"ONNX ops exported: {len(ops)}: {' '.join(ops)}")
    failed = counts["FAIL"] + counts["XPASS"]
    print(f"pytorch ops: {len(entries)} models, {counts['PASS']} passed, "
          f"{counts['XFAIL']} xfail, {failed} failed "
          f"({len(manifest['skipped'])} not exportable) in {time.time() - start:.1f} s",
          flush=True)
    return 1 if failed else 0


# --------------------------------------------------------------------------
# Export mode.
# --------------------------------------------------------------------------

def export_all(out_dir, only, verbose, keep_going=False):
    import onnx
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from onnx import numpy_helper

    torch.set_num_threads(1)

    # ---- inputs: each spec is a function of a torch.Generator --------------

    def randn(*shape, scale=1.0):
        return lambda g: torch.randn(shape, generator=g) * scale

    def uniform(*shape, lo=0.0, hi=1.0):
        return lambda g: lo + (hi - lo) * torch.rand(shape, generator=g)

    def randint(*shape, hi, lo=0):
        return lambda g: torch.randint(lo, hi, shape, generator=g, dtype=torch.int64)

    def distinct_indices(rows, n, k):
        """rows x k int64 indices into n, distinct within a row (for scatter)."""
        return lambda g: torch.argsort(torch.rand(rows, n, generator=g), dim=1)[:, :k]

    def boolmask(*shape):
        return lambda g: torch.rand(shape, generator=g) > 0.5

    def with_halves(*shape, scale=3.0):
        """Random values with exact .5 ties mixed in (round half to even)."""
        def make(g):
            x = torch.randn(shape, generator=g) * scale
            flat = x.view(-1)
            ties = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, -3.5])
            flat[:len(ties)] = ties
            return x
        return make

    # ---- module helpers ------------------------------------------------------

    class Fn(nn.Module):
        """forward(*xs) = f(self, *xs); keyword modules become submodules."""

        def __init__(self, f, **mods):
            super().__init__()
            self.f = f
            for k, v in mods.items():
                if isinstance(v, nn.Module):
                    self.add_module(k, v)
                else:
                    self.register_buffer(k, v)

        def forward(self, *xs):
            return self.f(self, *xs)

    def fn(f, **mods):
        return lambda: Fn(f, **mods)

    def mod(ctor, *args, **kwargs):
        return lambda: ctor(*args, **kwargs)

    class Multi(nn.Module):
        """Several ops on the same inputs, one graph output named after each
        op, so that nnc-run's report of a wrong output names the op.  Values
        are modules or functions of the inputs."""

        def __init__(self, ops):
            super().__init__()
            self.output_names = list(ops)
            self.ops = nn.ModuleList(
                op if isinstance(op, nn.Module) else Fn(lambda m, *xs, f=op: f(*xs))
                for op in ops.values())

        def forward(self, *xs):
            return tuple(op(*xs) for op in self.ops)

    def multi(**ops):
        return lambda: Multi(ops)

    CASES = []

    def case(name, make, inputs, opsets=DEFAULT_OPSETS, xfail=None, xfail_match=None):
        """make() -> module; inputs: specs.  xfail: why nnc fails the case at
        every opset; xfail_match: text nnc's diagnostics must then contain."""
        CASES.append(dict(name=name, make=make, inputs=inputs, opsets=opsets,
                          xfail=xfail, xfail_match=xfail_match))

    torch.manual_seed(SEED)   # for the constant tensors made right here
    x4 = randn(2, 4, 6, 5, scale=2.0)        # NCHW activations
    x3 = randn(2, 6, 8, scale=3.0)           # wide range for saturating functions

    # Cases group related ops as outputs of one model (multi): every model
    # costs a compile.  When one op of a group fails to compile, move it to a
    # case of its own so that the others stay tested.

    # ---- activations ---------------------------------------------------------
    case("act_relu_like", multi(relu=nn.ReLU(), leaky_relu=nn.LeakyReLU(0.1), rrelu_eval=nn.RReLU(0.1, 0.3),
                                prelu=nn.PReLU(), relu6=nn.ReLU6(), hardtanh=nn.Hardtanh(-0.5, 1.5)),
         [x3], opsets=WITH_11)   # ReLU6, Hardtanh: Clip
    case("act_exp_like", multi(elu=nn.ELU(0.7), selu=nn.SELU(), celu=nn.CELU(1.3), softplus=nn.Softplus(),
                               softplus_beta=nn.Softplus(beta=2.0), logsigmoid=nn.LogSigmoid(),
                               softsign=nn.Softsign(), tanh=nn.Tanh(), sigmoid=nn.Sigmoid()),
         [x3])
    case("act_gated", multi(gelu=nn.GELU(), gelu_tanh=nn.GELU(approximate="tanh"), silu=nn.SiLU(),
                            mish=nn.Mish(), glu=nn.GLU(dim=1), hardswish=nn.Hardswish(),
                            hardsigmoid=nn.Hardsigmoid()),
         [x3], opsets=(13, 14, 17))   # HardSwish exists from opset 14
    case("act_shrink", multi(hardshrink=nn.Hardshrink(0.7), softshrink=nn.Softshrink(0.4),
                             tanhshrink=nn.Tanhshrink()), [x3])
    case("prelu_channel", mod(nn.PReLU, 4, 0.2), [x4])   # slope per channel

    # ---- softmax -------------------------------------------------------------
    # Before opset 13, Softmax coerces its input to 2-D: the exporter
    # transposes the softmax dim last.
    case("softmax", multi(softmax_last=lambda x: F.softmax(x, dim=-1),
                          softmax_dim1=lambda x: F.softmax(x, dim=1),
                          softmax_dim0=lambda x: F.softmax(x, dim=0),
                          softmin_dim2=nn.Softmin(dim=2),
                          log_softmax_last=lambda x: F.log_softmax(x, dim=-1),
                          log_softmax_dim1=lambda x: F.log_softmax(x, dim=1)),
         [x4], opsets=WITH_11)

    # ---- normalization -------------------------------------------------------
    case("norm_1d", multi(batchnorm1d=nn.BatchNorm1d(6), layernorm_last=nn.LayerNorm(8),
                          layernorm_last2=nn.LayerNorm((6, 8)),
                          instancenorm1d=nn.InstanceNorm1d(6, affine=True)),
         [x3])   # LayerNormalization from opset 17, a decomposition before
    case("batchnorm1d_nc", mod(nn.BatchNorm1d, 6), [randn(5, 6)])
    case("norm_2d", multi(batchnorm2d=nn.BatchNorm2d(4),
                          batchnorm2d_no_affine=nn.BatchNorm2d(4, affine=False),
                          instancenorm2d=nn.InstanceNorm2d(4, affine=True),
                          groupnorm=nn.GroupNorm(2, 4)),
         [x4])
    case("layernorm_no_affine", mod(nn.LayerNorm, 8, elementwise_affine=False, eps=1e-3), [x3], opsets=(13,))
    # Exported as a decomposition: F.pad's computed pads (see pad_constant)
    # and an If on Shape(...)[1] == 1, a condition fixed by the static shapes.
    case("local_response_norm", mod(nn.LocalResponseNorm, 3), [x4])

    # ---- pooling -------------------------------------------------------------
    x_pool = randn(1, 3, 9, 10)
    case("maxpool2d", multi(
        ceil_pad=nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
        dilation=nn.MaxPool2d(2, stride=1, dilation=2),
        plain=nn.MaxPool2d(2),
        all=nn.MaxPool2d((3, 2), stride=(2, 1), padding=1, dilation=(1, 2), ceil_mode=True),
        adaptive_1x1=nn.AdaptiveMaxPool2d((1, 1))), [x_pool])
    case("avgpool2d", multi(
        ceil_nopad=nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
        ceil_pad=nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True),
        pad=nn.AvgPool2d(3, stride=2, padding=1),
        plain=nn.AvgPool2d(2),
        adaptive_1x1=nn.AdaptiveAvgPool2d((1, 1))), [x_pool])
    case("adaptive_avgpool_2x2", mod(nn.AdaptiveAvgPool2d, (2, 2)), [randn(1, 3, 8, 6)])
    case("pool1d", multi(maxpool1d=nn.MaxPool1d(3, stride=2), avgpool1d=nn.AvgPool1d(3, stride=2, padding=1)),
         [x3])
    # PyTorch drops a last ceil_mode window that would start past the input:
    # 2x3 here, as nnc computes; the exported graph declares 3x3.
    case("maxpool2d_ceil_dropped_window", mod(nn.MaxPool2d, 2, stride=3, ceil_mode=True), [randn(1, 2, 6, 7)])

    # ---- convolutions --------------------------------------------------------
    case("conv1d", multi(conv1d=nn.Conv1d(6, 5, 3, stride=2, padding=1),
                         conv_transpose1d=nn.ConvTranspose1d(6, 4, 3, stride=2, padding=1)), [x3])
    case("conv2d", multi(
        stride_pad=nn.Conv2d(4, 6, 3, stride=2, padding=1),
        groups_dilation=nn.Conv2d(4, 6, 3, groups=2, dilation=2, padding=2),
        depthwise=nn.Conv2d(4, 4, 3, groups=4, padding=1, bias=False),
        depthwise_mult=nn.Conv2d(4, 8, 3, groups=4, stride=2),
        rect_asym=nn.Conv2d(4, 3, (1, 3), stride=(2, 1), padding=(0, 2))), [x4])
    case("conv3d", mod(nn.Conv3d, 2, 3, 3, padding=1), [randn(1, 2, 4, 5, 5)])
    # Batches of images whose output positions share the matmul's rows: deep
    # layers' small planes, strided, 1x1, and a transposed convolution read
    # through shifted windows.
    case("conv2d_batched", multi(
        plane=nn.Conv2d(32, 32, 3, padding=1),
        strided=nn.Conv2d(32, 64, 3, stride=2, padding=1),
        pointwise=nn.Conv2d(32, 64, 1)), [randn(3, 32, 7, 7)])
    case("conv_transpose2d_batched", mod(nn.ConvTranspose2d, 32, 32, 3, padding=1),
         [randn(2, 32, 6, 16)])

    class FilterGradient(nn.Module):
        # A window larger than the output, both operands at run time: the
        # form of a training step's filter gradient.
        def forward(self, x, w):
            return F.conv2d(x, w, padding=1)

    case("conv2d_filter_gradient", FilterGradient, [randn(32, 3, 9, 9), randn(32, 3, 8, 8)])
    class RuntimeFilter(nn.Module):
        # The filter is an input, flipped at run time (no constant to fold).
        def forward(self, x, w):
            return F.conv_transpose2d(x, w, stride=2, padding=1)

    case("conv_transpose2d_runtime_filter", RuntimeFilter, [randn(2, 16, 6, 5), randn(16, 32, 5, 5)])
    case("conv_transpose2d", multi(
        stride_outpad_groups=nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
        dilation=nn.ConvTranspose2d(4, 3, 3, stride=(1, 2), dilation=2, bias=False),
        # Kernel equal to the strides: non-overlapping blocks, a matmul.
        blocks=nn.ConvTranspose2d(4, 5, 2, stride=2),
        blocks_rect=nn.ConvTranspose2d(4, 3, (3, 2), stride=(3, 2), bias=False)), [x4])

    # ---- upsampling ----------------------------------------------------------
    # Resize takes scales or sizes; opset 11 has the roi input and other forms.
    x_up = randn(1, 2, 4, 5)
    case("upsample2d", multi(
        nearest=nn.Upsample(scale_factor=2, mode="nearest"),
        bilinear=nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
        bilinear_align_corners=nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True),
        size_bilinear=lambda x: F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=False),
        size_nearest=lambda x: F.interpolate(x, size=(7, 9), mode="nearest"),
        frac_nearest=lambda x: F.interpolate(x, scale_factor=1.5, mode="nearest"),
        down_bilinear=lambda x: F.interpolate(x, size=(3, 2), mode="bilinear", align_corners=False),
        bicubic=lambda x: F.interpolate(x, scale_factor=2, mode="bicubic", align_corners=False)),
        [x_up], opsets=WITH_11)
    case("upsample1d", multi(
        nearest=lambda x: F.interpolate(x, scale_factor=3, mode="nearest"),
        linear=lambda x: F.interpolate(x, scale_factor=2, mode="linear", align_corners=False)),
        [x3], opsets=WITH_11)
    case("upsample3d_trilinear", fn(lambda m, x: F.interpolate(
        x, scale_factor=2, mode="trilinear", align_corners=True)), [randn(1, 2, 2, 3, 3)], opsets=WITH_11)
    case("pixel_shuffle", mod(nn.PixelShuffle, 2), [randn(1, 8, 3, 4)])
    # GridSample (opset 16): every mode, padding mode and corner alignment,
    # with grid points up to 30% outside the input.
    grid_ops = {}
    for mode in ("bilinear", "nearest", "bicubic"):
        for padding in ("zeros", "border", "reflection"):
            for align in (False, True):
                grid_ops[f"{mode}_{padding}_{'align' if align else 'noalign'}"] = (
                    lambda x, g, mode=mode, padding=padding, align=align: F.grid_sample(
                        x, g, mode=mode, padding_mode=padding, align_corners=align))
    case("grid_sample", multi(**grid_ops), [randn(2, 3, 5, 6), uniform(2, 4, 7, 2, lo=-1.3, hi=1.3)],
         opsets=(16, 17))
    case("pixel_unshuffle", mod(nn.PixelUnshuffle, 2), [randn(1, 2, 4, 6)])

    # ---- embedding -----------------------------------------------------------
    case("embedding", mod(nn.Embedding, 10, 8), [randint(2, 5, hi=10)])
    case("embedding_bag_mean", fn(lambda m, i: m.emb(i).mean(dim=1), emb=nn.Embedding(10, 8)),
         [randint(3, 4, hi=10)])

    # ---- tensor manipulation -------------------------------------------------
    case("cat_stack", multi(cat=lambda x, y: torch.cat([x, y, x], dim=1),
                            cat_last=lambda x, y: torch.cat([x, y], dim=-1),
                            stack=lambda x, y: torch.stack([x, y], dim=2)),
         [randn(2, 3, 4), randn(2, 3, 4)])
    # Split, Squeeze and Unsqueeze take attributes at opset 11, inputs from 13.
    case("split_chunk_unbind", fn(lambda m, x: (*torch.split(x, [1, 3, 2], dim=1), *torch.chunk(x, 2, dim=2),
                                                *x.unbind(0))),
         [randn(2, 6, 8)], opsets=WITH_11)
    case("squeeze_unsqueeze", multi(squeeze1=lambda x: x.squeeze(1), squeeze_all=lambda x: x.squeeze(),
                                    unsqueeze0=lambda x: x.unsqueeze(0),
                                    unsqueeze_last=lambda x: x.unsqueeze(-1),
                                    none_index=lambda x: x[:, None]),
         [randn(2, 1, 4, 1)], opsets=WITH_11)
    case("slice", multi(steps=lambda x: x[:, 1::2, ::3], negative_start=lambda x: x[..., -3:],
                        narrow=lambda x: x.narrow(2, 2, 4), both_ends=lambda x: x[:, :, 1:-1],
                        flip=lambda x: torch.flip(x, [2]),              # Slice with step -1
                        flip2=lambda x: torch.flip(x, [0, 1])),
         [randn(2, 6, 8)], opsets=WITH_11)
    case("transpose_permute", multi(transpose=lambda x: x.transpose(1, 2),
                                    permute=lambda x: x.permute(2, 0, 3, 1),
                                    swap_last=lambda x: x.transpose(-1, -2), t=lambda x: x[0, 0].t()),
         [randn(2, 3, 4, 5)])
    case("reshape_flatten", multi(reshape=lambda x: x.reshape(2, -1),
                                  view_size=lambda x: x.view(x.size(0), 3, -1),   # Shape, Gather, Concat
                                  flatten1=lambda x: torch.flatten(x, 1), flatten_all=lambda x: x.flatten(),
                                  flatten01=nn.Flatten(0, 1)),
         [randn(2, 3, 4, 5)])
    case("expand_repeat", multi(expand=lambda x: x.expand(3, 4, 5),
                                expand_as=lambda x: x.expand_as(torch.empty(2, 3, 4, 5)),
                                repeat=lambda x: x.repeat(2, 1, 3)),                 # Tile
         [randn(1, 4, 5)])
    # F.pad's exported pads are computed: constant (begin, end) pairs are
    # reversed with Slice(step -1), Transpose[1, 0] and Reshape to 1-D.
    case("pad_constant", fn(lambda m, x: F.pad(x, (1, 2, 0, 3), value=0.5)), [x4], opsets=WITH_11)
    case("pad_reflect", fn(lambda m, x: F.pad(x, (2, 1, 1, 2), mode="reflect")), [x4], opsets=WITH_11)
    case("pad_replicate", fn(lambda m, x: F.pad(x, (2, 1, 3, 0), mode="replicate")), [x4], opsets=WITH_11)
    case("pad_negative", fn(lambda m, x: F.pad(x, (-1, 2, 1, -2))), [x4], opsets=WITH_11)
    case("zero_pad2d", mod(nn.ZeroPad2d, (1, 0, 2, 1)), [x4])
    case("where_masked_fill", multi(
        where=lambda x, y: torch.where(x > 0, x, y),
        masked_fill=lambda x, y: x.masked_fill(torch.tensor([True, False, False, True]), -1.5)),
        [randn(2, 3, 4), randn(3, 4)])
    case("masked_fill_input_mask", fn(lambda m, x, k: x.masked_fill(k, 0.25)),   # a bool graph input
         [randn(3, 4), boolmask(3, 4)])
    case("tril_triu", multi(tril=lambda x: torch.tril(x), triu=lambda x: torch.triu(x),
                            tril_1=lambda x: torch.tril(x, 1), triu_minus1=lambda x: torch.triu(x, -1)),
         [randn(2, 5, 6)], opsets=(14, 17))
    case("cumsum_roll", multi(cumsum1=lambda x: torch.cumsum(x, dim=1),
                              cumsum_last=lambda x: torch.cumsum(x, dim=-1),
                              roll=lambda x: torch.roll(x, 2, dims=2),
                              roll2=lambda x: torch.roll(x, (-1, 1), dims=(0, 1))),
         [randn(2, 5, 6)])
    case("constants_like", multi(arange=lambda x: x + torch.arange(x.size(-1), dtype=torch.float32),
                                 zeros_like=lambda x: torch.zeros_like(x) + 2.0,
                                 ones=lambda x: torch.ones(x.shape[1], 1) * x,
                                 new_full=lambda x: x.new_full((3,), 1.5),
                                 full_like=lambda x: torch.full_like(x, -1.0).sum(dim=0)),
         [randn(2, 3, 5)])
    case("one_hot", fn(lambda m, i: F.one_hot(i, 6)), [randint(2, 4, hi=6)])
    case("gather_index", multi(gather_elements=lambda x, i: torch.gather(x, 1, i),
                               index_select=lambda x, i: torch.index_select(x, 1, torch.tensor([3, 0, 2, 2])),
                               list_index=lambda x, i: x[:, [4, 1]],
                               int_index=lambda x, i: x[1]),
         [randn(3, 5, 4), randint(3, 2, 4, hi=5)])
    case("index_select_input", fn(lambda m, x, i: torch.index_select(x, 0, i)),
         [randn(6, 3), randint(4, hi=6)])
    case("topk", fn(lambda m, x: torch.topk(x, 3, dim=-1)), [randn(2, 3, 7)])
    case("sort", fn(lambda m, x: torch.sort(x, dim=1, descending=True)), [randn(2, 5, 3)])
    # ScatterElements / ScatterND.  At opset 13 scatter_add is exported as
    # x + scatter(zeros, ...), and index_put_(accumulate=True) likewise with
    # ScatterND at every opset: right only for distinct indices.
    case("scatter", multi(scatter=lambda x, i, v: x.scatter(1, i, v),
                          scatter_add=lambda x, i, v: x.scatter_add(1, i, v),
                          scatter_add0=lambda x, i, v: x.t().scatter_add(0, i.t(), v.t())),
         [randn(3, 5), distinct_indices(3, 5, 2), randn(3, 2)], opsets=(13, 16, 17))
    case("scatter_add_duplicates", fn(lambda m, x, i, v: x.scatter_add(1, i, v)),   # reduction="add"
         [randn(3, 5), randint(3, 6, hi=5), randn(3, 6)], opsets=(16, 17))

    def setitem(x):
        y = x.clone()
        y[:, 1] = 0.0
        y[2, 1:3] = x[0, :2]
        return y

    rows = torch.tensor([3, 1])
    case("index_put", multi(index_put=lambda x: x.clone().index_put_((rows,), torch.zeros(2, 5)),
                            accumulate=lambda x: x.clone().index_put_((rows,), torch.ones(2, 5),
                                                                      accumulate=True),
                            setitem=setitem),
         [randn(4, 5)])

    # ---- reductions ----------------------------------------------------------
    # ReduceSum takes its axes as an input from opset 13, the others from 18.
    xr = randn(3, 4, 5)
    case("reduce_sum_mean", multi(sum1_keep=lambda x: x.sum(dim=1, keepdim=True),
                                  sum02=lambda x: x.sum(dim=(0, 2)),
                                  sum_all=lambda x: x.sum(), mean_last=lambda x: x.mean(dim=-1),
                                  mean12_keep=lambda x: x.mean(dim=(1, 2), keepdim=True),
                                  mean_all=lambda x: x.mean()),
         [xr], opsets=WITH_11)
    case("reduce_max_min", multi(amax_last=lambda x: x.amax(dim=-1),
                                 amin0_keep=lambda x: x.amin(dim=0, keepdim=True),
                                 amax12=lambda x: x.amax(dim=(1, 2)), max_values=lambda x: x.max(dim=1)[0],
                                 min_all=lambda x: x.min(), argmax=lambda x: x.argmax(dim=1),
                                 argmin_keep=lambda x: x.argmin(dim=-1, keepdim=True),
                                 max_indices=lambda x: x.max(dim=2)[1]),
         [xr])
    case("reduce_prod", multi(prod1=lambda x: x.prod(dim=1),
                              prod2_keep=lambda x: x.prod(dim=2, keepdim=True)),
         [uniform(3, 4, 5, lo=0.5, hi=1.5)])
    case("reduce_norms", multi(norm2=lambda x: torch.norm(x, p=2, dim=-1),
                               norm2_keep=lambda x: x.norm(dim=1, keepdim=True),
                               normalize=lambda x: F.normalize(x, dim=-1),
                               norm1=lambda x: torch.norm(x, p=1, dim=1),
                               logsumexp=lambda x: torch.logsumexp(x, dim=1),
                               logsumexp_keep=lambda x: torch.logsumexp(x, dim=-1, keepdim=True)),
         [xr], opsets=WITH_11)
    case("var_std", multi(var=lambda x: x.var(dim=-1), std_keep=lambda x: x.std(dim=1, keepdim=True),
                          var_biased=lambda x: x.var(dim=(1, 2), unbiased=False)),
         [xr])
    case("cosine_similarity", fn(lambda m, x, y: F.cosine_similarity(x, y, dim=-1)), [xr, randn(3, 4, 5)])

    # ---- elementwise math ----------------------------------------------------
    case("math_positive", multi(square=lambda x, y: torch.pow(x, 2), pow_half=lambda x, y: x ** 0.5,
                                pow=lambda x, y: torch.pow(x, y), pow_neg=lambda x, y: x ** -1.5,
                                sqrt=lambda x, y: torch.sqrt(x), rsqrt=lambda x, y: torch.rsqrt(x),
                                log=lambda x, y: torch.log(x), log1p=lambda x, y: torch.log1p(x),
                                exp=lambda x, y: torch.exp(y)),
         [uniform(2, 3, 7, lo=0.2, hi=3.0), randn(2, 3, 7)])
    case("math_signed", multi(abs=torch.abs, neg=lambda x: -x, reciprocal=torch.reciprocal,
                              div_scalar=lambda x: 1.0 / x, sign=torch.sign, erf=torch.erf, sin=torch.sin,
                              cos=torch.cos, atan=torch.atan, tan=lambda x: torch.tan(0.3 * x)),
         [randn(2, 3, 7, scale=2.0)])
    case("rounding", multi(floor=torch.floor, ceil=torch.ceil, round=torch.round),   # round half to even
         [with_halves(2, 3, 7)])
    case("clamp", multi(clamp=lambda x: torch.clamp(x, -1.0, 0.5), clamp_min=lambda x: x.clamp(min=0.2),
                        clamp_max=lambda x: x.clamp(max=-0.1)),
         [x3], opsets=WITH_11)
    case("min_max_elementwise", multi(maximum=torch.maximum, minimum=torch.minimum, max=torch.max,
                                      min_scaled=lambda x, y: torch.min(x, 0.5 * y)),
         [randn(2, 3, 7), randn(3, 7)])
    # torch.floor_divide is left out: PyTorch 1.13 rounds it down, but its
    # exporter still writes truncation (Div, Cast to int64 and back).
    case("remainder_fmod_div", multi(remainder=torch.remainder, fmod=torch.fmod,
                                     remainder_scalar=lambda x, y: torch.remainder(x, 1.5),
                                     fmod_scalar=lambda x, y: torch.fmod(x, -0.7),
                                     div_floor=lambda x, y: torch.div(x, y, rounding_mode="floor"),
                                     div_trunc=lambda x, y: torch.div(x, y, rounding_mode="trunc")),
         [randn(2, 3, 7, scale=4.0), uniform(2, 3, 7, lo=0.5, hi=2.0)])
    case("int_arith", multi(floordiv=lambda i, j: i // 3, mod=lambda i, j: i % 7,
                            mul_sub=lambda i, j: i * j - 4,
                            remainder=lambda i, j: torch.remainder(i - 50, j), sum=lambda i, j: i.sum(dim=1),
                            max=lambda i, j: i.max(dim=-1)[0]),
         [randint(2, 5, hi=100), randint(2, 5, lo=1, hi=10)])
    case("arith_broadcast", multi(add=lambda x, y: x + y, sub_scaled=lambda x, y: x - 2.0 * y,
                                  mul=lambda x, y: x * y, div=lambda x, y: x / (y.abs() + 0.5),
                                  rsub=lambda x, y: 3.0 - x),
         [randn(2, 3, 7), randn(7)])

    # ---- matmul family -------------------------------------------------------
    case("matmul", multi(bmm=lambda a, b, v: torch.bmm(a, b),
                         einsum_bij_bjk=lambda a, b, v: torch.einsum("bij,bjk->bik", a, b),
                         matmul_bcast=lambda a, b, v: a @ b[0],
                         matmul_vector=lambda a, b, v: torch.matmul(a, v),
                         matmul_transposed=lambda a, b, v: b.transpose(1, 2) @ a.transpose(1, 2)),
         [randn(2, 3, 4), randn(2, 4, 5), randn(4)])
    case("einsum_attention", fn(lambda m, q, k: torch.einsum("bhqd,bhkd->bhqk", q, k)),
         [randn(2, 2, 3, 4), randn(2, 2, 5, 4)])
    w_nobias = torch.randn(5, 6)
    case("linear", multi(linear_nobias=lambda x: F.linear(x, w_nobias), linear=nn.Linear(6, 5)),
         [randn(2, 3, 6)])
    case("addmm", fn(lambda m, x: torch.addmm(m.b, x, m.w, beta=0.5, alpha=2.0),
                     b=torch.randn(5), w=torch.randn(6, 5)),
         [randn(3, 6)])   # Gemm
    case("baddbmm_outer", fn(lambda m, c, a, b, u: (torch.baddbmm(c, a, b, beta=0.5, alpha=1.5),
                                                    torch.outer(u, u))),
         [randn(2, 3, 5), randn(2, 3, 4), randn(2, 4, 5), randn(4)])

    # ---- comparison and logic ------------------------------------------------
    one, zero = torch.tensor(1.0), torch.tensor(0.0)
    case("compare_where", multi(gt=lambda x, y: torch.where(torch.gt(x, y), x, y),
                                lt=lambda x, y: torch.where(x < 0.2, one, y),
                                ge=lambda x, y: torch.where(x >= y, x - y, zero),
                                le=lambda x, y: torch.where(x <= -0.5, y, x)),
         [randn(2, 3, 7), randn(2, 3, 7)])
    case("compare_bool_out", multi(gt=lambda x, y: x > y, lt=lambda x, y: x < 0,
                                   eq=lambda x, y: torch.eq(torch.floor(x), torch.floor(y)),
                                   ne=lambda x, y: x != 0.5 * y),
         [randn(2, 3, 7, scale=2.0), randn(2, 3, 7, scale=2.0)])
    case("logical_ops", multi(and_=lambda x, y: torch.where(torch.logical_and(x > 0, y > 0), x, y),
                              or_=lambda x, y: torch.where(torch.logical_or(x > 1, y < -1), x * y, x + y),
                              not_=lambda x, y: torch.where(~(x > 0), zero, x),
                              xor=lambda x, y: torch.logical_xor(x > 0, y > 0)),
         [randn(2, 3, 7), randn(2, 3, 7)])
    case("bool_to_float", multi(mask_mul=lambda x: (x > 0).float() * x,
                                count=lambda x: (x < 0).to(torch.float32).sum(dim=-1)),
         [randn(2, 3, 7)])

    # ---- casts ---------------------------------------------------------------
    case("cast_int_to_float", multi(to_float=lambda i, x: i.float() * 0.5 + x,
                                    via_int32=lambda i, x: i.to(torch.int32).float()),
         [randint(2, 5, hi=100), randn(2, 5)])
    table = torch.randn(8, 3)
    case("cast_float_to_index", fn(lambda m, x, t: table[(x * 8).long()].sum(dim=-1)
                                   + t[:, (x[0] * 4).long()].sum()),
         [uniform(4, 5, lo=0.0, hi=0.99), randn(2, 4)])
    case("cast_float_to_int_out", multi(long=lambda x: x.long(), int=lambda x: x.int(),
                                        scaled=lambda x: (x * 2).to(torch.int64) + 1),
         [randn(2, 3, 5, scale=5.0)])

    # ---- blocks --------------------------------------------------------------
    class CausalAttention(nn.Module):
        def __init__(self, d=16, h=2, T=6):
            super().__init__()
            self.h = h
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln = nn.LayerNorm(d)
            self.register_buffer("causal", torch.tril(torch.ones(T, T, dtype=torch.bool)))

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln(x)).chunk(3, dim=-1)
            q = q.view(B, T, self.h, C // self.h).transpose(1, 2)
            k = k.view(B, T, self.h, C // self.h).transpose(1, 2)
            v = v.view(B, T, self.h, C // self.h).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) / math.sqrt(C // self.h)
            att = att.masked_fill(~self.causal[:T, :T], float("-inf"))
            y = torch.softmax(att, dim=-1) @ v
            y = y.transpose(1, 2).reshape(B, T, C)
            return x + self.proj(y)

    case("causal_attention", CausalAttention, [randn(2, 6, 16)])

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Flatten(), nn.Linear(12, 32), nn.GELU(), nn.Dropout(0.3),
                                     nn.Linear(32, 16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 4))

        def forward(self, x):
            return F.log_softmax(F.dropout(self.net(x), 0.5, training=self.training), dim=-1)

    case("mlp_dropout", MLP, [randn(4, 3, 4)])

    class ConvBlock(nn.Module):
        """Conv + BN + activation + pool + residual, as in small CNNs."""

        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(8)
            self.c2 = nn.Conv2d(8, 8, 3, padding=1, groups=8)
            self.bn2 = nn.BatchNorm2d(8)
            self.fc = nn.Linear(8, 5)

        def forward(self, x):
            y = F.relu6(self.bn1(self.c1(x)))
            y = y + F.hardswish(self.bn2(self.c2(y)))
            y = F.max_pool2d(y, 2)
            return self.fc(F.adaptive_avg_pool2d(y, 1).flatten(1))

    case("conv_block", ConvBlock, [randn(2, 3, 8, 8)])

    # ---- recurrent -----------------------------------------------------------
    # ONNX's LSTM, GRU (linear_before_reset = 1) and RNN ops with their
    # initializers, stacked and bidirectional layers, batch-first and given
    # initial states; nnc unrolls them over the static sequence length.
    def flat(out):
        """(y, (h, c)) or (y, h) as one flat tuple."""
        y, state = out
        return (y, *state) if isinstance(state, tuple) else (y, state)

    case("lstm_stacked_bidirectional",
         fn(lambda m, x: flat(m.rnn(x)), rnn=nn.LSTM(5, 7, num_layers=2, bidirectional=True)),
         [randn(6, 3, 5)], opsets=(13, 14, 17))
    case("lstm_batch_first_states",
         fn(lambda m, x, h, c: flat(m.rnn(x, (h, c))), rnn=nn.LSTM(4, 6, batch_first=True)),
         [randn(3, 5, 4), randn(1, 3, 6), randn(1, 3, 6)])
    case("gru_bidirectional",
         fn(lambda m, x: flat(m.rnn(x)), rnn=nn.GRU(5, 6, bidirectional=True, batch_first=True)),
         [randn(2, 7, 5)], opsets=(13, 14, 17))
    case("gru_stacked_states",
         fn(lambda m, x, h: flat(m.rnn(x, h)), rnn=nn.GRU(3, 4, num_layers=2)),
         [randn(5, 2, 3), randn(2, 2, 4)])
    case("rnn_tanh_relu",
         fn(lambda m, x: flat(m.tanh(x)) + flat(m.relu(x)),
            tanh=nn.RNN(4, 5, bidirectional=True), relu=nn.RNN(4, 3, nonlinearity="relu", num_layers=2)),
         [randn(6, 2, 4, scale=2.0)])

    # ---- what the exporter cannot export here ---------------------------------
    UNEXPORTABLE = []

    def unexportable(name, make, inputs, opset, reason):
        UNEXPORTABLE.append(dict(name=name, make=make, inputs=inputs, opset=opset, reason=reason))

    unexportable("threshold", fn(lambda m, x: F.threshold(x, 0.5, 0.0)), [x3], 17,
                 "F.threshold with a non-zero threshold")
    unexportable("conv2d_same", mod(nn.Conv2d, 4, 5, 3, padding="same"), [x4], 17,
                 "Conv2d(padding='same'): aten::_convolution_mode")
    unexportable("mT", fn(lambda m, x: x.mT), [x4], 17, "Tensor.mT")
    unexportable("expm1", fn(lambda m, x: torch.expm1(x)), [x3], 17, "torch.expm1")
    unexportable("trunc", fn(lambda m, x: torch.trunc(x)), [x3], 17, "torch.trunc")
    unexportable("logical_not", fn(lambda m, x: torch.logical_not(x > 0)), [x3], 17, "torch.logical_not")
    unexportable("where_python_scalar", fn(lambda m, x: torch.where(x > 0, 1.0, x)), [x3], 17,
                 "torch.where with a Python float branch: the exporter's model fails ONNX type inference")
    unexportable("interpolate_nearest_exact",
                 fn(lambda m, x: F.interpolate(x, size=(7, 9), mode="nearest-exact")),
                 [x_up], 17, "F.interpolate(mode='nearest-exact')")
    unexportable("layernorm_no_affine", mod(nn.LayerNorm, 8, elementwise_affine=False), [x3], 17,
                 "LayerNorm(elementwise_affine=False) at opset 17: "
                 "LayerNormalization without its Scale input")
    unexportable("scatter_reduce", fn(lambda m, x, i, v: x.scatter_reduce(1, i, v, "amax")),
                 [randn(3, 5), randint(3, 6, hi=5), randn(3, 6)], 17, "Tensor.scatter_reduce")
    unexportable("tril_opset13", fn(lambda m, x: torch.tril(x)), [randn(5, 6)], 13,
                 "Trilu exists from opset 14")

    # ---- build, export, write --------------------------------------------------

    # The exporter's refusals, and its models that ONNX's checker rejects.
    export_errors = (torch.onnx.errors.OnnxExporterError, onnx.checker.ValidationError,
                     onnx.shape_inference.InferenceError)

    def randomize_constant_params(model):
        """Fresh norms have unit scales and zero shifts, fresh biases may be
        constant: perturb them so that a dropped term shows."""
        with torch.no_grad():
            for p in model.parameters():
                if p.numel() > 0 and torch.all(p == p.view(-1)[0]):
                    p.add_(0.1 * torch.randn_like(p))

    def calibrate_batchnorm(model, inputs):
        """Non-trivial running statistics, from one pass in training mode."""
        bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
        if not bns:
            return
        for bn in bns:
            bn.reset_running_stats()
            bn.momentum = None
            bn.train()
        with torch.no_grad():
            model(*[x * 1.5 + 0.3 if x.is_floating_point() else x for x in inputs])
        for bn in bns:
            bn.momentum = 0.1
            bn.eval()

    def build(c):
        torch.manual_seed(SEED)
        model = c["make"]().eval()
        randomize_constant_params(model)
        g = torch.Generator().manual_seed(SEED + 1)
        inputs = [spec(g) for spec in c["inputs"]]
        calibrate_batchnorm(model, inputs)
        return model, inputs

    def export(model, inputs, path, opset):
        with torch.no_grad():
            outputs = model(*inputs)
        if isinstance(outputs, torch.Tensor):
            outputs = (outputs,)
        outputs = tuple(outputs)
        output_names = getattr(model, "output_names", [f"y{i}" for i in range(len(outputs))])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, tuple(inputs), str(path), opset_version=opset,
                              input_names=[f"x{i}" for i in range(len(inputs))],
                              output_names=output_names,
                              do_constant_folding=True)
        proto = onnx.load(str(path))
        onnx.checker.check_model(proto, full_check=True)
        return outputs, proto

    def write(c, opset, model, inputs, cdir):
        if cdir.exists():
            shutil.rmtree(cdir)
        data = cdir / "test_data_set_0"
        data.mkdir(parents=True)
        outputs, proto = export(model, inputs, cdir / "model.onnx", opset)
        gin, gout = list(proto.graph.input), list(proto.graph.output)
        if len(gin) != len(inputs) or len(gout) != len(outputs):
            raise RuntimeError(f"{c['name']}: graph has {len(gin)} inputs/{len(gout)} outputs, "
                               f"PyTorch {len(inputs)}/{len(outputs)}")
        for i, (vi, t) in enumerate(zip(gin, inputs)):
            (data / f"input_{i}.pb").write_bytes(
                numpy_helper.from_array(t.numpy(), vi.name).SerializeToString())
        for i, (vi, t) in enumerate(zip(gout, outputs)):
            (data / f"output_{i}.pb").write_bytes(
                numpy_helper.from_array(t.contiguous().numpy(), vi.name).SerializeToString())
        return proto, len(outputs)

    names = [c["name"] for c in CASES]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, dup
    if only is not None:
        unknown = set(only) - set(names) - {u["name"] for u in UNEXPORTABLE}
        if unknown:
            sys.exit(f"unknown case(s): {', '.join(sorted(unknown))}")

    if out_dir is None:   # --list
        for c in CASES:
            print(f"{c['name']:<30} opsets {','.join(map(str, c['opsets']))}"
                  + (f"  xfail: {c['xfail']}" if c["xfail"] else ""))
        for u in UNEXPORTABLE:
            print(f"{u['name']:<30} not exportable at opset {u['opset']}: {u['reason']}")
        return 0

    start = time.time()
    out_dir.mkdir(parents=True, exist_ok=True)
    entries, skipped = [], []
    for c in CASES:
        if only is not None and c["name"] not in only:
            continue
        model, inputs = build(c)
        for opset in c["opsets"]:
            rel = f"{c['name']}/opset{opset}"
            try:
                proto, nout = write(c, opset, model, inputs, out_dir / rel)
            except Exception as e:
                if not keep_going:
                    raise
                print(f"EXPORT ERROR {rel}: {type(e).__name__}: {str(e).splitlines()[0]}", flush=True)
                continue
            ops = sorted({n.op_type for n in proto.graph.node})
            entries.append(dict(dir=rel, outputs=nout, ops=ops, xfail=c["xfail"],
                                xfail_match=c["xfail_match"]))
            if verbose:
                print(f"{rel:<40} {' '.join(ops)}", flush=True)
    for u in UNEXPORTABLE:
        if only is not None and u["name"] not in only:
            continue
        torch.manual_seed(SEED)
        model = u["make"]().eval()
        g = torch.Generator().manual_seed(SEED + 1)
        inputs = [spec(g) for spec in u["inputs"]]
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model(*inputs)   # PyTorch itself runs it: only the export fails
        tmp = out_dir / "unexportable.onnx"
        try:
            export(model, inputs, tmp, u["opset"])
        except export_errors as e:
            skipped.append(dict(name=f"{u['name']}/opset{u['opset']}", reason=u["reason"]))
            if verbose:
                print(f"{u['name']}: {type(e).__name__}: {str(e).splitlines()[0]}", flush=True)
            continue
        finally:
            tmp.unlink(missing_ok=True)
        sys.exit(f"{u['name']}: exports at opset {u['opset']} now; make it a case")
    (out_dir / MANIFEST).write_text(json.dumps(dict(models=entries, skipped=skipped), indent=1) + "\n")
    print(f"exported {len(entries)} models of {len({e['dir'].split('/')[0] for e in entries})} cases, "
          f"{len(skipped)} not exportable, in {time.time() - start:.1f} s", flush=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="directory of the models and test data")
    ap.add_argument("--check", nargs=2, metavar=("NNC", "NNC_RUN"),
                    help="compile and run the exported models instead of exporting")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel compiles (check mode)")
    ap.add_argument("--cases", help="comma-separated subset of the cases (export mode)")
    ap.add_argument("--verbose", action="store_true", help="print each model's ONNX ops")
    ap.add_argument("--keep-going", action="store_true",
                    help="report export errors and go on (to try out new cases)")
    ap.add_argument("--list", action="store_true", help="print the cases and exit")
    args = ap.parse_args()
    if args.list:
        return export_all(None, None, False)
    if args.out is None:
        ap.error("--out is required")
    if args.check:
        return check(args.out, *args.check, max(1, args.jobs))
    only = set(args.cases.split(",")) if args.cases else None
    return export_all(args.out, only, args.verbose, args.keep_going)


if __name__ == "__main__":
    sys.exit(main())
