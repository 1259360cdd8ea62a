"""nnc: compile ONNX models to native code and run them from Python.

Compile a model with the ``nnc`` tool, load the library and run it on numpy
arrays; the runtime reads inputs and writes outputs in the arrays' own memory::

    import numpy as np
    import nnc

    library = nnc.compile("model.onnx", "model.so", dim={"batch": 8})
    session = nnc.Session(nnc.Module(library))          # function "main", on the CPU
    (probabilities,) = session.run({"features": np.random.rand(8, 4)})

Training modules (``nnc.compile(..., train=True, loss="mse")``) run through
:class:`Trainer`. Every failure of the runtime raises :class:`Error` with the
runtime's status code and message; a model the compiler rejects raises
:class:`CompileError` with the compiler's diagnostics. See docs/python.md.

Threads: runtimes and modules may be shared by any number of threads. A
session or trainer runs one call at a time (concurrent calls on one wait for
each other); give each thread its own to run in parallel. Runs release the
GIL.
"""

import enum
import os
import shutil
import subprocess
import threading
from collections.abc import Mapping
from typing import NamedTuple, Optional, Tuple

import numpy as np

from . import _nnc

__all__ = [
    "CompileError",
    "Error",
    "Function",
    "Module",
    "Runtime",
    "Session",
    "StatusCode",
    "TensorInfo",
    "Trainer",
    "compile",
    "load",
]


class StatusCode(enum.IntEnum):
    """The runtime's status codes (``nnc_status_code_t``, gRPC numbering)."""

    OK = 0
    INVALID_ARGUMENT = 3
    NOT_FOUND = 5
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14


class Error(Exception):
    """A failure reported by the nnc runtime or by this package.

    Attributes:
        code: a :class:`StatusCode` (an ``int`` for a code this package does
            not know), e.g. ``StatusCode.NOT_FOUND`` for a missing module
            file or an unknown function, ``INVALID_ARGUMENT`` for an input of
            the wrong shape, ``UNAVAILABLE`` for a CUDA device this machine
            does not have.
        message: the runtime's message, e.g.
            ``"input 'x': expected shape 2x4 (got 3x4)"``.
    """

    def __init__(self, code, message):
        super().__init__(code, message)
        try:
            self.code = StatusCode(code)
        except ValueError:
            self.code = code
        self.message = message

    def __str__(self):
        return self.message


class CompileError(Error):
    """The ``nnc`` compiler failed, or could not be found.

    ``message`` holds nnc's diagnostics (which name the model file and the
    failing node); ``returncode`` is nnc's exit code (``None`` when it did not
    run), ``stderr`` its error output and ``command`` the command line.
    """

    def __init__(self, code, message, returncode=None, stderr="", command=()):
        super().__init__(code, message)
        self.returncode = returncode
        self.stderr = stderr
        self.command = tuple(command)


_nnc._register_error(Error)

# nnc dtype codes (ONNX numbering, abi.h) to the numpy dtypes arrays of them
# have. numpy has no bfloat16: bf16 tensors travel as their bit patterns in
# uint16 arrays.
_DTYPES = {
    1: np.dtype(np.float32),
    2: np.dtype(np.uint8),
    3: np.dtype(np.int8),
    4: np.dtype(np.uint16),
    5: np.dtype(np.int16),
    6: np.dtype(np.int32),
    7: np.dtype(np.int64),
    9: np.dtype(np.bool_),
    10: np.dtype(np.float16),
    11: np.dtype(np.float64),
    12: np.dtype(np.uint32),
    13: np.dtype(np.uint64),
    16: np.dtype(np.uint16),
}
# String tensors (docs/strings.md) travel as arrays of str (or bytes): their
# TensorInfo.dtype is object.
_STRING = 8


class TensorInfo(NamedTuple):
    """An input, output or parameter as the module declares it.

    ``dtype`` is the numpy dtype of its arrays (``uint16`` bit patterns for
    bf16), ``dtype_name`` the runtime's name (``"f32"``, ``"bf16"``, ...), and
    ``shape`` its dims, ``None`` for a dynamic one.
    """

    name: str
    dtype: np.dtype
    shape: Tuple[Optional[int], ...]
    dtype_name: str


class Function(NamedTuple):
    """A function of a module: its name, inputs and outputs (lists of
    :class:`TensorInfo`, in order) and the bytes of scratch memory a session
    of it allocates."""

    name: str
    inputs: list
    outputs: list
    workspace_size: int


