"""Writes small models for training tests with PyTorch's references.

usage: training_models.py OUT_DIR [CASE ...]

For each case, OUT_DIR/<case>/ holds:
  model.onnx            the inference model, exported from PyTorch (eval mode,
                        batch norms kept, no constant folding, so initializers
                        keep PyTorch's parameter names)
  data/input_<i>.pb     the model's inputs, then the labels (for a model that
                        computes its own loss, the labels are its second input)
  data/loss.pb          the loss PyTorch computes on them
  data/grad_<name>.pb   the loss's gradient for each parameter
  curve_<opt>.txt       the loss of each of the first 20 steps ("step K loss X",
                        the loss before that step's update) for each optimizer
                        setting in OPTIMIZERS, trained on the same batch
  eval_<opt>/           the trained model in eval() mode after those steps, as
                        an ONNX test data set (input_0.pb, output_0.pb): its
                        parameters and its batch norms' running statistics

The references are PyTorch's own (torch.autograd and torch.optim, the module
in train() mode), in float32 on the CPU, from the same weights and data.
"""

import os
import sys
import warnings

import numpy as np
import torch
from onnx import numpy_helper
from torch import nn

STEPS = 20

OPTIMIZERS = {
    "sgd": ("--optimizer=sgd --lr=0.05 --momentum=0.9 --weight-decay=0.001",
            lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, weight_decay=0.001)),
    "adam": ("--optimizer=adam --lr=0.01 --weight-decay=0.001",
             lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.001)),
    "adamw": ("--optimizer=adamw --lr=0.01 --weight-decay=0.05 --beta1=0.8 --beta2=0.99 --eps=1e-6",
              lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.05, betas=(0.8, 0.99),
                                          eps=1e-6)),
}


class Attention(nn.Module):
    """A pre-norm transformer block: layer norm, one-head attention, GELU MLP."""

    def __init__(self, d=16, seq=6):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)
        self.head = nn.Linear(d * seq, 5)
        self.d = d

    def forward(self, x):
        q, k, v = self.qkv(self.ln1(x)).split(self.d, dim=-1)
        att = torch.softmax(q @ k.transpose(-2, -1) / self.d ** 0.5, dim=-1)
        x = x + self.proj(att @ v)
        x = x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x)), approximate="tanh"))
        return self.head(x.flatten(1))


class SmallCNN(nn.Module):
    """Convolutions (plain, strided, depthwise, with bias; conv3's input
    gradient is a strided transposed convolution, computed by phase), batch
    norms in training mode, max pooling and a global average pool."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8)
        self.bn2 = nn.BatchNorm2d(8)
        self.conv3 = nn.Conv2d(8, 12, 3, stride=2, padding=1)
        self.fc = nn.Linear(12, 5)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        x = torch.relu(self.bn2(self.conv2(x)))
        x = self.conv3(x).mean(dim=(2, 3))
        return self.fc(x)


class SmallUNet(nn.Module):
    """Down and up: max and average pooling, a 2x2 transposed convolution,
    bilinear upsampling and skip concatenations."""

    def __init__(self):
        super().__init__()
        self.enc1 = nn.Conv2d(2, 6, 3, padding=1)
        self.enc2 = nn.Conv2d(6, 8, 3, padding=1)
        self.mid = nn.Conv2d(8, 8, 3, padding=1)
        self.up = nn.ConvTranspose2d(8, 8, 2, stride=2)
        self.dec2 = nn.Conv2d(16, 6, 3, padding=1)
        self.dec1 = nn.Conv2d(12, 2, 3, padding=1)

    def forward(self, x):
        e1 = torch.relu(self.enc1(x))
        e2 = torch.relu(self.enc2(nn.functional.max_pool2d(e1, 2)))
        m = torch.relu(self.mid(nn.functional.avg_pool2d(e2, 2)))
        d2 = torch.relu(self.dec2(torch.cat([self.up(m), e2], 1)))
        up = nn.functional.interpolate(d2, scale_factor=2, mode="bilinear", align_corners=False)
        return self.dec1(torch.cat([up, e1], 1))


class FreshBatchNorm(nn.Module):
    """A batch norm as initialized (weight ones, bias zeros, running mean
    zeros, variance ones), which the exporter merges: its running variance
    becomes an Identity of its weight, its running mean of its bias."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.bn = nn.BatchNorm2d(6)
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return self.fc(torch.relu(self.bn(self.conv(x))).mean(dim=(2, 3)))


