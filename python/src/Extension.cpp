//===- Extension.cpp - the _nnc Python extension over the runtime ---------===//
//
// The low layer of the `nnc` package (python/nnc/__init__.py is the API
// people use): handles over runtime.hpp's objects and calls that bind numpy
// arrays to sessions and trainers without copying them. The Python side
// arranges the arguments (names to positions, array-likes to contiguous arrays
// of the declared dtypes, output arrays); this side checks what reaches the C
// API, releases the GIL while the runtime works and turns statuses into
// nnc.Error.
//
//===----------------------------------------------------------------------===//

#include "nnc/runtime.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

/// A failed runtime call (or a bad argument found here), raised in Python as
/// nnc.Error(code, message). Holds no Python objects, so it may be thrown
/// while the GIL is released.
struct StatusError {
  int code;
  std::string message;
};

[[noreturn]] void fail(nnc_status_code_t code, std::string message) {
  throw StatusError{code, std::move(message)};
}

void check(const nnc::Status &status) {
  if (!status.ok())
    fail(status.code(), status.message());
}

/// nnc.Error, registered by the package when it is imported. A new reference
/// kept for the life of the process: the interpreter may outlive any C++
/// static that would release it.
PyObject *errorClass = nullptr;

void registerErrorClass(py::object cls) {
  Py_XDECREF(errorClass);
  errorClass = cls.release().ptr();
}

void setPythonError(const StatusError &error) {
  if (!errorClass) {
    PyErr_SetString(PyExc_RuntimeError, error.message.c_str());
    return;
  }
  PyObject *exception = PyObject_CallFunction(errorClass, "is", error.code, error.message.c_str());
  if (!exception)
    return; // constructing it raised; that exception stands
  PyErr_SetObject(errorClass, exception);
  Py_DECREF(exception);
}

/// What Python sees of a declared tensor: (name, dtype code, shape), -1 for a
/// dynamic dim.
py::tuple describe(const nnc_tensor_info_t &info) {
  py::tuple shape(info.rank);
  for (int32_t i = 0; i < info.rank; ++i)
    shape[i] = py::int_(info.shape[i]);
  return py::make_tuple(std::string(info.name), info.dtype, shape);
}

/// The numpy dtype of an nnc dtype (bf16 as its raw bits, uint16), as the
/// Python package's _DTYPES.
py::dtype numpyDtype(int32_t dtype) {
  switch (dtype) {
  case NNC_DTYPE_F32: return py::dtype("float32");
  case NNC_DTYPE_U8: return py::dtype("uint8");
  case NNC_DTYPE_I8: return py::dtype("int8");
  case NNC_DTYPE_U16: case NNC_DTYPE_BF16: return py::dtype("uint16");
  case NNC_DTYPE_I16: return py::dtype("int16");
  case NNC_DTYPE_I32: return py::dtype("int32");
  case NNC_DTYPE_I64: return py::dtype("int64");
  case NNC_DTYPE_BOOL: return py::dtype("bool");
  case NNC_DTYPE_F16: return py::dtype("float16");
  case NNC_DTYPE_F64: return py::dtype("float64");
  case NNC_DTYPE_U32: return py::dtype("uint32");
  case NNC_DTYPE_U64: return py::dtype("uint64");
  }
  // Strings are pointers to C text, which no numpy dtype holds in place.
  fail(NNC_STATUS_UNIMPLEMENTED, std::string("nnc dtype ") + nnc_dtype_name(dtype) + " (" +
                                     std::to_string(dtype) + ") has no numpy type");
}

