#!/usr/bin/python3
"""Export nnc's benchmark/test models to ONNX, with reference data.

Every model gets random weights from a fixed seed, is exported with
torch.onnx.export, and is written in ONNX's backend test-data layout:

    OUT/<name>/model.onnx
    OUT/<name>/test_data_set_0/input_0.pb      TensorProto named as the graph input
    OUT/<name>/test_data_set_0/output_0.pb     PyTorch's eval-mode result, float32
    OUT/<name>/tolerance.json                  {"atol": ...} for checking a float32 result
    OUT/<name>/stamp.json                      what produced the files (for skipping)

The tolerance comes from the model's own conditioning: PyTorch's float32
result is compared with its float64 one, and a result as close to float64 as
PyTorch's may differ from PyTorch's by twice that; the atol is 4 times
PyTorch's largest deviation (at least 1e-5, nnc-run's default).

Run it with Debian's interpreter (/usr/bin/python3): it needs the python3-torch
(1.13), python3-onnx (1.12) and python3-numpy packages.  ResNet-18 and
MobileNetV2 are transcribed from torchvision's definitions below, so the bench
set needs no torchvision; the wide set (`--set wide`: the bench CNNs and the
encoder at other shapes, and torchvision's classifiers of other families)
needs python3-torchvision (0.14).

    gen_models.py --out DIR [--opset 17] [--set bench|wide] [--models a,b]
                  [--dynamic-batch] [--dynamic-seq] [--fold-batchnorm] [--force] [--verbose] [--list]
"""

import argparse
import copy
import hashlib
import json
import math
import shutil
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper

SEED = 0
STAMP_FILE = "stamp.json"


# --------------------------------------------------------------------------
# MLP
# --------------------------------------------------------------------------

def mlp():
    return nn.Sequential(
        nn.Linear(784, 512), nn.ReLU(),
        nn.Linear(512, 512), nn.ReLU(),
        nn.Linear(512, 10),
    )


# --------------------------------------------------------------------------
# ResNet-18, as torchvision.models.resnet18 (BasicBlock, v1.5 strides)
# --------------------------------------------------------------------------

def conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, 3, stride, padding=1, bias=False)


def conv1x1(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, 1, stride, bias=False)


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet18(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(64, 2)
        self.layer2 = self._make_layer(128, 2, stride=2)
        self.layer3 = self._make_layer(256, 2, stride=2)
        self.layer4 = self._make_layer(512, 2, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)
        # torchvision's initialisation.
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def _make_layer(self, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes, stride),
                                       nn.BatchNorm2d(planes))
        layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes
        layers += [BasicBlock(planes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


# --------------------------------------------------------------------------
# MobileNetV2, as torchvision.models.mobilenet_v2 (width 1.0)
# --------------------------------------------------------------------------

def conv_bn_relu6(inp, oup, kernel_size=3, stride=1, groups=1):
    """torchvision's Conv2dNormActivation with its MobileNetV2 settings."""
    return nn.Sequential(
        nn.Conv2d(inp, oup, kernel_size, stride, (kernel_size - 1) // 2,
                  groups=groups, bias=False),
        nn.BatchNorm2d(oup),
        nn.ReLU6(inplace=True),
    )


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride, expand_ratio):
        super().__init__()
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(conv_bn_relu6(inp, hidden_dim, kernel_size=1))
        layers += [
            conv_bn_relu6(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim),
            nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
            nn.BatchNorm2d(oup),
        ]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


class MobileNetV2(nn.Module):
    # (expand ratio t, output channels c, repeats n, first stride s).  At width
    # 1.0 every channel count is already a multiple of 8, so torchvision's
    # _make_divisible rounding leaves them unchanged and is omitted.
    SETTINGS = [
        (1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
        (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1),
    ]

    def __init__(self, num_classes=1000):
        super().__init__()
        input_channel, last_channel = 32, 1280
        features = [conv_bn_relu6(3, input_channel, stride=2)]
        for t, c, n, s in self.SETTINGS:
            for i in range(n):
                features.append(InvertedResidual(input_channel, c, s if i == 0 else 1, t))
                input_channel = c
        features.append(conv_bn_relu6(input_channel, last_channel, kernel_size=1))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(p=0.2), nn.Linear(last_channel, num_classes))
        # torchvision's initialisation.
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(F.adaptive_avg_pool2d(x, (1, 1)), 1)
        return self.classifier(x)


# --------------------------------------------------------------------------
# Transformer encoder (2 x nn.TransformerEncoderLayer: post-LN, exact GELU)
# --------------------------------------------------------------------------

class TransformerEncoder(nn.Module):
    """Stack of nn.TransformerEncoderLayer with a batch-first (B, S, E) interface.

    With batch_first=True, PyTorch 1.13 may route TransformerEncoderLayer to
    the fused torch._transformer_encoder_layer_fwd op (whenever grad is off),
    which has no ONNX export.  batch_first=False never takes that path; the
    two transposes here are the ones nn.MultiheadAttention itself inserts in
    batch-first mode, and they keep the batch on dim 0 like every other model.

    The layers are applied in a loop, which is all nn.TransformerEncoder does
    without masks, because nn.TransformerEncoder deep-copies one layer: every
    layer would start with the same weights, and a compiler mixing up the
    layers' weights would go unnoticed.
    """

    def __init__(self, d_model=256, nhead=4, dim_feedforward=1024, num_layers=2):
        super().__init__()
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward,
                                       activation="gelu", batch_first=False)
            for _ in range(num_layers))

    def forward(self, x):
        x = x.transpose(0, 1)
        for layer in self.layers:
            x = layer(x)
        return x.transpose(0, 1)