def _tensor_info(described):
    name, code, shape = described
    return TensorInfo(
        name,
        np.dtype(object) if code == _STRING else _DTYPES.get(code),
        tuple(None if dim < 0 else dim for dim in shape),
        _nnc.dtype_name(code),
    )


def _function(described):
    return Function(
        described["name"],
        [_tensor_info(t) for t in described["inputs"]],
        [_tensor_info(t) for t in described["outputs"]],
        described["workspace_size"],
    )


class Runtime:
    """The runtime's CPU thread pool, shared by the sessions created on it.

    ``threads`` counts the threads that run parallel loops, the calling one
    included: 0 means one per core available to the process, 1 runs
    everything on the calling thread. Sessions and trainers created without
    a runtime share one default runtime (``threads=0``).
    """

    def __init__(self, threads=0):
        self._runtime = _nnc.Runtime(int(threads))

    @property
    def threads(self):
        """The number of threads parallel loops use."""
        return self._runtime.threads

    def __repr__(self):
        return f"nnc.Runtime(threads={self.threads})"


_default_runtime_lock = threading.Lock()
_default_runtime_instance = None


def _default_runtime():
    # One pool for every session that names none: a runtime per session would
    # start a thread per core for each.
    global _default_runtime_instance
    with _default_runtime_lock:
        if _default_runtime_instance is None:
            _default_runtime_instance = Runtime()
        return _default_runtime_instance


class Module:
    """A library compiled by nnc, loaded (``nnc_module_load``).

    A path without a ``/`` is taken relative to the current directory, never
    searched in the library path. Raises :class:`Error` (``NOT_FOUND`` for a
    missing file, ``INVALID_ARGUMENT`` for a file that is not an nnc module,
    ``FAILED_PRECONDITION`` for a module built for a CPU this one is not).
    """

    def __init__(self, path):
        self._module = _nnc.Module(os.fspath(path))

    @property
    def path(self):
        """The path the module was loaded from."""
        return self._module.path

    @property
    def target(self):
        """The device family the module was compiled for: ``"cpu"`` or ``"cuda"``."""
        return self._module.target

    @property
    def target_cpu(self):
        """The CPU the code was tuned for, e.g. ``"znver5"``."""
        return self._module.target_cpu

    @property
    def precision(self):
        """What matmuls' and convolutions' products are computed in: ``"f32"``,
        or on CUDA's tensor cores ``"tf32"``, ``"bf16"`` or ``"f16"`` (nnc --precision)."""
        return self._module.precision

    @property
    def producer(self):
        """Who wrote the module, e.g. ``"nnc 0.1"``."""
        return self._module.producer

    @property
    def functions(self):
        """The names of the module's functions (``["main"]`` for inference;
        ``init``, ``train_step``, ``loss_and_gradients`` and ``eval`` for a
        training module)."""
        return list(self._module.function_names)

    def function(self, name="main"):
        """The :class:`Function` called ``name``; :class:`Error`
        (``NOT_FOUND``, listing the functions there are) when there is none."""
        return _function(self._module.function(name))

    def __repr__(self):
        return f"nnc.Module({self.path!r}, target={self.target!r}, functions={self.functions!r})"


def _converts(source, target):
    """Whether an array of dtype ``source`` may be converted for an input of
    dtype ``target`` at all: within a kind or from integers to floats, never
    a float truncated into an integer or a number into a bool. Whether its
    values survive is _check_values' question."""
    if np.can_cast(source, target, casting="same_kind"):
        return True
    # Lists of Python ints arrive as int64: let them fill any integer input.
    return source.kind in "biu" and target.kind in "iu"


def _check_values(array, converted, what):
    """Raises unless converting ``array`` to ``converted``'s dtype kept every
    value: an integer out of the target's range, or a finite number that
    overflows a float type to infinity, is an error, never a silent wrap or
    clamp. (Rounding, as float64 to float32 does, is not.)"""
    if array.size == 0 or array.dtype == converted.dtype:
        return
    target = converted.dtype
    if target.kind in "iu" and array.dtype.kind in "biu":
        info = np.iinfo(target)
        low, high = array.min(), array.max()
        if low < info.min or high > info.max:
            raise Error(
                StatusCode.INVALID_ARGUMENT,
                f"{what}: values {low}..{high} do not fit in {target} ({info.min}..{info.max})",
            )
    elif target.kind == "f" and array.dtype.kind in "fiu":
        overflow = np.isinf(converted) & ~np.isinf(np.asarray(array, dtype=np.float64))
        if overflow.any():
            raise Error(
                StatusCode.INVALID_ARGUMENT,
                f"{what}: {int(overflow.sum())} value(s) overflow {target} to infinity",
            )