/// The nnc dtype of a numpy dtype, or 0 when it has none. `declared` settles
/// the one ambiguity: bf16 travels as its raw bits in uint16 arrays (numpy has
/// no bfloat16).
int32_t nncDtype(const py::dtype &dtype, int32_t declared) {
  if (!dtype.attr("isnative").cast<bool>())
    return 0;
  switch (dtype.kind()) {
  case 'b':
    return dtype.itemsize() == 1 ? NNC_DTYPE_BOOL : 0;
  case 'f':
    switch (dtype.itemsize()) {
    case 2: return NNC_DTYPE_F16;
    case 4: return NNC_DTYPE_F32;
    case 8: return NNC_DTYPE_F64;
    }
    return 0;
  case 'i':
    switch (dtype.itemsize()) {
    case 1: return NNC_DTYPE_I8;
    case 2: return NNC_DTYPE_I16;
    case 4: return NNC_DTYPE_I32;
    case 8: return NNC_DTYPE_I64;
    }
    return 0;
  case 'u':
    switch (dtype.itemsize()) {
    case 1: return NNC_DTYPE_U8;
    case 2: return declared == NNC_DTYPE_BF16 ? NNC_DTYPE_BF16 : NNC_DTYPE_U16;
    case 4: return NNC_DTYPE_U32;
    case 8: return NNC_DTYPE_U64;
    }
    return 0;
  }
  return 0;
}

/// An array as the runtime sees it. The view points into `shape`, whose heap
/// buffer a move of Bound keeps; the array reference keeps the data alive
/// until the call is over.
struct Bound {
  py::object array;
  std::vector<int64_t> shape;
  nnc_tensor_view_t view{};
  // A string tensor: each element's UTF-8 text, and the `const char *` array
  // the view points to (runtime.h). Their heap buffers survive a move too.
  std::vector<std::string> texts;
  std::vector<const char *> pointers;
};

/// A string input (an array of str or bytes, any layout) as the runtime
/// takes it: the texts copied out as UTF-8, one pointer per element.
Bound viewTexts(const py::handle &object, const std::string &what) {
  Bound bound;
  if (!py::isinstance<py::array>(object))
    fail(NNC_STATUS_INVALID_ARGUMENT, what + ": expected a numpy array of str or bytes");
  auto array = py::reinterpret_borrow<py::array>(object);
  bound.array = array;
  bound.shape.assign(array.shape(), array.shape() + array.ndim());
  py::list items = array.attr("ravel")().attr("tolist")();
  for (size_t k = 0; k < items.size(); ++k) {
    py::handle item = items[k];
    std::string text;
    if (py::isinstance<py::str>(item)) {
      // UTF-8; a lone surrogate (os.fsdecode's escape of a byte) has none.
      Py_ssize_t size = 0;
      const char *utf8 = PyUnicode_AsUTF8AndSize(item.ptr(), &size);
      if (!utf8) {
        PyErr_Clear();
        fail(NNC_STATUS_INVALID_ARGUMENT,
             what + ": element " + std::to_string(k) +
                 " is not valid Unicode (a lone surrogate): it has no UTF-8 form");
      }
      text.assign(utf8, static_cast<size_t>(size));
    }
    else if (py::isinstance<py::bytes>(item))
      text = item.cast<std::string>();
    else
      fail(NNC_STATUS_INVALID_ARGUMENT,
           what + ": element " + std::to_string(k) + " is a " +
               py::str(py::type::handle_of(item).attr("__name__")).cast<std::string>() +
               ", not a str or bytes");
    if (text.find('\0') != std::string::npos)
      fail(NNC_STATUS_INVALID_ARGUMENT,
           what + ": element " + std::to_string(k) + " holds a NUL character, which a C string cannot");
    bound.texts.push_back(std::move(text));
  }
  for (const std::string &text : bound.texts)
    bound.pointers.push_back(text.c_str());
  bound.view.data = bound.pointers.data();
  bound.view.byte_size = bound.pointers.size() * sizeof(const char *);
  bound.view.dtype = NNC_DTYPE_STRING;
  bound.view.rank = static_cast<int32_t>(bound.shape.size());
  bound.view.shape = bound.shape.data();
  return bound;
}