# --------------------------------------------------------------------------
# GPT decoder block (nanoGPT style: pre-LN, causal attention, tanh GELU)
# --------------------------------------------------------------------------

class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_head, max_seq):
        super().__init__()
        self.n_head = n_head
        self.scale = 1.0 / math.sqrt(d_model // n_head)
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)
        # Lower-triangular constant; sliced to the actual sequence length.
        self.register_buffer("mask", torch.tril(torch.ones(max_seq, max_seq))
                             .view(1, 1, max_seq, max_seq))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * self.scale
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class GPTBlock(nn.Module):
    # The causal mask covers 512 tokens, so that a dynamic sequence runs up
    # to that length; the bench runs 64.
    def __init__(self, d_model=128, n_head=4, max_seq=512):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_head, max_seq)
        self.ln_2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model),
                                 nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


# --------------------------------------------------------------------------
# Small UNet: two levels down, bottleneck, two levels up
# --------------------------------------------------------------------------

def double_conv(inp, oup):
    return nn.Sequential(
        nn.Conv2d(inp, oup, 3, padding=1, bias=False), nn.BatchNorm2d(oup), nn.ReLU(inplace=True),
        nn.Conv2d(oup, oup, 3, padding=1, bias=False), nn.BatchNorm2d(oup), nn.ReLU(inplace=True),
    )


