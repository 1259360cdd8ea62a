"""Writes batches for nnc-run's training modes against the hand-written
training module modules/train_module.c (y = x @ W + b, MSE loss, SGD at
learning rate 0.1), with references computed here in float64.

usage: make_train_data.py OUT_DIR

Each subdirectory of OUT_DIR is one case; see nnc-run-train.test for what each
checks. A batch is input_0.pb (x) and input_1.pb (the labels); the references
are loss.pb and grad_<parameter>.pb. OUT_DIR/losses.txt holds the loss of each
of the first 5 steps from the module's initial parameters, one per line.
"""

import os
import sys

import numpy as np
from onnx import numpy_helper

# The batch and the initial parameters of train_module.c.
X = np.array([[0.5, -1, 2], [1.5, 0.25, -0.5], [-2, 1, 0.75], [1, 1, -1]], np.float32)
LABELS = np.array([[1, -1], [0.5, 2], [-1.5, 0.25], [0, 1]], np.float32)
W = np.array([[0.25 * (k - m) + 0.125 for m in range(2)] for k in range(3)])
B = np.array([0.5, -0.25])
LEARNING_RATE = 0.1


def loss_and_gradients(w, b):
    x, labels = X.astype(np.float64), LABELS.astype(np.float64)
    diff = x @ w + b - labels
    dy = 2 * diff / diff.size
    return np.mean(diff * diff), x.T @ dy, dy.sum(axis=0)


def write(directory, name, array):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(numpy_helper.from_array(np.asarray(array, np.float32)).SerializeToString())


def case(out, name, labels=LABELS, grads=None, skip=(), extra=None):
    """A batch with its references; `grads` overrides the gradient references
    by file name, `extra` adds files."""
    directory = os.path.join(out, name)
    loss, grad_w, grad_b = loss_and_gradients(W, B)
    files = {
        "input_0.pb": X,
        "input_1.pb": labels,
        "loss.pb": np.float32(loss),
        "grad_fc.weight.pb": grad_w,
        "grad_fc.bias.pb": grad_b,
    }
    files.update(grads or {})
    files.update(extra or {})
    for file, array in files.items():
        if file not in skip:
            write(directory, file, array)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    loss, grad_w, grad_b = loss_and_gradients(W, B)

    case(out, "good")
    wrong = grad_b.copy()
    wrong[1] += 0.5
    case(out, "wrong-gradient", grads={"grad_fc.bias.pb": wrong})
    # Within 1e-3 relative (the default for gradients) but not 1e-4.
    case(out, "near-gradient", grads={"grad_fc.weight.pb": grad_w * (1 + 5e-4)})
    case(out, "missing-gradient", skip=("grad_fc.bias.pb",))
    case(out, "missing-loss", skip=("loss.pb",))
    case(out, "unknown-gradient", extra={"grad_fc.scale.pb": grad_b})
    case(out, "gradient-shape", grads={"grad_fc.weight.pb": grad_w.T})
    case(out, "missing-labels", skip=("input_1.pb",))
    case(out, "extra-input", extra={"input_2.pb": X})
    case(out, "labels-shape", labels=LABELS.T)

    w, b, losses = W.copy(), B.copy(), []
    for _ in range(5):
        loss, grad_w, grad_b = loss_and_gradients(w, b)
        losses.append(loss)
        w -= LEARNING_RATE * grad_w
        b -= LEARNING_RATE * grad_b
    with open(os.path.join(out, "losses.txt"), "w") as f:
        f.writelines("%.17g\n" % loss for loss in losses)


if __name__ == "__main__":
    main()