/// A string output's texts (`const char *` elements) as a numpy array of
/// str, with bytes where a text is not UTF-8 (bytes an input gave, moved
/// through).
py::array arrayOfTexts(const std::vector<std::string> &texts, const std::vector<int64_t> &shape) {
  py::list items;
  for (const std::string &text : texts) {
    PyObject *decoded = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), nullptr);
    if (decoded) {
      items.append(py::reinterpret_steal<py::object>(decoded));
    } else {
      PyErr_Clear();
      items.append(py::bytes(text));
    }
  }
  py::module_ numpy = py::module_::import("numpy");
  py::array flat = numpy.attr("empty")(texts.size(), py::arg("dtype") = "object");
  for (size_t k = 0; k < texts.size(); ++k)
    flat[py::int_(k)] = items[k];
  return flat.attr("reshape")(py::tuple(py::cast(shape)));
}

/// Checks that `object` is an array the runtime can read (or, for writable,
/// write) in place and describes it; the runtime checks dtype and shape
/// against `info` itself, with its own messages. `what` names the tensor in
/// messages ("input 'x'").
Bound viewArray(const py::handle &object, const nnc_tensor_info_t &info, const std::string &what,
                bool writable) {
  Bound bound;
  if (!py::isinstance<py::array>(object))
    fail(NNC_STATUS_INVALID_ARGUMENT,
         what + ": expected a numpy array (got " +
             py::str(py::type::handle_of(object).attr("__name__")).cast<std::string>() + ")");
  auto array = py::reinterpret_borrow<py::array>(object);
  bound.array = array;
  if (!(array.flags() & py::array::c_style))
    fail(NNC_STATUS_INVALID_ARGUMENT, what + ": the array must be C-contiguous");
  if (writable && !array.writeable())
    fail(NNC_STATUS_INVALID_ARGUMENT, what + ": the array is read-only");
  int32_t dtype = nncDtype(array.dtype(), info.dtype);
  if (dtype == 0)
    fail(NNC_STATUS_INVALID_ARGUMENT,
         what + ": numpy dtype '" + py::str(array.dtype()).cast<std::string>() +
             "' has no nnc element type (expected " + nnc_dtype_name(info.dtype) + ")");
  bound.shape.assign(array.shape(), array.shape() + array.ndim());
  // The runtime only reads inputs (runtime.h), so a read-only array binds too.
  bound.view.data = const_cast<void *>(array.data());
  bound.view.byte_size = static_cast<size_t>(array.nbytes());
  bound.view.dtype = dtype;
  bound.view.rank = static_cast<int32_t>(array.ndim());
  bound.view.shape = bound.shape.data();
  return bound;
}

std::string quoted(const char *kind, const nnc_tensor_info_t &info) {
  return std::string(kind) + " '" + info.name + "'";
}

class Runtime {
public:
  explicit Runtime(int32_t threads) {
    nnc::Result<nnc::Runtime> runtime = nnc::Runtime::create(threads);
    check(runtime.status());
    handle = std::move(*runtime);
  }
  int32_t threads() const { return handle.numThreads(); }
  const nnc::Runtime &get() const { return handle; }

private:
  nnc::Runtime handle;
};

py::dict describeFunction(const nnc::Function &function) {
  py::list inputs, outputs;
  for (int32_t i = 0; i < function.inputCount(); ++i)
    inputs.append(describe(*function.input(i)));
  for (int32_t i = 0; i < function.outputCount(); ++i)
    outputs.append(describe(*function.output(i)));
  py::dict result;
  result["name"] = std::string(function.name());
  result["inputs"] = inputs;
  result["outputs"] = outputs;
  result["workspace_size"] = function.workspaceSize();
  return result;
}

