"""Shared by the nnc package's tests: ONNX text models with known weights and
their numpy references (float64), written independently of nnc."""

import sys

import numpy as np


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def expect(condition, message):
    if not condition:
        fail(message)


def expect_close(got, want, what, rtol=1e-5, atol=1e-6):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    expect(got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}")
    if not np.allclose(got, want, rtol=rtol, atol=atol):
        worst = np.max(np.abs(got - want))
        fail(f"{what}: max abs error {worst:g} (rtol {rtol:g}, atol {atol:g})\ngot\n{got}\nexpected\n{want}")


def expect_error(error_type, call, code=None):
    """Calls `call`, which must raise error_type (with `code`); prints the
    message for FileCheck and returns the exception."""
    try:
        call()
    except error_type as error:
        if code is not None:
            expect(error.code == code, f"expected code {code!r}, got {error.code!r}: {error}")
        code = getattr(error, "code", None)
        print(f"{type(error).__name__} {getattr(code, 'name', code)}: {error}")
        return error
    fail(f"expected {error_type.__name__}")


def random_mlp(seed, inputs, hidden, outputs):
    """An MLP's weights: w1 [in, hidden], b1, w2 [hidden, out], b2 (float32)."""
    rng = np.random.default_rng(seed)
    return {
        "w1": rng.uniform(-1, 1, (inputs, hidden)).astype(np.float32),
        "b1": rng.uniform(-0.5, 0.5, hidden).astype(np.float32),
        "w2": rng.uniform(-1, 1, (hidden, outputs)).astype(np.float32),
        "b2": rng.uniform(-0.5, 0.5, outputs).astype(np.float32),
    }


def _initializer(name, array):
    dims = ",".join(str(d) for d in array.shape)
    # 9 significant digits round-trip a float32 exactly.
    values = ", ".join(format(float(v), ".9g") for v in array.reshape(-1))
    return f"  float[{dims}] {name} = {{{values}}}"


def write_mlp(path, params, batch):
    """y = relu(x @ w1 + b1) @ w2 + b2, as MatMul, Add, Relu, MatMul, Add;
    `batch` is a number or a symbolic dim's name."""
    inputs, hidden = params["w1"].shape
    outputs = params["w2"].shape[1]
    initializers = ",\n".join(_initializer(name, params[name]) for name in ("w1", "b1", "w2", "b2"))
    text = f"""<ir_version: 8, opset_import: ["" : 17]>
mlp (float[{batch},{inputs}] x) => (float[{batch},{outputs}] y)
<
{initializers}
>
{{
  h = MatMul (x, w1)
  hb = Add (h, b1)
  a = Relu (hb)
  o = MatMul (a, w2)
  y = Add (o, b2)
}}
"""
    with open(path, "w") as f:
        f.write(text)
    return path


def mlp_forward(params, x):
    """The MLP in float64: (y, intermediates for the backward pass)."""
    p = {k: v.astype(np.float64) for k, v in params.items()}
    x = np.asarray(x, dtype=np.float64)
    h = x @ p["w1"] + p["b1"]
    a = np.maximum(h, 0)
    y = a @ p["w2"] + p["b2"]
    return y, (x, h, a)


def mlp_mse_gradients(params, x, labels):
    """The mean squared error of the MLP and its gradients, in float64."""
    y, (x, h, a) = mlp_forward(params, x)
    diff = y - labels
    loss = np.mean(diff * diff)
    dy = 2 * diff / diff.size
    dw2 = a.T @ dy
    db2 = dy.sum(axis=0)
    dh = (dy @ params["w2"].astype(np.float64).T) * (h > 0)
    dw1 = x.T @ dh
    db1 = dh.sum(axis=0)
    return loss, {"w1": dw1, "b1": db1, "w2": dw2, "b2": db2}