class CrossEntropyInModel(nn.Module):
    """A model that ends in its loss (SoftmaxCrossEntropyLoss): class
    weights (a buffer, which stays constant) and an ignored class."""

    ignore_index = 3

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 5))
        self.register_buffer("class_weight", torch.tensor([1.0, 2.0, 0.5, 1.5, 1.0]))

    def forward(self, x, target):
        return nn.functional.cross_entropy(self.net(x), target, weight=self.class_weight,
                                           ignore_index=self.ignore_index)


class NLLInModel(nn.Module):
    """A model that ends in NegativeLogLikelihoodLoss over a sequence: a
    class per position (logits N x C x L), summed."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, 3, padding=1)
        self.head = nn.Conv1d(8, 6, 1)

    def forward(self, x, target):
        logp = nn.functional.log_softmax(self.head(torch.tanh(self.conv(x))), dim=1)
        return nn.functional.nll_loss(logp, target, reduction="sum")


def cases():
    """name -> (module, input, labels, loss fn (None: the model computes its
    loss from the input and the labels), nnc --loss)"""
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(1)  # PyTorch's default initialization, deterministic
    out = {}
    mlp = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(),
                        nn.Linear(32, 10))
    x = torch.randn(8, 20, generator=g)
    labels = torch.randint(0, 10, (8,), generator=g)
    out["mlp_ce"] = (mlp, x, labels, nn.functional.cross_entropy, "cross-entropy")
    reg = nn.Sequential(nn.Linear(6, 12), nn.Sigmoid(), nn.Linear(12, 3))
    x = torch.randn(5, 6, generator=g)
    target = torch.randn(5, 3, generator=g)
    out["mlp_mse"] = (reg, x, target, nn.functional.mse_loss, "mse")
    att = Attention()
    x = torch.randn(16, 6, 16, generator=g)
    labels = torch.randint(0, 5, (16,), generator=g)
    out["attention"] = (att, x, labels, nn.functional.cross_entropy, "cross-entropy")
    cnn = SmallCNN()
    x = torch.randn(4, 3, 12, 12, generator=g)
    labels = torch.randint(0, 5, (4,), generator=g)
    out["cnn"] = (cnn, x, labels, nn.functional.cross_entropy, "cross-entropy")
    unet = SmallUNet()
    x = torch.randn(2, 2, 12, 12, generator=g)
    target = torch.randn(2, 2, 12, 12, generator=g)
    out["unet"] = (unet, x, target, nn.functional.mse_loss, "mse")
    fresh = FreshBatchNorm()
    x = torch.randn(4, 3, 6, 6, generator=g)
    labels = torch.randint(0, 4, (4,), generator=g)
    out["fresh_bn"] = (fresh, x, labels, nn.functional.cross_entropy, "cross-entropy")
    x = torch.randn(8, 12, generator=g)
    labels = torch.randint(0, 5, (8,), generator=g)
    labels[2] = 3  # ignored
    out["ce_in_model"] = (CrossEntropyInModel(), x, labels, None, "model")
    x = torch.randn(3, 4, 7, generator=g)
    labels = torch.randint(0, 6, (3, 7), generator=g)
    out["nll_in_model"] = (NLLInModel(), x, labels, None, "model")
    return out


def write(path, array, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.array(array, order="C"), name).SerializeToString())


def generate(out, name, module, x, labels, loss_fn, loss_flag):
    # PyTorch's exporter merges initializers with equal values (both layer
    # norms' ones and zeros) into one tied parameter: make every one distinct
    # (but fresh_bn, which tests that merge).
    torch.manual_seed(2)
    if name != "fresh_bn":
        with torch.no_grad():
            for p in module.parameters():
                p.add_(torch.randn(p.shape) * 0.05)
    directory = os.path.join(out, name)
    data = os.path.join(directory, "data")
    os.makedirs(data, exist_ok=True)
    # The inference graph, with batch norms kept as nodes (PRESERVE), which
    # nnc --train switches to training behaviour as train() does here.
    own_loss = loss_fn is None
    if own_loss:
        loss_fn = lambda loss, _: loss  # noqa: E731
        run = lambda: module(x, labels)  # noqa: E731
    else:
        run = lambda: module(x)  # noqa: E731
    labels_name = "target" if own_loss else "labels"
    output_name = "loss" if own_loss else "output"
    module.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (x, labels) if own_loss else (x,),
                          os.path.join(directory, "model.onnx"), opset_version=17,
                          input_names=["input", "target"] if own_loss else ["input"],
                          output_names=[output_name],
                          training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
    module.train()
    with open(os.path.join(directory, "loss_flag.txt"), "w") as f:
        f.write(loss_flag + "\n")
    write(os.path.join(data, "input_0.pb"), x.numpy(), "input")
    write(os.path.join(data, "input_1.pb"), labels.numpy(), labels_name)

    initial = {k: v.clone() for k, v in module.state_dict().items()}
    module.zero_grad()
    loss = loss_fn(run(), labels)
    loss.backward()
    write(os.path.join(data, "loss.pb"), loss.detach().numpy(), "loss")
    for pname, p in module.named_parameters():
        write(os.path.join(data, "grad_" + pname + ".pb"), p.grad.numpy(), "grad_" + pname)
    if hasattr(module, "ignore_index"):
        # data_ignored/: every target ignored: the loss is NaN (0 / 0), the
        # gradients PyTorch's zeros.
        ignored = os.path.join(directory, "data_ignored")
        os.makedirs(ignored, exist_ok=True)
        all_ignored = torch.full_like(labels, module.ignore_index)
        module.zero_grad()
        loss = module(x, all_ignored)
        loss.backward()
        write(os.path.join(ignored, "input_0.pb"), x.numpy(), "input")
        write(os.path.join(ignored, "input_1.pb"), all_ignored.numpy(), labels_name)
        write(os.path.join(ignored, "loss.pb"), loss.detach().numpy(), "loss")
        for pname, p in module.named_parameters():
            write(os.path.join(ignored, "grad_" + pname + ".pb"), p.grad.numpy(), "grad_" + pname)

    for opt_name, (flags, make) in OPTIMIZERS.items():
        module.load_state_dict(initial)
        optimizer = make(module.parameters())
        lines = []
        for step in range(1, STEPS + 1):
            optimizer.zero_grad()
            loss = loss_fn(run(), labels)
            loss.backward()
            optimizer.step()
            lines.append("step %d loss %.9g" % (step, loss.item()))
        with open(os.path.join(directory, "curve_%s.txt" % opt_name), "w") as f:
            f.write("\n".join(lines) + "\n")
        module.eval()
        with torch.no_grad():
            y = run()
        module.train()
        trained = os.path.join(directory, "eval_" + opt_name)
        os.makedirs(trained, exist_ok=True)
        write(os.path.join(trained, "input_0.pb"), x.numpy(), "input")
        if own_loss:
            write(os.path.join(trained, "input_1.pb"), labels.numpy(), labels_name)
        write(os.path.join(trained, "output_0.pb"), y.numpy(), output_name)


def main():
    out = sys.argv[1]
    wanted = sys.argv[2:]
    for name, case in cases().items():
        if not wanted or name in wanted:
            generate(out, name, *case)


if __name__ == "__main__":
    main()