class Module {
public:
  explicit Module(const std::string &path) {
    nnc::Result<nnc::Module> module = [&] {
      py::gil_scoped_release release; // dlopen runs the library's constructors
      return nnc::Module::load(path.c_str());
    }();
    check(module.status());
    handle = std::move(*module);
  }
  std::string path() const { return handle.path(); }
  std::string producer() const { return handle.producer(); }
  std::string target() const { return handle.target(); }
  std::string targetCpu() const { return handle.targetCpu(); }
  std::string precision() const { return handle.precision(); }
  std::vector<std::string> functionNames() const {
    std::vector<std::string> names;
    for (int32_t i = 0; i < handle.functionCount(); ++i)
      names.push_back(handle.function(i)->name());
    return names;
  }
  py::dict function(const std::string &name) const {
    nnc::Result<nnc::Function> function = handle.findFunction(name.c_str());
    check(function.status());
    return describeFunction(*function);
  }
  const nnc::Module &get() const { return handle; }

private:
  nnc::Module handle;
};

class Session {
public:
  Session(const Runtime &runtime, const Module &module, const std::string &function,
          const std::string &device) {
    nnc::Result<nnc::Session> session = [&] {
      // A CUDA session JIT-compiles PTX and uploads weights: seconds, not
      // microseconds, that other Python threads may use.
      py::gil_scoped_release release;
      return nnc::Session::create(runtime.get(), module.get(), function.c_str(), device.c_str());
    }();
    check(session.status());
    handle = std::move(*session);
  }

  std::string device() const { return handle.device(); }
  py::dict function() const { return describeFunction(handle.function()); }
  int32_t findInput(const std::string &name) const {
    nnc::Result<int32_t> index = handle.function().findInput(name.c_str());
    check(index.status());
    return *index;
  }
  int32_t findOutput(const std::string &name) const {
    nnc::Result<int32_t> index = handle.function().findOutput(name.c_str());
    check(index.status());
    return *index;
  }

  /// Binds every input and output array (one per declared tensor, in order)
  /// and runs the function, writing the results into the output arrays; an
  /// output given as None (a dynamic one, whose shape the run decides) comes
  /// back as a new array. Returns the output arrays.
  py::list run(const py::sequence &inputs, const py::sequence &outputs) {
    nnc::Function function = handle.function();
    checkCount("input", function.inputCount(), inputs.size());
    checkCount("output", function.outputCount(), outputs.size());
    // Destroyed last, with the GIL held again: the references keep every
    // array alive while the runtime uses its memory.
    std::vector<Bound> boundInputs, boundOutputs;
    for (int32_t i = 0; i < function.inputCount(); ++i) {
      std::string what = quoted("input", *function.input(i));
      boundInputs.push_back(function.input(i)->dtype == NNC_DTYPE_STRING
                                ? viewTexts(inputs[i], what)
                                : viewArray(inputs[i], *function.input(i), what, false));
    }
    std::vector<bool> fresh(function.outputCount());
    for (int32_t i = 0; i < function.outputCount(); ++i) {
      fresh[i] = outputs[i].is_none();
      if (!fresh[i] && function.output(i)->dtype == NNC_DTYPE_STRING)
        fail(NNC_STATUS_INVALID_ARGUMENT, quoted("output", *function.output(i)) +
                                              ": a string output comes back as a new array "
                                              "(pass None for it)");
      boundOutputs.push_back(fresh[i] ? Bound{}
                                      : viewArray(outputs[i], *function.output(i),
                                                  quoted("output", *function.output(i)), true));
    }
    std::vector<std::vector<int64_t>> shapes(fresh.size());
    std::vector<std::vector<char>> bytes(fresh.size());
    std::vector<std::vector<std::string>> texts(fresh.size());
    {
      py::gil_scoped_release release;
      // A session runs on one thread at a time (runtime.h); with the GIL
      // released, two Python threads could otherwise enter it together.
      std::lock_guard<std::mutex> lock(mutex);
      for (size_t i = 0; i < boundInputs.size(); ++i)
        check(handle.bindInput(static_cast<int32_t>(i), boundInputs[i].view));
      for (size_t i = 0; i < boundOutputs.size(); ++i)
        check(fresh[i] ? handle.unbindOutput(static_cast<int32_t>(i))
                       : handle.bindOutput(static_cast<int32_t>(i), boundOutputs[i].view));
      check(handle.run());
      // The bindings now point at arrays Python may free; every run rebinds all
      // of them before running, so the session never reads a stale one. The
      // session's own outputs are copied out while the lock keeps them.
      for (size_t i = 0; i < fresh.size(); ++i) {
        if (!fresh[i])
          continue;
        nnc::Result<nnc_tensor_view_t> view = handle.output(static_cast<int32_t>(i));
        check(view.status());
        shapes[i].assign(view->shape, view->shape + view->rank);
        const char *data = static_cast<const char *>(view->data);
        if (view->dtype == NNC_DTYPE_STRING) {
          // The texts, copied while the session still owns them.
          int64_t count = 1;
          for (int64_t d : shapes[i])
            count *= d;
          for (int64_t k = 0; k < count; ++k) {
            const char *text;
            std::memcpy(&text, data + k * sizeof(text), sizeof(text));
            texts[i].emplace_back(text ? text : "");
          }
          continue;
        }
        bytes[i].assign(data, data + view->byte_size);
      }
    }
    py::list results;
    for (size_t i = 0; i < fresh.size(); ++i) {
      if (!fresh[i]) {
        results.append(outputs[i]);
        continue;
      }
      if (function.output(static_cast<int32_t>(i))->dtype == NNC_DTYPE_STRING) {
        results.append(arrayOfTexts(texts[i], shapes[i]));
        continue;
      }
      py::array array(numpyDtype(function.output(static_cast<int32_t>(i))->dtype), shapes[i]);
      // The view may hold more bytes than its shape (a data-dependent
      // output's buffer is sized for a bound).
      std::memcpy(array.mutable_data(), bytes[i].data(),
                  std::min(bytes[i].size(), static_cast<size_t>(array.nbytes())));
      results.append(array);
    }
    return results;
  }

private:
  void checkCount(const char *kind, int32_t expected, size_t got) const {
    if (static_cast<size_t>(expected) != got)
      fail(NNC_STATUS_INVALID_ARGUMENT,
           std::string("function '") + handle.function().name() + "' takes " +
               std::to_string(expected) + " " + kind + (expected == 1 ? "" : "s") + " (got " +
               std::to_string(got) + ")");
  }