def _as_input(value, info, what):
    """``value`` as a C-contiguous array of the input's dtype: the array
    itself when it already is one (bound without a copy), else a converted
    copy."""
    dtype = info.dtype
    if dtype is None:
        raise Error(StatusCode.UNIMPLEMENTED, f"{what}: dtype {info.dtype_name} has no numpy type")
    if info.dtype_name == "string":
        # Texts: the extension copies each element out as UTF-8.
        array = np.asarray(value, dtype=object)
        return array
    if isinstance(value, np.ndarray) and value.dtype == dtype and value.flags.c_contiguous:
        return value
    array = np.asarray(value)
    if array.dtype != dtype and not _converts(array.dtype, dtype):
        hint = ""
        if info.dtype_name == "bf16":
            hint = " (bf16 tensors take their bit patterns as uint16 arrays)"
        raise Error(
            StatusCode.INVALID_ARGUMENT,
            f"{what}: cannot convert an array of {array.dtype} to {info.dtype_name}{hint}",
        )
    # asarray, not ascontiguousarray: the latter makes 0-D inputs 1-D.
    with np.errstate(over="ignore"):
        converted = np.asarray(array, dtype=dtype, order="C")
    _check_values(array, converted, what)
    return converted


def _shape_text(dims):
    """A shape as the runtime writes it: "2x3", "scalar"."""
    return "x".join(map(str, dims)) if dims else "scalar"


def _new_output(info, what):
    if info.dtype is None:
        raise Error(StatusCode.UNIMPLEMENTED, f"{what}: dtype {info.dtype_name} has no numpy type")
    if any(dim is None for dim in info.shape):
        raise Error(StatusCode.UNIMPLEMENTED, f"{what}: dynamic shapes are not supported yet")
    return np.empty(info.shape, dtype=info.dtype)


def _positional(values, infos, kind, owner, find_index, allow_missing):
    """Arranges ``values`` (a sequence in declaration order, or a mapping by
    name) into a list with one entry per declared tensor; ``None`` marks one
    not given (an error unless ``allow_missing``)."""
    count = len(infos)
    if isinstance(values, Mapping):
        arranged = [None] * count
        for name, value in values.items():
            arranged[find_index(name)] = value
    else:
        arranged = list(values)
        if len(arranged) != count:
            plural = "" if count == 1 else "s"
            raise Error(
                StatusCode.INVALID_ARGUMENT,
                f"{owner} takes {count} {kind}{plural} (got {len(arranged)})",
            )
    if not allow_missing:
        for info, value in zip(infos, arranged):
            if value is None:
                raise Error(StatusCode.INVALID_ARGUMENT, f"{owner}: {kind} '{info.name}' not given")
    return arranged