class UNetSmall(nn.Module):
    """Covers both common upsampling styles: a learned ConvTranspose2d on the
    lower level, nearest-neighbour Upsample (ONNX Resize) + conv on the upper."""

    def __init__(self, in_ch=3, out_ch=2):
        super().__init__()
        self.enc1 = double_conv(in_ch, 16)          # 64x64
        self.enc2 = double_conv(16, 32)             # 32x32
        self.pool = nn.MaxPool2d(2)
        self.bottleneck = double_conv(32, 64)       # 16x16
        self.up2 = nn.ConvTranspose2d(64, 32, kernel_size=2, stride=2)
        self.dec2 = double_conv(64, 32)             # 32x32, after concat with enc2
        self.up1 = nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"),
                                 nn.Conv2d(32, 16, 3, padding=1))
        self.dec1 = double_conv(32, 16)             # 64x64, after concat with enc1
        self.head = nn.Conv2d(16, out_ch, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        b = self.bottleneck(self.pool(e2))
        d2 = self.dec2(torch.cat([self.up2(b), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))
        return self.head(d1)


# --------------------------------------------------------------------------
# Registry: name -> (constructor, input shape with the batch on dim 0).
# Every model has one float32 input and one float32 output.
# --------------------------------------------------------------------------

MODELS = {
    "mlp_b1": (mlp, (1, 784)),
    "mlp_b64": (mlp, (64, 784)),
    "resnet18": (ResNet18, (1, 3, 224, 224)),
    "mobilenet_v2": (MobileNetV2, (1, 3, 224, 224)),
    "transformer_encoder": (TransformerEncoder, (1, 128, 256)),
    "gpt_block": (GPTBlock, (1, 64, 128)),
    "unet_small": (UNetSmall, (1, 3, 64, 64)),
}



def torchvision_classifier(name):
    """torchvision.models.<name> with random weights (nothing is downloaded)."""
    def ctor():
        import torchvision  # Debian's python3-torchvision; only the wide set needs it
        return getattr(torchvision.models, name)(weights=None)
    return ctor


# The wide set: shapes the bench models were not tuned at, and classifiers of
# families never tuned for. Integration/wide-models.test checks them against PyTorch.
WIDE_MODELS = {
    **{f"resnet18_{s}": (ResNet18, (1, 3, s, s)) for s in (32, 64, 512)},
    "resnet18_b8": (ResNet18, (8, 3, 224, 224)),
    **{f"mobilenet_v2_{s}": (MobileNetV2, (1, 3, s, s)) for s in (32, 64, 512)},
    "mobilenet_v2_b8": (MobileNetV2, (8, 3, 224, 224)),
    "transformer_encoder_s32": (TransformerEncoder, (1, 32, 256)),
    "transformer_encoder_s512": (TransformerEncoder, (1, 512, 256)),
    **{name: (torchvision_classifier(name), (1, 3, 224, 224))
       for name in ("squeezenet1_1", "shufflenet_v2_x1_0", "efficientnet_b0", "densenet121",
                    "regnet_y_400mf", "googlenet", "convnext_tiny")},
}
SETS = {"bench": MODELS, "wide": WIDE_MODELS}
ALL_MODELS = {**MODELS, **WIDE_MODELS}


def randomize_constant_params(model):
    """Perturb parameters that were initialised to a constant.

    Fresh networks have zero biases and unit norm scales; with those a compiler
    that drops a bias or a LayerNorm/BatchNorm affine term would still match
    the reference.  Small noise keeps the networks well-behaved.
    """
    with torch.no_grad():
        for p in model.parameters():
            if torch.all(p == p.view(-1)[0]):
                p.add_(0.1 * torch.randn_like(p))


def calibrate_batchnorm(model, input_shape):
    """Fill BatchNorm running statistics from one batch of random data.

    Untouched running stats (mean 0, var 1) make eval-mode BatchNorm nearly
    the identity, which would hide BN-folding mistakes; statistics measured on
    real activations are non-trivial and keep activations well scaled as in a
    trained network.  momentum=None gives a plain average over the pass.
    """
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    if not bns:
        return
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None
        bn.train()
    # A batch of 8: at small inputs the last levels are 1x1, and a variance
    # of 2 values (the batch of 2 used before) can be tiny enough to amplify
    # float32 rounding past the test data's tolerance (ResNet-18 at 32x32:
    # outputs near 2e4, PyTorch's own float32 off its float64 by 0.1).
    with torch.no_grad():
        model(torch.randn((8,) + input_shape[1:]))
    for bn in bns:
        bn.momentum = 0.1  # PyTorch's default; it appears in the exported node
        bn.eval()


def build(name):
    """Model in eval mode plus its input, reproducible per model."""
    ctor, input_shape = ALL_MODELS[name]
    torch.manual_seed(SEED)
    model = ctor().eval()
    randomize_constant_params(model)
    calibrate_batchnorm(model, input_shape)
    # The input comes from numpy's generator so that it does not depend on how
    # many torch random numbers the weight initialisation consumed.
    np.random.seed(SEED)
    x = torch.from_numpy(np.random.standard_normal(input_shape).astype(np.float32))
    return model, x


def script_digest():
    """Hash of this file: any change to it invalidates generated models."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def float32_atol(model, x, y):
    """4x the largest deviation of PyTorch's float32 result Y from float64."""
    with torch.no_grad():
        y64 = copy.deepcopy(model).double()(x.double())
    deviation = (y.double() - y64).abs().max().item()
    return max(1e-5, 4 * deviation)


# Models whose input is [batch, sequence, features]: --dynamic-seq makes dim 1
# symbolic too.
SEQUENCE_MODELS = ("transformer_encoder", "gpt_block")


def generate(name, model_dir, opset, dynamic_batch, fold_batchnorm, dynamic_seq=False):
    """Export one model and its test data into model_dir; return the ModelProto."""
    model, x = build(name)
    with torch.no_grad():
        y = model(x)
    atol = float32_atol(model, x, y)
    axes = {0: "batch"} if dynamic_batch else {}
    if dynamic_seq and name in SEQUENCE_MODELS:
        axes[1] = "seq"
    dynamic_axes = {"input": axes, "output": axes} if axes else None

    if model_dir.exists():
        shutil.rmtree(model_dir)  # start clean: no stale files from older versions
    data_dir = model_dir / "test_data_set_0"
    data_dir.mkdir(parents=True)
    model_path = model_dir / "model.onnx"
    # TrainingMode.EVAL makes the exporter fold BatchNorm into the preceding
    # Conv.  PRESERVE, with the model already in eval mode, exports the same
    # inference graph but keeps BatchNormalization nodes for nnc to handle.
    training = (torch.onnx.TrainingMode.EVAL if fold_batchnorm
                else torch.onnx.TrainingMode.PRESERVE)
    with warnings.catch_warnings():
        # PyTorch warns about constant folding with PRESERVE whatever the
        # model's mode; the concern (training-mode parameters) does not apply.
        warnings.filterwarnings("ignore", message="It is recommended that constant folding")
        torch.onnx.export(model, (x,), str(model_path), opset_version=opset,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes=dynamic_axes, training=training,
                          do_constant_folding=True)

    proto = onnx.load(str(model_path))
    onnx.checker.check_model(proto, full_check=True)

    # ONNX's backend test runner pairs files with graph inputs/outputs by
    # position, other tools by the TensorProto's name: set both.
    (graph_input,), (graph_output,) = proto.graph.input, proto.graph.output
    for path, tname, t in ((data_dir / "input_0.pb", graph_input.name, x),
                           (data_dir / "output_0.pb", graph_output.name, y)):
        assert t.dtype == torch.float32, (name, tname, t.dtype)
        path.write_bytes(numpy_helper.from_array(t.numpy(), tname).SerializeToString())
    (model_dir / "tolerance.json").write_text(json.dumps({"atol": atol}) + "\n")
    return proto


def summary(proto):
    opsets = {o.domain or "ai.onnx": o.version for o in proto.opset_import}
    ops = Counter(n.op_type for n in proto.graph.node)
    return (f"  opset {opsets}, {len(proto.graph.node)} nodes: "
            + ", ".join(f"{op} {c}" for op, c in sorted(ops.items())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="output directory")
    ap.add_argument("--opset", type=int, default=17, help="ONNX opset (default 17)")
    ap.add_argument("--set", choices=SETS, default="bench",
                    help="the models: bench (default) or wide (other shapes, torchvision's classifiers)")
    ap.add_argument("--models", help="comma-separated model names (default: the whole --set)")
    ap.add_argument("--dynamic-batch", action="store_true",
                    help="make dim 0 of inputs and outputs symbolic ('batch')")
    ap.add_argument("--dynamic-seq", action="store_true",
                    help="make dim 1 of the sequence models' inputs and outputs symbolic ('seq')")
    ap.add_argument("--fold-batchnorm", action="store_true",
                    help="let the exporter fold BatchNorm into Conv (PyTorch's default)")
    ap.add_argument("--force", action="store_true", help="regenerate up-to-date models too")
    ap.add_argument("--verbose", action="store_true", help="print opset and op counts")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    args = ap.parse_args()

    if args.list:
        print("\n".join(SETS[args.set]))
        return
    if args.out is None:
        ap.error("--out is required")
    names = args.models.split(",") if args.models else list(SETS[args.set])
    unknown = [n for n in names if n not in ALL_MODELS]
    if unknown:
        ap.error(f"unknown model(s): {', '.join(unknown)}; known: {', '.join(ALL_MODELS)}")

    stamp = {"script_sha256": script_digest(), "torch": torch.__version__,
             "onnx": onnx.__version__, "opset": args.opset,
             "dynamic_batch": args.dynamic_batch, "dynamic_seq": args.dynamic_seq,
             "fold_batchnorm": args.fold_batchnorm}
    start = time.time()
    for name in names:
        model_dir = args.out / name
        stamp_path = model_dir / STAMP_FILE
        if (not args.force and stamp_path.exists()
                and json.loads(stamp_path.read_text()) == stamp
                and (model_dir / "model.onnx").exists()
                and (model_dir / "tolerance.json").exists()
                and (model_dir / "test_data_set_0").is_dir()):
            print(f"{name:<20} up to date", flush=True)
            continue
        t0 = time.time()
        proto = generate(name, model_dir, args.opset, args.dynamic_batch, args.fold_batchnorm,
                         args.dynamic_seq)
        # Written last, so an interrupted run leaves no valid stamp behind.
        stamp_path.write_text(json.dumps(stamp, indent=1) + "\n")
        size = (model_dir / "model.onnx").stat().st_size
        print(f"{name:<20} {size / 1e6:8.2f} MB {time.time() - t0:6.2f} s", flush=True)
        if args.verbose:
            print(summary(proto), flush=True)
    print(f"total {time.time() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main()