  nnc::Session handle;
  std::mutex mutex;
};

class Trainer {
public:
  Trainer(const Runtime &runtime, const Module &module, const std::string &device) {
    nnc::Result<nnc::Trainer> trainer = [&] {
      py::gil_scoped_release release; // creating runs init once
      return nnc::Trainer::create(runtime.get(), module.get(), device.c_str());
    }();
    check(trainer.status());
    handle = std::move(*trainer);
    // The trainer exists, so the module has an eval function; its infos stay
    // valid while the trainer holds the module.
    nnc::Result<nnc::Function> eval = module.get().findFunction("eval");
    check(eval.status());
    evalFunction = eval->get();
  }

  std::string device() const { return handle.device(); }
  bool hasLabels() const { return handle.hasLabels(); }
  py::list inputs() const {
    py::list result;
    for (int32_t i = 0; i < handle.inputCount(); ++i)
      result.append(describe(*handle.input(i)));
    return result;
  }
  py::list parameters() const {
    py::list result;
    for (int32_t i = 0; i < handle.parameterCount(); ++i)
      result.append(describe(*handle.parameter(i)));
    return result;
  }
  py::list evalOutputs() const {
    py::list result;
    for (int32_t i = 0; i < nnc_function_output_count(evalFunction); ++i)
      result.append(describe(*nnc_function_output(evalFunction, i)));
    return result;
  }
  int64_t steps() {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex);
    return handle.steps();
  }

  float step(const py::sequence &inputs) {
    std::vector<Bound> bound = bindBatch(inputs, handle.inputCount());
    std::vector<nnc_tensor_view_t> views = viewsOf(bound);
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex);
    nnc::Result<float> loss = handle.step(views.data(), static_cast<int32_t>(views.size()));
    check(loss.status());
    return *loss;
  }

  float lossAndGradients(const py::sequence &inputs) {
    std::vector<Bound> bound = bindBatch(inputs, handle.inputCount());
    std::vector<nnc_tensor_view_t> views = viewsOf(bound);
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex);
    nnc::Result<float> loss =
        handle.lossAndGradients(views.data(), static_cast<int32_t>(views.size()));
    check(loss.status());
    return *loss;
  }

  /// Runs eval and copies its outputs into `outputs` (arrays shaped as eval
  /// declares them): the trainer owns eval's results and overwrites them on
  /// the next call.
  void eval(const py::sequence &inputs, const py::sequence &outputs) {
    std::vector<Bound> bound = bindBatch(inputs, handle.inputCount() - (handle.hasLabels() ? 1 : 0));
    std::vector<nnc_tensor_view_t> views = viewsOf(bound);
    int32_t outputCount = nnc_function_output_count(evalFunction);
    if (outputs.size() != static_cast<size_t>(outputCount))
      fail(NNC_STATUS_INVALID_ARGUMENT, "eval has " + std::to_string(outputCount) + " outputs");
    std::vector<Bound> results;
    for (int32_t i = 0; i < outputCount; ++i) {
      const nnc_tensor_info_t &info = *nnc_function_output(evalFunction, i);
      results.push_back(viewArray(outputs[i], info, quoted("output", info), true));
      if (results.back().view.byte_size != info.byte_size)
        fail(NNC_STATUS_INVALID_ARGUMENT, quoted("output", info) + ": expected " +
                                              std::to_string(info.byte_size) + " bytes");
    }
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex);
    check(handle.eval(views.data(), static_cast<int32_t>(views.size())));
    for (int32_t i = 0; i < outputCount; ++i) {
      nnc::Result<nnc_tensor_view_t> view = handle.evalOutput(i);
      check(view.status());
      std::memcpy(results[i].view.data, view->data, results[i].view.byte_size);
    }
  }

  void readParameter(const std::string &name, const py::array &out) {
    transfer(name, out, true, [&](void *data, size_t bytes) {
      return handle.readParameter(name.c_str(), data, bytes);
    });
  }
  void writeParameter(const std::string &name, const py::array &value) {
    transfer(name, value, false, [&](void *data, size_t bytes) {
      return handle.writeParameter(name.c_str(), data, bytes);
    });
  }
  void readGradient(const std::string &name, const py::array &out) {
    transfer(name, out, true, [&](void *data, size_t bytes) {
      return handle.readGradient(name.c_str(), data, bytes);
    });
  }
  void saveCheckpoint(const std::string &path) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex);
    check(handle.saveCheckpoint(path.c_str()));
  }
  void loadCheckpoint(const std::string &path) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex);
    check(handle.loadCheckpoint(path.c_str()));
  }