class Session:
    """One function of a module, ready to run (``nnc_session_create``).

    Args:
        module: a :class:`Module`, or the path of one.
        function: the function to run (``"main"`` for inference modules).
        device: ``"cpu"`` for modules compiled for the CPU; for modules
            compiled with ``target="cuda"``: ``"cuda"`` (GPU 0), ``"cuda:N"``,
            or ``"cuda-emulated"`` (the kernels on this CPU, no GPU needed).
            A device this machine lacks raises :class:`Error`
            (``UNAVAILABLE``); nothing runs silently elsewhere.
        runtime: the :class:`Runtime` whose threads run it (default: one
            shared runtime).

    The session allocates its scratch memory once. It runs one call at a time;
    use a session per thread to run in parallel.
    """

    def __init__(self, module, function="main", device="cpu", runtime=None):
        if not isinstance(module, Module):
            module = Module(module)
        self.module = module
        self.runtime = runtime if runtime is not None else _default_runtime()
        self._session = _nnc.Session(self.runtime._runtime, module._module, function, device)
        self._function = _function(self._session.function)

    @property
    def function(self):
        """The :class:`Function` the session runs."""
        return self._function

    @property
    def device(self):
        """What the session runs on, e.g. ``"cpu"`` or ``"cuda:0 'NVIDIA H100 ...'
        (compute capability 9.0, image sm_90a, driver 13.0)"``."""
        return self._session.device

    def run(self, inputs, outputs=None):
        """Runs the function once and returns its outputs, a list of arrays.

        Args:
            inputs: the inputs in the function's order (a list or tuple), or a
                dict from input name to value; a lone ``numpy.ndarray`` stands
                for a function's only input. Values are array-likes: an array
                that is C-contiguous and of the input's dtype is read in place
                (never written: compiled code does not write its inputs);
                anything else is converted first (ints and floats to the
                input's type; a float is never truncated to an integer).
            outputs: optional arrays to write results into (a list in output
                order, ``None`` where the session should allocate one, or a
                dict by name): each must be C-contiguous, writable, of the
                output's dtype and shape, and not overlap an input or another
                output. They are the arrays returned.

        Without ``outputs``, each run returns new arrays, which the compiled
        code wrote directly (no copy); an output with a dynamic dim
        (docs/dynamic-shapes.md) comes back as a new array of the run's shape,
        copied from the session's buffer, and a string output
        (docs/strings.md) as a new object array of its texts (pass ``None``
        for it in ``outputs``). Shapes and dtypes are checked by the
        runtime: a mismatch raises :class:`Error` (``INVALID_ARGUMENT``)
        naming the tensor, e.g. ``input 'x': expected shape 2x4 (got 3x4)``.
        """
        function = self._function
        owner = f"function '{function.name}'"
        if isinstance(inputs, np.ndarray):
            inputs = [inputs]
        given = _positional(
            inputs, function.inputs, "input", owner, self._session.find_input, allow_missing=False
        )
        arrays = [
            _as_input(value, info, f"input '{info.name}'")
            for value, info in zip(given, function.inputs)
        ]
        if outputs is None:
            outputs = [None] * len(function.outputs)
        find_output = self._session.find_output
        results = _positional(
            outputs, function.outputs, "output", owner, find_output, allow_missing=True
        )
        # A dynamic output not given comes back as a new array shaped by the run.
        results = [
            value
            if value is not None
            else None
            if any(dim is None for dim in info.shape) or info.dtype_name == "string"
            else _new_output(info, f"output '{info.name}'")
            for value, info in zip(results, function.outputs)
        ]
        # The lists hold every array until the run returns.
        return self._session.run(arrays, results)

    def __call__(self, *args, **kwargs):
        """``session(x, y)`` or ``session(x=..., y=...)``: runs on the inputs
        and returns the only output, or a tuple of them."""
        if args and kwargs:
            raise TypeError("pass the inputs by position or by name, not both")
        results = self.run(kwargs if kwargs else list(args))
        return results[0] if len(results) == 1 else tuple(results)

    def __repr__(self):
        return (
            f"nnc.Session({self.module.path!r}, function={self._function.name!r}, "
            f"device={self.device!r})"
        )


def load(path, device="cpu", function="main", runtime=None):
    """Loads a compiled library and returns a callable :class:`Session` of
    its function: ``nnc.load("model.so")(x)`` returns the output."""
    return Session(Module(path), function=function, device=device, runtime=runtime)


