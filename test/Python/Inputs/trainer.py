"""nnc.Trainer on an MLP compiled with train=True, loss="mse",
optimizer="sgd", lr=0.1, against a numpy implementation of the same forward
pass, backward pass and SGD: losses, gradients and parameters step by step,
eval, parameter reads and writes, and checkpoints that round-trip.

    trainer.py OUT_DIR
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import (  # noqa: E402
    expect,
    expect_close,
    expect_error,
    mlp_forward,
    mlp_mse_gradients,
    random_mlp,
    write_mlp,
)

import nnc  # noqa: E402
from nnc import StatusCode  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
params = random_mlp(seed=7, inputs=3, hidden=8, outputs=2)
model = write_mlp(f"{out}/mlp.onnxtext", params, batch=4)
library = nnc.compile(model, f"{out}/train.so", train=True, loss="mse", optimizer="sgd", lr=0.1)
module = nnc.Module(library)
print(f"functions {sorted(module.functions)}")
# CHECK: functions ['eval', 'init', 'loss_and_gradients', 'train_step']

trainer = nnc.Trainer(module)
print(f"parameters {trainer.parameters}")
print(f"inputs {[(i.name, i.shape) for i in trainer.inputs]}")
print(f"eval outputs {[(o.name, o.shape) for o in trainer.eval_outputs]}")
# CHECK: parameters ['w1', 'b1', 'w2', 'b2']
# CHECK: inputs [('x', (4, 3)), ('labels', (4, 2))]
# CHECK: eval outputs [('y', (4, 2))]
expect(trainer.steps == 0, f"a new trainer has taken {trainer.steps} steps")
for name, value in params.items():
    expect(np.array_equal(trainer.get_parameter(name), value), f"initial {name} differs from the model's")

rng = np.random.default_rng(8)
x = rng.standard_normal((4, 3)).astype(np.float32)
labels = rng.standard_normal((4, 2)).astype(np.float32)
tolerance = dict(rtol=1e-4, atol=1e-6)

# Before any loss_and_gradients there are no gradients to read.
expect_error(nnc.Error, lambda: trainer.get_gradient("w1"), StatusCode.FAILED_PRECONDITION)
# CHECK: Error FAILED_PRECONDITION: nnc_trainer_read_gradient: no gradients (nnc_trainer_loss_and_gradients has not succeeded {{.*}})

# Loss and gradients, without a step: nothing changes.
loss, gradients = trainer.loss_and_gradients(x, labels)
want_loss, want_gradients = mlp_mse_gradients(params, x, labels)
expect_close(loss, want_loss, "loss_and_gradients: loss", **tolerance)
for name in params:
    expect_close(gradients[name], want_gradients[name], f"gradient of {name}", **tolerance)
    expect_close(trainer.get_gradient(name), want_gradients[name], f"get_gradient({name!r})", **tolerance)
    expect(np.array_equal(trainer.get_parameter(name), params[name]), f"loss_and_gradients changed {name}")
expect(trainer.steps == 0, "loss_and_gradients counted as a step")
print(f"loss_and_gradients: loss {loss:.6f} and {len(gradients)} gradients match numpy")
# CHECK: loss_and_gradients: loss {{[0-9.]+}} and 4 gradients match numpy

# Three SGD steps, each against numpy's, with the batch passed three ways.
reference = {name: value.astype(np.float64) for name, value in params.items()}
batches = [(x, labels), ({"x": x}, labels), ([x.astype(np.float64)], labels.tolist())]
for step, (inputs, step_labels) in enumerate(batches, 1):
    want_loss, want_gradients = mlp_mse_gradients(reference, x, labels)
    loss = trainer.step(inputs, step_labels)
    expect_close(loss, want_loss, f"step {step}: loss", **tolerance)
    for name in reference:
        reference[name] = reference[name] - 0.1 * want_gradients[name]
        expect_close(trainer.get_parameter(name), reference[name], f"step {step}: {name}", **tolerance)
    print(f"step {step}: loss {loss:.6f} matches numpy")
# CHECK: step 1: loss {{[0-9.]+}} matches numpy
# CHECK: step 2: loss {{[0-9.]+}} matches numpy
# CHECK: step 3: loss {{[0-9.]+}} matches numpy
expect(trainer.steps == 3, f"steps is {trainer.steps} after 3 steps")

# eval runs the model with the trained parameters.
(y,) = trainer.eval(x)
expect_close(y, mlp_forward(reference, x)[0], "eval", **tolerance)
(y_dict,) = trainer.eval({"x": x})
expect(np.array_equal(y, y_dict), "eval by name differs")

# Checkpoints: save, train on, load: the parameters and the step count come
# back, and the next step repeats the one taken after saving.
checkpoint = f"{out}/mlp.ckpt"
trainer.save_checkpoint(checkpoint)
saved = {name: trainer.get_parameter(name) for name in trainer.parameters}
loss_after_save = trainer.step(x, labels)
trainer.step(x, labels)
expect(trainer.steps == 5, f"steps is {trainer.steps} after 5 steps")
trainer.load_checkpoint(checkpoint)
expect(trainer.steps == 3, f"steps is {trainer.steps} after loading a 3-step checkpoint")
for name, value in saved.items():
    expect(np.array_equal(trainer.get_parameter(name), value), f"{name} after load_checkpoint")
expect(trainer.step(x, labels) == loss_after_save, "the step after loading differs from the one after saving")
# A second trainer starts from the checkpoint too.
other = nnc.Trainer(library)
other.load_checkpoint(checkpoint)
for name, value in saved.items():
    expect(np.array_equal(other.get_parameter(name), value), f"{name} in a second trainer")
print("checkpoint: round-trips")
# CHECK: checkpoint: round-trips

# Writing parameters: eval and the next step see them.
new_w2 = rng.standard_normal((8, 2)).astype(np.float32)
other.set_parameter("w2", new_w2)
other.set_parameter("b2", [0.25, -0.25])  # a list, converted
expect(np.array_equal(other.get_parameter("w2"), new_w2), "set_parameter('w2')")
written = dict(saved, w2=new_w2, b2=np.array([0.25, -0.25], np.float32))
expect_close(other.eval([x])[0], mlp_forward(written, x)[0], "eval after set_parameter", **tolerance)
expect_close(other.step(x, labels), mlp_mse_gradients(written, x, labels)[0], "step after set_parameter", **tolerance)

# Errors.
expect_error(nnc.Error, lambda: trainer.get_parameter("fc.weight"), StatusCode.NOT_FOUND)
# CHECK: Error NOT_FOUND: nnc_trainer_read_parameter: no parameter 'fc.weight' (parameters: 'w1', 'b1', 'w2', 'b2')
expect_error(nnc.Error, lambda: trainer.set_parameter("w1", np.zeros((8, 3), np.float32)),
             StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: parameter 'w1': expected shape 3x8 (got 8x3)
expect_error(nnc.Error, lambda: trainer.step(x, labels[:2]), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: input 'labels': expected shape 4x2 (got 2x2)
expect_error(nnc.Error, lambda: trainer.step([x, x], labels), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: the model takes 1 input (got 2)
expect_error(nnc.Error, lambda: trainer.load_checkpoint(f"{out}/missing.ckpt"), StatusCode.NOT_FOUND)
# CHECK: Error NOT_FOUND: cannot open checkpoint '{{.*}}missing.ckpt': No such file or directory
with open(f"{out}/bad.ckpt", "wb") as f:
    f.write(b"NNCCKPT1" + bytes(5))
expect_error(nnc.Error, lambda: trainer.load_checkpoint(f"{out}/bad.ckpt"), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: checkpoint '{{.*}}bad.ckpt' is truncated: {{.*}}
expect(trainer.steps == 4, "a refused checkpoint changed the trainer")

# A model that computes its own loss (loss="model"): no separate labels; the
# target is the model's second input, and eval takes it too.
with open(f"{out}/own_loss.onnxtext", "w") as f:
    f.write("""<ir_version: 8, opset_import: ["" : 17]>