private:
  /// The batch's arrays against the trainer's inputs (the model's, then the
  /// labels); the trainer checks each view as a session's bind does.
  std::vector<Bound> bindBatch(const py::sequence &inputs, int32_t expected) {
    if (inputs.size() != static_cast<size_t>(expected))
      fail(NNC_STATUS_INVALID_ARGUMENT, "the trainer takes " + std::to_string(expected) +
                                            " input" + (expected == 1 ? "" : "s") + " (got " +
                                            std::to_string(inputs.size()) + ")");
    std::vector<Bound> bound;
    for (int32_t i = 0; i < expected; ++i)
      bound.push_back(
          viewArray(inputs[i], *handle.input(i), quoted("input", *handle.input(i)), false));
    return bound;
  }
  static std::vector<nnc_tensor_view_t> viewsOf(const std::vector<Bound> &bound) {
    std::vector<nnc_tensor_view_t> views;
    for (const Bound &b : bound)
      views.push_back(b.view);
    return views;
  }
  /// Moves a parameter's or gradient's bytes between the trainer and a
  /// contiguous array the Python side shaped and typed as the parameter.
  template <typename Call>
  void transfer(const std::string &name, const py::array &array, bool writable, Call call) {
    if (!(array.flags() & py::array::c_style))
      fail(NNC_STATUS_INVALID_ARGUMENT, "parameter '" + name + "': the array must be C-contiguous");
    if (writable && !array.writeable())
      fail(NNC_STATUS_INVALID_ARGUMENT, "parameter '" + name + "': the array is read-only");
    void *data = const_cast<void *>(array.data());
    size_t bytes = static_cast<size_t>(array.nbytes());
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex);
    check(call(data, bytes));
  }

  nnc::Trainer handle;
  const nnc_function_t *evalFunction = nullptr;
  // A trainer, like a session, runs on one thread at a time.
  std::mutex mutex;
};

} // namespace