class Trainer:
    """Trains a module compiled with ``train=True`` (``nnc_trainer_create``;
    docs/training.md).

    The trainer runs the module's ``init``, ``train_step``,
    ``loss_and_gradients`` and ``eval`` functions on one device and keeps the
    parameters and the optimizer state between calls. Parameter names go
    without the ``param:`` prefix (e.g. ``"fc1.weight"``).

    Args:
        module: a :class:`Module` (or its path) compiled with ``train=True``.
        device: as for :class:`Session`.
        runtime: the :class:`Runtime` to run on (default: the shared one).

    Batches: ``inputs`` are the model's inputs (a list in order, a dict by
    name, or a lone array for a one-input model), converted as
    :meth:`Session.run` converts them; ``labels`` is one array-like (for
    ``loss="mse"`` shaped like the model's output; for ``cross-entropy``
    integer class indices). A module whose loss is the model's own
    (``loss="model"``, :attr:`has_labels` false) takes no ``labels``: they
    are among the model's inputs.
    """

    def __init__(self, module, device="cpu", runtime=None):
        if not isinstance(module, Module):
            module = Module(module)
        self.module = module
        self.runtime = runtime if runtime is not None else _default_runtime()
        self._trainer = _nnc.Trainer(self.runtime._runtime, module._module, device)
        self._inputs = [_tensor_info(t) for t in self._trainer.inputs]
        self._has_labels = self._trainer.has_labels
        self._parameters = [_tensor_info(t) for t in self._trainer.parameters]
        self._by_name = {info.name: info for info in self._parameters}
        self._eval_outputs = [_tensor_info(t) for t in self._trainer.eval_outputs]

    @property
    def device(self):
        """What the trainer runs on (as :attr:`Session.device`)."""
        return self._trainer.device

    @property
    def inputs(self):
        """The :class:`TensorInfo` of each batch tensor a step takes: the
        model's inputs, then ``labels`` (the last) when :attr:`has_labels`."""
        return list(self._inputs)

    @property
    def has_labels(self):
        """Whether a step takes ``labels`` after the model's inputs (false
        when the module's loss is the model's own)."""
        return self._has_labels

    @property
    def parameters(self):
        """The parameters' names, in the module's order."""
        return [info.name for info in self._parameters]

    @property
    def parameter_infos(self):
        """The parameters' :class:`TensorInfo`, in the module's order."""
        return list(self._parameters)

    @property
    def eval_outputs(self):
        """The :class:`TensorInfo` of each output :meth:`eval` returns."""
        return list(self._eval_outputs)

    @property
    def steps(self):
        """Steps taken: successful :meth:`step` calls, counted on from a loaded
        checkpoint's step count."""
        return self._trainer.steps

    def _batch(self, inputs, labels, step=True):
        model_inputs = self._inputs[:-1] if self._has_labels else self._inputs
        if step and self._has_labels and labels is None:
            raise Error(StatusCode.INVALID_ARGUMENT, "the trainer needs labels")
        if labels is not None and not self._has_labels:
            raise Error(
                StatusCode.INVALID_ARGUMENT,
                "the module's loss is the model's own: its labels are among the model's "
                "inputs, not a separate argument",
            )
        if isinstance(inputs, np.ndarray):
            inputs = [inputs]
        names = [info.name for info in model_inputs]

        def find(name):
            if name not in names:
                listed = ", ".join(f"'{n}'" for n in names)
                raise Error(
                    StatusCode.NOT_FOUND, f"the model has no input '{name}' (inputs: {listed})"
                )
            return names.index(name)

        given = _positional(inputs, model_inputs, "input", "the model", find, False)
        infos = model_inputs if labels is None else self._inputs
        if labels is not None:
            given.append(labels)
        return [_as_input(value, info, f"input '{info.name}'") for value, info in zip(given, infos)]

    def step(self, inputs, labels=None):
        """One optimizer step on a batch; returns the batch's loss (computed
        before the update). On failure nothing changes."""
        return self._trainer.step(self._batch(inputs, labels))

    def loss_and_gradients(self, inputs, labels=None):
        """The loss and every parameter's gradient on a batch, without
        changing the parameters or the optimizer state: ``(loss, {name:
        gradient})``."""
        loss = self._trainer.loss_and_gradients(self._batch(inputs, labels))
        return loss, {info.name: self.get_gradient(info.name) for info in self._parameters}

    def get_gradient(self, name):
        """Parameter ``name``'s gradient from the last successful
        :meth:`loss_and_gradients` (a new array)."""
        return self._read(name, self._trainer.read_gradient)

    def eval(self, inputs):
        """Runs the model (the module's ``eval``) on ``inputs`` with the
        current parameters and running statistics; returns its outputs, a
        list of new arrays."""
        arrays = self._batch(inputs, None, step=False)
        results = [_new_output(info, f"output '{info.name}'") for info in self._eval_outputs]
        self._trainer.eval(arrays, results)
        return results

    def get_parameter(self, name):
        """Parameter ``name``'s current value (a new array)."""
        return self._read(name, self._trainer.read_parameter)

    def set_parameter(self, name, value):
        """Replaces parameter ``name``'s value with ``value`` (an array-like
        of its shape, converted to its dtype); the next step, gradient or
        eval sees it."""
        info = self._by_name.get(name)
        if info is None:
            # The runtime names the parameters there are.
            self._trainer.write_parameter(name, np.zeros(1, np.uint8))
        array = _as_input(value, info, f"parameter '{name}'")
        if array.shape != info.shape:
            raise Error(
                StatusCode.INVALID_ARGUMENT,
                f"parameter '{name}': expected shape {_shape_text(info.shape)} "
                f"(got {_shape_text(array.shape)})",
            )
        self._trainer.write_parameter(name, array)

    def _read(self, name, read):
        info = self._by_name.get(name)
        if info is None:
            read(name, np.zeros(1, np.uint8))  # raises the runtime's NOT_FOUND
        out = np.empty(info.shape, dtype=info.dtype)
        read(name, out)
        return out

    def save_checkpoint(self, path):
        """Writes the parameters and the optimizer state to ``path``
        (docs/training.md's format), replacing the file only once it is
        whole."""
        self._trainer.save_checkpoint(os.fspath(path))

    def load_checkpoint(self, path):
        """Replaces the parameters and the optimizer state with a
        checkpoint's; a checkpoint of another model or optimizer, or a
        damaged one, raises :class:`Error` and changes nothing."""
        self._trainer.load_checkpoint(os.fspath(path))

    def __repr__(self):
        return (
            f"nnc.Trainer({self.module.path!r}, device={self.device!r}, "
            f"parameters={self.parameters!r})"
        )