g (float[4,3] x, float[4,2] target) => (float loss) <float[3,2] w = {0.5, -1.0, 0.25, 2.0, -0.75, 1.5}> {
  y = MatMul (x, w)
  d = Sub (y, target)
  e = Mul (d, d)
  loss = ReduceMean <keepdims = 0> (e)
}
""")
own = nnc.Trainer(nnc.compile(f"{out}/own_loss.onnxtext", f"{out}/own_loss.so", train=True, loss="model", lr=0.1))
print(f"own loss: has_labels {own.has_labels}, inputs {[i.name for i in own.inputs]}")
# CHECK: own loss: has_labels False, inputs ['x', 'target']
w = np.array([[0.5, -1.0], [0.25, 2.0], [-0.75, 1.5]], np.float64)
d = x @ w - labels
expect_close(own.step([x, labels]), np.mean(d * d), "own loss: step", **tolerance)
w -= 0.1 * (2 * x.T @ d / d.size)
expect_close(own.get_parameter("w"), w, "own loss: w after a step", **tolerance)
d = x @ w - labels
expect_close(own.eval({"x": x, "target": labels})[0], np.mean(d * d), "own loss: eval", **tolerance)
print("own loss: step and eval match numpy")
# CHECK: own loss: step and eval match numpy
expect_error(nnc.Error, lambda: own.step(x, labels), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: the module's loss is the model's own: its labels are among the model's inputs, not a separate argument
expect_error(nnc.Error, lambda: trainer.step(x), StatusCode.INVALID_ARGUMENT)
# CHECK: Error INVALID_ARGUMENT: the trainer needs labels
expect(trainer.has_labels, "an mse trainer has no labels")

inference = nnc.compile(model, f"{out}/inference.so")
expect_error(nnc.Error, lambda: nnc.Trainer(inference), StatusCode.FAILED_PRECONDITION)
# CHECK: Error FAILED_PRECONDITION: module '{{.*}}inference.so' is not a training module: {{.*}}
print("PASS")
# CHECK: PASS