PYBIND11_MODULE(_nnc, m) {
  m.doc() = "The nnc runtime's C API for the nnc package (use `import nnc`).";
  py::register_exception_translator([](std::exception_ptr pointer) {
    try {
      if (pointer)
        std::rethrow_exception(pointer);
    } catch (const StatusError &error) {
      setPythonError(error);
    }
  });
  m.def("_register_error", &registerErrorClass,
        "Sets the exception class raised for runtime errors, called as cls(code, message).");
  m.def("dtype_name", [](int32_t dtype) { return std::string(nnc_dtype_name(dtype)); },
        "The runtime's short name of an nnc dtype code (\"f32\", \"i64\", ...).");

  py::class_<Runtime>(m, "Runtime")
      .def(py::init<int32_t>(), py::arg("threads"))
      .def_property_readonly("threads", &Runtime::threads);

  py::class_<Module>(m, "Module")
      .def(py::init<const std::string &>(), py::arg("path"))
      .def_property_readonly("path", &Module::path)
      .def_property_readonly("producer", &Module::producer)
      .def_property_readonly("target", &Module::target)
      .def_property_readonly("target_cpu", &Module::targetCpu)
      .def_property_readonly("precision", &Module::precision)
      .def_property_readonly("function_names", &Module::functionNames)
      .def("function", &Module::function, py::arg("name"));

  py::class_<Session>(m, "Session")
      .def(py::init<const Runtime &, const Module &, const std::string &, const std::string &>(),
           py::arg("runtime"), py::arg("module"), py::arg("function"), py::arg("device"))
      .def_property_readonly("device", &Session::device)
      .def_property_readonly("function", &Session::function)
      .def("find_input", &Session::findInput, py::arg("name"))
      .def("find_output", &Session::findOutput, py::arg("name"))
      .def("run", &Session::run, py::arg("inputs"), py::arg("outputs"));

  py::class_<Trainer>(m, "Trainer")
      .def(py::init<const Runtime &, const Module &, const std::string &>(), py::arg("runtime"),
           py::arg("module"), py::arg("device"))
      .def_property_readonly("device", &Trainer::device)
      .def_property_readonly("inputs", &Trainer::inputs)
      .def_property_readonly("has_labels", &Trainer::hasLabels)
      .def_property_readonly("parameters", &Trainer::parameters)
      .def_property_readonly("eval_outputs", &Trainer::evalOutputs)
      .def_property_readonly("steps", &Trainer::steps)
      .def("step", &Trainer::step, py::arg("inputs"))
      .def("loss_and_gradients", &Trainer::lossAndGradients, py::arg("inputs"))
      .def("eval", &Trainer::eval, py::arg("inputs"), py::arg("outputs"))
      .def("read_parameter", &Trainer::readParameter, py::arg("name"), py::arg("out"))
      .def("write_parameter", &Trainer::writeParameter, py::arg("name"), py::arg("value"))
      .def("read_gradient", &Trainer::readGradient, py::arg("name"), py::arg("out"))
      .def("save_checkpoint", &Trainer::saveCheckpoint, py::arg("path"))
      .def("load_checkpoint", &Trainer::loadCheckpoint, py::arg("path"));
}