def _find_nnc(nnc):
    """The nnc tool: the argument, else $NNC, else the one installed with
    this package, else ``nnc`` on PATH."""
    if nnc:
        return os.fspath(nnc)
    if os.environ.get("NNC"):
        return os.environ["NNC"]
    try:
        from . import _layout

        beside = os.path.normpath(os.path.join(os.path.dirname(__file__), _layout.BIN_DIR, "nnc"))
        if os.path.isfile(beside) and os.access(beside, os.X_OK):
            return beside
    except ImportError:
        pass
    found = shutil.which("nnc")
    if found:
        return found
    raise CompileError(
        StatusCode.NOT_FOUND,
        "the nnc compiler was not found: pass nnc=PATH, set $NNC, or put nnc on PATH",
    )


def _flags(name, value):
    flag = "--" + name.replace("_", "-")
    if value is None:
        return []
    if value is True:
        return [flag]
    if value is False:
        return [flag + "=false"]
    if isinstance(value, Mapping):  # dim={"batch": 1} -> --dim=batch=1
        return [f"{flag}={key}={item}" for key, item in value.items()]
    if isinstance(value, (list, tuple)):  # repeatable flags, e.g. freeze=["a", "b"]
        return [f"{flag}={item}" for item in value]
    return [f"{flag}={value}"]


def compile(model_path, output=None, target="cpu", nnc=None, **options):
    """Compiles an ONNX model (``.onnx`` or ONNX's text format,
    ``.onnxtext``) with the ``nnc`` tool and returns the library's path.

    Args:
        model_path: the model.
        output: the library to write (default: ``model_path`` with its
            extension replaced by ``.so``).
        target: ``"cpu"`` or ``"cuda"``.
        nnc: the nnc executable (default: ``$NNC``, else the ``nnc``
            installed with this package, else ``nnc`` on PATH).
        **options: nnc's flags, underscores as dashes: ``name=value`` passes
            ``--name=value``; ``True`` a bare ``--name``, ``False``
            ``--name=false``, ``None`` nothing; a list or tuple repeats the
            flag per element and a dict passes ``--name=key=value`` per item.
            E.g. ``train=True, loss="mse", lr=0.1``, ``dim={"N": 2}``,
            ``input_shape=["x:1x3x224x224"]``, ``cpu="znver4"``.

    Raises:
        CompileError: nnc failed; its message holds nnc's diagnostics, which
            name the model file and the failing node.
    """
    model_path = os.fspath(model_path)
    if output is None:
        output = os.path.splitext(model_path)[0] + ".so"
    output = os.fspath(output)
    command = [_find_nnc(nnc), model_path, f"-target={target}", "-o", output]
    for name, value in options.items():
        command += _flags(name, value)
    try:
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as error:
        raise CompileError(
            StatusCode.NOT_FOUND, f"cannot run {command[0]}: {error}", command=command
        ) from None
    if result.returncode != 0:
        stderr = result.stderr.strip()
        raise CompileError(
            StatusCode.INVALID_ARGUMENT,
            f"nnc failed on '{model_path}' (exit code {result.returncode}):\n{stderr}",
            returncode=result.returncode,
            stderr=result.stderr,
            command=command,
        )
    return output
