//===- Trainer.cpp - running a training module's functions ---------------===//
//
// The trainer owns the parameters and the optimizer state in two sets of host
// buffers: train_step reads one set and writes the other, and the two swap
// roles once it succeeds. So compiled code never writes its inputs, a failed
// step leaves the current set as it was, and a checkpoint is read into the
// spare set, which becomes current only once the whole file checked out.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/Objects.h"
#include "runtime/src/Status.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace nnc::runtime;

// Checkpoints hold tensor data as the host lays it out; the format says
// little-endian.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "checkpoints assume a little-endian host");

namespace {
constexpr const char *kInit = "init";
constexpr const char *kTrainStep = "train_step";
constexpr const char *kLossAndGradients = "loss_and_gradients";
constexpr const char *kEval = "eval";
constexpr char kParamPrefix[] = "param:";
constexpr char kStatePrefix[] = "state:";
constexpr char kGradPrefix[] = "grad:";
constexpr char kMagic[8] = {'N', 'N', 'C', 'C', 'K', 'P', 'T', '1'};

struct FreeDeleter {
  void operator()(void *memory) const { std::free(memory); }
};
using Buffer = std::unique_ptr<void, FreeDeleter>;

struct SessionDeleter {
  void operator()(nnc_session_t *session) const { nnc_session_release(session); }
};
using SessionHandle = std::unique_ptr<nnc_session_t, SessionDeleter>;

/// Parameters start on a cache line, as a session's own outputs do.
constexpr size_t kAlignment = 64;

nnc_status_t allocate(size_t bytes, const std::string &what, Buffer &out) {
  // One block even for zero bytes keeps every pointer valid and distinct.
  size_t rounded = bytes == 0 ? kAlignment : (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (bytes > SIZE_MAX - kAlignment || !(out = Buffer(std::aligned_alloc(kAlignment, rounded))))
    return makeStatus(NNC_STATUS_RESOURCE_EXHAUSTED,
                      "cannot allocate " + std::to_string(bytes) + " bytes for " + what);
  return nullptr;
}

bool startsWith(const char *name, const char *prefix) {
  return std::strncmp(name, prefix, std::strlen(prefix)) == 0;
}

std::string typeString(const nnc_tensor_info_t &info) {
  return std::string(nnc_dtype_name(info.dtype)) + " " + shapeString(info.rank, info.shape);
}

bool sameType(const nnc_tensor_info_t &a, const nnc_tensor_info_t &b) {
  return a.dtype == b.dtype && a.rank == b.rank &&
         (a.rank == 0 || std::memcmp(a.shape, b.shape, sizeof(int64_t) * a.rank) == 0);
}

/// One of a function's inputs or outputs, by position; key is its name
/// without the role's prefix.
struct Slot {
  int32_t index;
  const nnc_tensor_info_t *info;
  std::string key;
};
using Slots = std::vector<Slot>;

std::string names(const Slots &slots) {
  return nameList(static_cast<int32_t>(slots.size()),
                  [&](int32_t i) { return slots[i].info->name; });
}

/// A training function's tensors sorted by role, each list in the function's
/// order.
struct Roles {
  const nnc_function *function = nullptr;
  Slots data;                // inputs without a prefix: the model's inputs, labels
  Slots params, states;      // "param:" and "state:" inputs
  Slots loss;                // outputs named "loss"
  Slots outParams, outStates; // "param:" and "state:" outputs
  Slots grads;               // "grad:" outputs
  Slots others;              // any other output
};

Roles sortRoles(const nnc_function *function) {
  Roles roles;
  roles.function = function;
  for (size_t i = 0; i < function->inputs.size(); ++i) {
    const nnc_tensor_info_t &info = function->inputs[i];
    int32_t index = static_cast<int32_t>(i);
    if (startsWith(info.name, kParamPrefix))
      roles.params.push_back({index, &info, info.name + sizeof(kParamPrefix) - 1});
    else if (startsWith(info.name, kStatePrefix))
      roles.states.push_back({index, &info, info.name + sizeof(kStatePrefix) - 1});
    else
      roles.data.push_back({index, &info, info.name});
  }
  for (size_t i = 0; i < function->outputs.size(); ++i) {
    const nnc_tensor_info_t &info = function->outputs[i];
    int32_t index = static_cast<int32_t>(i);
    if (std::strcmp(info.name, "loss") == 0)
      roles.loss.push_back({index, &info, info.name});
    else if (startsWith(info.name, kParamPrefix))
      roles.outParams.push_back({index, &info, info.name + sizeof(kParamPrefix) - 1});
    else if (startsWith(info.name, kStatePrefix))
      roles.outStates.push_back({index, &info, info.name + sizeof(kStatePrefix) - 1});
    else if (startsWith(info.name, kGradPrefix))
      roles.grads.push_back({index, &info, info.name + sizeof(kGradPrefix) - 1});
    else
      roles.others.push_back({index, &info, info.name});
  }
  return roles;
}

std::string functionName(const Roles &roles) {
  return "function '" + std::string(roles.function->abi->name) + "'";
}

/// Checks that `got` names the same tensors as train_step's `expected` (the
/// same keys in the same order, with the same dtypes and shapes); returns an
/// error text or "". The phrases say what the lists are: "takes parameters".
std::string sameTensors(const Roles &roles, const char *gotPhrase, const Slots &got,
                        const char *expectedPhrase, const Slots &expected) {
  bool sameKeys = got.size() == expected.size();
  for (size_t i = 0; sameKeys && i < got.size(); ++i)
    sameKeys = got[i].key == expected[i].key;
  if (!sameKeys)
    return functionName(roles) + " " + gotPhrase + " " + names(got) + " where train_step " +
           expectedPhrase + " " + names(expected);
  for (size_t i = 0; i < got.size(); ++i) {
    if (!sameType(*got[i].info, *expected[i].info))
      return functionName(roles) + ": '" + got[i].info->name + "' is " +
             typeString(*got[i].info) + " where train_step's '" + expected[i].info->name +
             "' is " + typeString(*expected[i].info);
  }
  return "";
}

/// Checks that the function has exactly one output "loss", an f32 scalar.
std::string checkLoss(const Roles &roles) {
  if (roles.loss.empty())
    return functionName(roles) + " returns no 'loss'";
  const nnc_tensor_info_t &loss = *roles.loss[0].info;
  if (loss.dtype != NNC_DTYPE_F32 || loss.rank != 0)
    return functionName(roles) + " returns 'loss' as " + typeString(loss) +
           ", expected f32 scalar";
  return "";
}

/// The first output of roles in one of lists, as an error text ("" when none
/// is); `expected` says what the function may return.
std::string unexpectedOutput(const Roles &roles, std::initializer_list<const Slots *> lists,
                             const char *expected) {
  for (const Slots *slots : lists)
    if (!slots->empty())
      return functionName(roles) + " returns '" + slots->front().info->name + "', expected " +
             expected + " only";
  if (roles.loss.size() > 1)
    return functionName(roles) + " returns 'loss' " + std::to_string(roles.loss.size()) +
           " times";
  return "";
}

/// Checks the four functions against each other (docs/training.md); returns an
/// error text or "".
std::string checkSignatures(const Roles &init, const Roles &step, const Roles &gradients,
                            const Roles &eval) {
  if (!init.function->inputs.empty())
    return functionName(init) + " takes inputs (" +
           nameList(static_cast<int32_t>(init.function->inputs.size()),
                    [&](int32_t i) { return init.function->inputs[i].name; }) +
           "), expected none";
  if (std::string error = unexpectedOutput(init, {&init.loss, &init.grads, &init.others},
                                          "'param:<P>' and 'state:<S>'");
      !error.empty())
    return error;

  // The model's inputs, then labels: nnc_trainer_step's order. A model that
  // computes its own loss (--loss=model) takes no labels: eval takes all of
  // train_step's inputs then.
  bool labels = step.data.size() == eval.data.size() + 1;
  if (labels && step.data.back().key != "labels") {
    for (const Slot &slot : step.data)
      if (slot.key == "labels")
        return functionName(step) + " takes '" + step.data.back().info->name +
               "' after 'labels' (the model's inputs come first)";
    return functionName(step) + " takes '" + step.data.back().info->name +
           "' last, which eval does not take: the labels must be called 'labels'";
  }
  if (std::string error = checkLoss(step); !error.empty())
    return error;
  if (std::string error = unexpectedOutput(step, {&step.grads, &step.others},
                                          "'loss', 'param:<P>' and 'state:<S>'");
      !error.empty())
    return error;
  struct Pair {
    const Roles &roles;
    const char *gotPhrase;
    const Slots &got;
    const char *expectedPhrase;
    const Slots &expected;
  } pairs[] = {
      {init, "returns parameters", init.outParams, "takes", step.params},
      {init, "returns state", init.outStates, "takes", step.states},
      {step, "returns parameters", step.outParams, "takes", step.params},
      {step, "returns state", step.outStates, "takes", step.states},
      {gradients, "takes inputs", gradients.data, "takes", step.data},
      {gradients, "takes parameters", gradients.params, "takes", step.params},
      {gradients, "returns gradients", gradients.grads, "takes parameters", step.params},
  };
  for (const Pair &pair : pairs)
    if (std::string error = sameTensors(pair.roles, pair.gotPhrase, pair.got,
                                        pair.expectedPhrase, pair.expected);
        !error.empty())
      return error;

  if (std::string error = checkLoss(gradients); !error.empty())
    return error;
  if (std::string error = unexpectedOutput(
          gradients, {&gradients.outParams, &gradients.outStates, &gradients.others},
          "'loss' and 'grad:<P>'");
      !error.empty())
    return error;
  if (!gradients.states.empty())
    return functionName(gradients) + " takes state '" + gradients.states.front().info->name +
           "', which only train_step and eval take";
  // eval reads some of the state (batch norms' running statistics).
  for (const Slot &slot : eval.states) {
    auto it = std::find_if(step.states.begin(), step.states.end(),
                           [&](const Slot &s) { return s.key == slot.key; });
    if (it == step.states.end())
      return functionName(eval) + " takes state '" + slot.info->name +
             "', which train_step does not take";
    if (!sameType(*slot.info, *it->info))
      return functionName(eval) + ": '" + slot.info->name + "' is " + typeString(*slot.info) +
             " where train_step's is " + typeString(*it->info);
  }

  Slots modelInputs(step.data.begin(), step.data.end() - (labels ? 1 : 0));
  if (std::string error = sameTensors(eval, "takes inputs", eval.data, "takes the model's inputs",
                                      modelInputs);
      !error.empty())
    return error;
  return sameTensors(eval, "takes parameters", eval.params, "takes", step.params);
}

/// FNV-1a 64 over the train_step signature (docs/training.md).
struct Fnv1a {
  uint64_t hash = 0xcbf29ce484222325ull;
  void add(const void *data, size_t size) {
    for (size_t i = 0; i < size; ++i) {
      hash ^= static_cast<const unsigned char *>(data)[i];
      hash *= 0x100000001b3ull;
    }
  }
};

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%016llx", static_cast<unsigned long long>(value));
  return text;
}

/// The little-endian encoding of an integer, for checkpoint headers (the host
/// is little-endian: see the static_assert above).
template <typename T>
void append(std::string &out, T value) {
  out.append(reinterpret_cast<const char *>(&value), sizeof(value));
}

/// errno as a status code for a checkpoint file.
nnc_status_code_t fileErrorCode(int error) {
  if (error == ENOENT)
    return NNC_STATUS_NOT_FOUND;
  if (error == ENOSPC || error == EDQUOT || error == ENOMEM)
    return NNC_STATUS_RESOURCE_EXHAUSTED;
  return NNC_STATUS_INVALID_ARGUMENT;
}

struct FileCloser {
  void operator()(FILE *file) const { std::fclose(file); }
};
using File = std::unique_ptr<FILE, FileCloser>;
} // namespace

namespace nnc::runtime {
/// A parameter or state tensor: two buffers, one of them current, and where
/// each function takes or returns it (-1: it does not).
struct Variable {
  std::string name; // "param:fc1.weight", "state:step"
  const nnc_tensor_info_t *info; // train_step's input
  Buffer buffers[2];
  int32_t initOutput = -1, stepInput = -1, stepOutput = -1;
  int32_t gradientsInput = -1, gradientOutput = -1, evalInput = -1;
};
} // namespace nnc::runtime

struct nnc_trainer {
  ~nnc_trainer() {
    // The sessions first: they hold references of their own.
    step.reset();
    gradients.reset();
    eval.reset();
    module->release();
    runtime->release();
  }
  nnc_runtime *runtime = nullptr;
  nnc_module *module = nullptr;
  SessionHandle step, gradients, eval;
  std::vector<const nnc_tensor_info_t *> stepData, evalData; // as Roles::data
  std::vector<int32_t> stepDataIndex, gradientsDataIndex, evalDataIndex;
  int32_t stepLoss = -1, gradientsLoss = -1;
  /// In train_step's input order; the parameters' names, without the prefix,
  /// and infos (pointing to those names) are in the same order.
  std::vector<Variable> variables;
  std::vector<size_t> parameters; // indices into variables
  std::vector<std::string> parameterNames;
  std::vector<nnc_tensor_info_t> parameterInfos;
  int current = 0; // which of each variable's buffers holds its value
  int64_t steps = 0;
  bool hasGradients = false, hasEval = false;
  uint64_t signature = 0;
};

namespace {
/// Binds the caller's views to the data inputs `indices` of a session.
nnc_status_t bindData(nnc_session_t *session, const char *call,
                      const std::vector<int32_t> &indices,
                      const std::vector<const nnc_tensor_info_t *> &infos,
                      const nnc_tensor_view_t *inputs, int32_t count) {
  if (count < 0 || static_cast<size_t>(count) != indices.size())
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      std::string(call) + ": expected " + std::to_string(indices.size()) +
                          " inputs (" +
                          nameList(static_cast<int32_t>(infos.size()),
                                   [&](int32_t i) { return infos[i]->name; }) +
                          "), got " + std::to_string(count));
  if (count > 0 && !inputs)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT, std::string(call) + ": inputs is NULL");
  for (int32_t i = 0; i < count; ++i)
    if (nnc_status_t status = nnc_session_bind_input(session, indices[i], &inputs[i]))
      return status;
  return nullptr;
}

/// Binds buffer `set` of every variable a function takes (or returns).
nnc_status_t bindVariables(nnc_trainer &trainer, nnc_session_t *session,
                           int32_t Variable::*index, int set, bool isInput) {
  for (Variable &variable : trainer.variables) {
    int32_t at = variable.*index;
    if (at < 0)
      continue;
    const nnc_tensor_info_t &info = *variable.info;
    nnc_tensor_view_t view = {variable.buffers[set].get(), info.byte_size, info.dtype, info.rank,
                              info.shape};
    if (nnc_status_t status = isInput ? nnc_session_bind_input(session, at, &view)
                                      : nnc_session_bind_output(session, at, &view))
      return status;
  }
  return nullptr;
}

nnc_status_t readLoss(nnc_session_t *session, int32_t index, float *out_loss) {
  nnc_tensor_view_t view;
  if (nnc_status_t status = nnc_session_output(session, index, &view))
    return status;
  if (out_loss)
    std::memcpy(out_loss, view.data, sizeof(float));
  return nullptr;
}

/// The index into trainer.parameters of the parameter called name.
nnc_status_t findParameter(const nnc_trainer_t *trainer, const char *call, const char *name,
                           size_t &out) {
  for (size_t i = 0; i < trainer->parameterNames.size(); ++i) {
    if (trainer->parameterNames[i] == name) {
      out = i;
      return nullptr;
    }
  }
  std::string hint = startsWith(name, kParamPrefix) ? "; names go without the 'param:' prefix" : "";
  return makeStatus(NNC_STATUS_NOT_FOUND,
                    std::string(call) + ": no parameter '" + name + "' (parameters: " +
                        nameList(static_cast<int32_t>(trainer->parameterNames.size()),
                                 [&](int32_t i) { return trainer->parameterNames[i].c_str(); }) +
                        ")" + hint);
}

/// Checks the arguments that the parameter and gradient copies share and
/// finds the parameter.
nnc_status_t checkCopy(const nnc_trainer_t *trainer, const char *call, const char *name,
                       const void *data, size_t bytes, size_t &out) {
  if (!trainer || !name || !data)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      std::string(call) + ": trainer, name and data must not be NULL");
  if (nnc_status_t status = findParameter(trainer, call, name, out))
    return status;
  const nnc_tensor_info_t &info = trainer->parameterInfos[out];
  if (bytes != info.byte_size)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      std::string(call) + ": parameter '" + name + "' (" + typeString(info) +
                          ") has " + std::to_string(info.byte_size) + " bytes, got " +
                          std::to_string(bytes));
  return nullptr;
}

/// Sequential reads of a checkpoint, every short read reported as where the
/// file ends.
struct Reader {
  FILE *file;
  std::string path;
  uint64_t size;
  uint64_t offset = 0;

  nnc_status_t read(void *out, uint64_t bytes, const std::string &what) {
    if (size - offset < bytes)
      return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                        "checkpoint '" + path + "' is truncated: it ends in " + what +
                            " (at byte " + std::to_string(size) + ")");
    if (bytes && std::fread(out, 1, bytes, file) != bytes)
      return makeStatus(NNC_STATUS_INVALID_ARGUMENT, "cannot read checkpoint '" + path +
                                                         "': " + std::strerror(errno));
    offset += bytes;
    return nullptr;
  }
  template <typename T>
  nnc_status_t read(T &value, const std::string &what) {
    return read(&value, sizeof(value), what);
  }
  nnc_status_t invalid(const std::string &message) const {
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT, "checkpoint '" + path + "': " + message);
  }
};

/// Reads one tensor of a checkpoint into `into`, after checking it is
/// `variable` (the index-th).
nnc_status_t readTensor(Reader &reader, const Variable &variable, size_t index, void *into) {
  std::string what = "tensor " + std::to_string(index);
  uint32_t nameLength;
  if (nnc_status_t status = reader.read(nameLength, "the name length of " + what))
    return status;
  // A name of the wrong length is reported as read when it is short enough
  // to be one; a long one is corruption, not worth its bytes.
  if (nameLength != variable.name.size() && nameLength > 4096)
    return reader.invalid(what + " has a name of " + std::to_string(nameLength) +
                          " bytes, expected '" + variable.name + "'");
  std::string name(nameLength, '\0');
  if (nnc_status_t status = reader.read(name.data(), nameLength, "the name of " + what))
    return status;
  if (name != variable.name)
    return reader.invalid(what + " is '" + name + "', expected '" + variable.name + "'");
  what = "tensor '" + name + "'";
  const nnc_tensor_info_t &info = *variable.info;
  int32_t dtype;
  uint32_t rank;
  if (nnc_status_t status = reader.read(dtype, "the dtype of " + what))
    return status;
  if (dtype != info.dtype)
    return reader.invalid(what + " is " + nnc_dtype_name(dtype) + " (" + std::to_string(dtype) +
                          "), expected " + nnc_dtype_name(info.dtype));
  if (nnc_status_t status = reader.read(rank, "the rank of " + what))
    return status;
  if (rank != static_cast<uint32_t>(info.rank))
    return reader.invalid(what + " has rank " + std::to_string(rank) + ", expected " +
                          std::to_string(info.rank) + " (" + shapeString(info.rank, info.shape) +
                          ")");
  std::vector<int64_t> dims(rank);
  if (nnc_status_t status = reader.read(dims.data(), sizeof(int64_t) * rank, "the dims of " + what))
    return status;
  if (rank && std::memcmp(dims.data(), info.shape, sizeof(int64_t) * rank) != 0)
    return reader.invalid(what + " has shape " + shapeString(info.rank, dims.data()) +
                          ", expected " + shapeString(info.rank, info.shape));
  uint64_t bytes;
  if (nnc_status_t status = reader.read(bytes, "the byte count of " + what))
    return status;
  if (bytes != info.byte_size)
    return reader.invalid(what + " holds " + std::to_string(bytes) + " bytes, expected " +
                          std::to_string(info.byte_size));
  return reader.read(into, bytes, "the data of " + what);
}

/// The step count a checkpoint's `state:step` holds, when it holds a count.
bool stepCount(const Variable &variable, const void *data, int64_t &out) {
  if (variable.name != "state:step" || variable.info->rank != 0)
    return false;
  double value;
  switch (variable.info->dtype) {
  case NNC_DTYPE_F32: value = *static_cast<const float *>(data); break;
  case NNC_DTYPE_F64: value = *static_cast<const double *>(data); break;
  case NNC_DTYPE_I32: value = *static_cast<const int32_t *>(data); break;
  case NNC_DTYPE_I64: {
    int64_t count = *static_cast<const int64_t *>(data);
    if (count < 0)
      return false;
    out = count;
    return true;
  }
  default: return false;
  }
  if (!std::isfinite(value) || value < 0 || value > 9.0e18)
    return false;
  out = static_cast<int64_t>(value);
  return true;
}
} // namespace

nnc_status_t nnc_trainer_create(nnc_runtime_t *runtime, nnc_module_t *module,
                                const nnc_session_options_t *options,
                                nnc_trainer_t **out_trainer) {
  if (!runtime || !module || !out_trainer)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      "nnc_trainer_create: runtime, module and out_trainer must not be NULL");
  nnc_session_options_t defaults;
  nnc_session_options_initialize(&defaults);
  if (!options)
    options = &defaults;
  if (!options->device)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      "nnc_trainer_create: options.device must not be NULL");

  const char *const functions[] = {kInit, kTrainStep, kLossAndGradients, kEval};
  const nnc_function *found[4] = {};
  std::vector<const char *> missing;
  for (int i = 0; i < 4; ++i) {
    for (const nnc_function &function : module->functions)
      if (std::strcmp(function.abi->name, functions[i]) == 0)
        found[i] = &function;
    if (!found[i])
      missing.push_back(functions[i]);
  }
  if (!missing.empty())
    return makeStatus(NNC_STATUS_FAILED_PRECONDITION,
                      "module '" + module->path +
                          "' is not a training module: it has no function " +
                          nameList(static_cast<int32_t>(missing.size()),
                                   [&](int32_t i) { return missing[i]; }) +
                          " (compile it with nnc --train)");
  // Parameters, gradients and checkpoints are numbers; a string tensor's
  // elements are pointers, which none of them could hold.
  for (const nnc_function *function : found)
    for (bool isInput : {true, false})
      for (const nnc_tensor_info_t &info : isInput ? function->inputs : function->outputs)
        if (info.dtype == NNC_DTYPE_STRING)
          return makeStatus(NNC_STATUS_UNIMPLEMENTED,
                            "training module '" + module->path + "': function '" +
                                function->abi->name + "' has string " +
                                (isInput ? "input '" : "output '") + info.name +
                                "', and the trainer runs numeric tensors only");
  Roles init = sortRoles(found[0]), step = sortRoles(found[1]), gradients = sortRoles(found[2]),
        eval = sortRoles(found[3]);
  if (std::string error = checkSignatures(init, step, gradients, eval); !error.empty())
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      "training module '" + module->path + "' is inconsistent: " + error);

  runtime->retain();
  module->retain();
  std::unique_ptr<nnc_trainer> trainer(new nnc_trainer);
  trainer->runtime = runtime;
  trainer->module = module;
  nnc_session_t *sessions[4] = {};
  for (int i = 0; i < 4; ++i) {
    nnc_session_options_t sessionOptions = *options;
    sessionOptions.function = functions[i];
    sessionOptions.profile = 0; // only the device is the caller's (runtime.h)
    if (nnc_status_t status = nnc_session_create(runtime, module, &sessionOptions, &sessions[i])) {
      for (nnc_session_t *session : sessions)
        nnc_session_release(session);
      return status;
    }
  }
  SessionHandle initSession(sessions[0]);
  trainer->step.reset(sessions[1]);
  trainer->gradients.reset(sessions[2]);
  trainer->eval.reset(sessions[3]);

  for (const Slot &slot : step.data) {
    trainer->stepData.push_back(slot.info);
    trainer->stepDataIndex.push_back(slot.index);
  }
  for (const Slot &slot : gradients.data)
    trainer->gradientsDataIndex.push_back(slot.index);
  for (const Slot &slot : eval.data) {
    trainer->evalData.push_back(slot.info);
    trainer->evalDataIndex.push_back(slot.index);
  }
  trainer->stepLoss = step.loss[0].index;
  trainer->gradientsLoss = gradients.loss[0].index;

  // The variables in train_step's input order; checkSignatures made every
  // other list match train_step's, position by position.
  size_t param = 0, state = 0;
  Fnv1a signature;
  for (const nnc_tensor_info_t &info : found[1]->inputs) {
    bool isParam = startsWith(info.name, kParamPrefix);
    if (!isParam && !startsWith(info.name, kStatePrefix))
      continue;
    Variable variable;
    variable.name = info.name;
    variable.info = &info;
    if (isParam) {
      size_t i = param++;
      trainer->parameters.push_back(trainer->variables.size());
      trainer->parameterNames.push_back(step.params[i].key);
      variable.initOutput = init.outParams[i].index;
      variable.stepInput = step.params[i].index;
      variable.stepOutput = step.outParams[i].index;
      variable.gradientsInput = gradients.params[i].index;
      variable.gradientOutput = gradients.grads[i].index;
      variable.evalInput = eval.params[i].index;
    } else {
      size_t i = state++;
      variable.initOutput = init.outStates[i].index;
      variable.stepInput = step.states[i].index;
      variable.stepOutput = step.outStates[i].index;
      for (const Slot &slot : eval.states)
        if (slot.key == step.states[i].key)
          variable.evalInput = slot.index;
    }
    for (Buffer &buffer : variable.buffers)
      if (nnc_status_t status = allocate(info.byte_size, "'" + variable.name + "'", buffer))
        return status;
    signature.add(info.name, std::strlen(info.name) + 1); // with its 0 byte
    uint32_t rank = static_cast<uint32_t>(info.rank);
    signature.add(&info.dtype, sizeof(info.dtype));
    signature.add(&rank, sizeof(rank));
    signature.add(info.shape, sizeof(int64_t) * rank);
    trainer->variables.push_back(std::move(variable));
  }
  trainer->signature = signature.hash;
  // The names are complete, so the infos may point into them.
  for (size_t i = 0; i < trainer->parameters.size(); ++i) {
    nnc_tensor_info_t info = *trainer->variables[trainer->parameters[i]].info;
    info.name = trainer->parameterNames[i].c_str();
    trainer->parameterInfos.push_back(info);
  }

  // init writes straight into the first set; its session is not needed again.
  if (nnc_status_t status = bindVariables(*trainer, initSession.get(), &Variable::initOutput,
                                          trainer->current, /*isInput=*/false))
    return status;
  if (nnc_status_t status = nnc_session_run(initSession.get()))
    return status;
  *out_trainer = trainer.release();
  return nullptr;
}

void nnc_trainer_release(nnc_trainer_t *trainer) { delete trainer; }

const char *nnc_trainer_device(const nnc_trainer_t *trainer) {
  return nnc_session_device(trainer->step.get());
}

int32_t nnc_trainer_input_count(const nnc_trainer_t *trainer) {
  return static_cast<int32_t>(trainer->stepData.size());
}

int32_t nnc_trainer_has_labels(const nnc_trainer_t *trainer) {
  return trainer->stepData.size() != trainer->evalData.size() ? 1 : 0;
}

const nnc_tensor_info_t *nnc_trainer_input(const nnc_trainer_t *trainer, int32_t index) {
  if (index < 0 || index >= nnc_trainer_input_count(trainer))
    return nullptr;
  return trainer->stepData[index];
}

int32_t nnc_trainer_parameter_count(const nnc_trainer_t *trainer) {
  return static_cast<int32_t>(trainer->parameterInfos.size());
}

const nnc_tensor_info_t *nnc_trainer_parameter(const nnc_trainer_t *trainer, int32_t index) {
  if (index < 0 || index >= nnc_trainer_parameter_count(trainer))
    return nullptr;
  return &trainer->parameterInfos[index];
}

nnc_status_t nnc_trainer_read_parameter(const nnc_trainer_t *trainer, const char *name,
                                        void *data, size_t bytes) {
  size_t index;
  if (nnc_status_t status =
          checkCopy(trainer, "nnc_trainer_read_parameter", name, data, bytes, index))
    return status;
  const Variable &variable = trainer->variables[trainer->parameters[index]];
  std::memcpy(data, variable.buffers[trainer->current].get(), bytes);
  return nullptr;
}

nnc_status_t nnc_trainer_write_parameter(nnc_trainer_t *trainer, const char *name,
                                         const void *data, size_t bytes) {
  size_t index;
  if (nnc_status_t status =
          checkCopy(trainer, "nnc_trainer_write_parameter", name, data, bytes, index))
    return status;
  Variable &variable = trainer->variables[trainer->parameters[index]];
  std::memcpy(variable.buffers[trainer->current].get(), data, bytes);
  return nullptr;
}

int64_t nnc_trainer_steps(const nnc_trainer_t *trainer) { return trainer->steps; }

nnc_status_t nnc_trainer_step(nnc_trainer_t *trainer, const nnc_tensor_view_t *inputs,
                              int32_t count, float *out_loss) {
  if (!trainer)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT, "nnc_trainer_step: trainer is NULL");
  nnc_session_t *session = trainer->step.get();
  int next = 1 - trainer->current;
  if (nnc_status_t status = bindData(session, "nnc_trainer_step", trainer->stepDataIndex,
                                     trainer->stepData, inputs, count))
    return status;
  if (nnc_status_t status = bindVariables(*trainer, session, &Variable::stepInput,
                                          trainer->current, /*isInput=*/true))
    return status;
  if (nnc_status_t status =
          bindVariables(*trainer, session, &Variable::stepOutput, next, /*isInput=*/false))
    return status;
  if (nnc_status_t status = nnc_session_run(session))
    return status;
  if (nnc_status_t status = readLoss(session, trainer->stepLoss, out_loss))
    return status;
  trainer->current = next;
  ++trainer->steps;
  return nullptr;
}

nnc_status_t nnc_trainer_loss_and_gradients(nnc_trainer_t *trainer,
                                            const nnc_tensor_view_t *inputs, int32_t count,
                                            float *out_loss) {
  if (!trainer)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      "nnc_trainer_loss_and_gradients: trainer is NULL");
  nnc_session_t *session = trainer->gradients.get();
  trainer->hasGradients = false;
  if (nnc_status_t status = bindData(session, "nnc_trainer_loss_and_gradients",
                                     trainer->gradientsDataIndex, trainer->stepData, inputs, count))
    return status;
  if (nnc_status_t status = bindVariables(*trainer, session, &Variable::gradientsInput,
                                          trainer->current, /*isInput=*/true))
    return status;
  if (nnc_status_t status = nnc_session_run(session))
    return status;
  if (nnc_status_t status = readLoss(session, trainer->gradientsLoss, out_loss))
    return status;
  trainer->hasGradients = true;
  return nullptr;
}

nnc_status_t nnc_trainer_read_gradient(const nnc_trainer_t *trainer, const char *name,
                                       void *data, size_t bytes) {
  size_t index;
  if (nnc_status_t status =
          checkCopy(trainer, "nnc_trainer_read_gradient", name, data, bytes, index))
    return status;
  if (!trainer->hasGradients)
    return makeStatus(NNC_STATUS_FAILED_PRECONDITION,
                      "nnc_trainer_read_gradient: no gradients (nnc_trainer_loss_and_gradients "
                      "has not succeeded since the trainer was created or since it last failed)");
  const Variable &variable = trainer->variables[trainer->parameters[index]];
  nnc_tensor_view_t view;
  if (nnc_status_t status =
          nnc_session_output(trainer->gradients.get(), variable.gradientOutput, &view))
    return status;
  std::memcpy(data, view.data, bytes);
  return nullptr;
}

nnc_status_t nnc_trainer_eval(nnc_trainer_t *trainer, const nnc_tensor_view_t *inputs,
                              int32_t count) {
  if (!trainer)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT, "nnc_trainer_eval: trainer is NULL");
  nnc_session_t *session = trainer->eval.get();
  trainer->hasEval = false;
  if (nnc_status_t status = bindData(session, "nnc_trainer_eval", trainer->evalDataIndex,
                                     trainer->evalData, inputs, count))
    return status;
  if (nnc_status_t status = bindVariables(*trainer, session, &Variable::evalInput,
                                          trainer->current, /*isInput=*/true))
    return status;
  if (nnc_status_t status = nnc_session_run(session))
    return status;
  trainer->hasEval = true;
  return nullptr;
}

nnc_status_t nnc_trainer_eval_output(const nnc_trainer_t *trainer, int32_t index,
                                     nnc_tensor_view_t *out_view) {
  if (!trainer || !out_view)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      "nnc_trainer_eval_output: trainer and out_view must not be NULL");
  const nnc_function_t *eval = nnc_session_function(trainer->eval.get());
  // An index out of range is the session's to report, results or not.
  if (!trainer->hasEval && nnc_function_output(eval, index))
    return makeStatus(NNC_STATUS_FAILED_PRECONDITION,
                      "nnc_trainer_eval_output: no results (nnc_trainer_eval has not succeeded "
                      "since the trainer was created or since it last failed)");
  return nnc_session_output(trainer->eval.get(), index, out_view);
}

nnc_status_t nnc_trainer_save_checkpoint(const nnc_trainer_t *trainer, const char *path) {
  if (!trainer || !path)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      "nnc_trainer_save_checkpoint: trainer and path must not be NULL");
  // Written aside and renamed over path, so that a failure (a full disk)
  // never leaves a torn checkpoint where a good one was.
  std::string temporary = std::string(path) + ".tmp";
  auto fail = [&](const char *what) {
    int error = errno;
    std::remove(temporary.c_str());
    return makeStatus(fileErrorCode(error), std::string("cannot ") + what + " checkpoint '" +
                                                path + "': " + std::strerror(error));
  };
  File file(std::fopen(temporary.c_str(), "wb"));
  if (!file)
    return fail("create");
  std::string header(kMagic, sizeof(kMagic));
  append(header, trainer->signature);
  append(header, static_cast<uint32_t>(trainer->variables.size()));
  for (const Variable &variable : trainer->variables) {
    const nnc_tensor_info_t &info = *variable.info;
    append(header, static_cast<uint32_t>(variable.name.size()));
    header += variable.name;
    append(header, info.dtype);
    append(header, static_cast<uint32_t>(info.rank));
    for (int32_t d = 0; d < info.rank; ++d)
      append(header, info.shape[d]);
    append(header, static_cast<uint64_t>(info.byte_size));
    bool written =
        std::fwrite(header.data(), 1, header.size(), file.get()) == header.size() &&
        std::fwrite(variable.buffers[trainer->current].get(), 1, info.byte_size, file.get()) ==
            info.byte_size;
    if (!written)
      return fail("write");
    header.clear();
  }
  if (!header.empty() && std::fwrite(header.data(), 1, header.size(), file.get()) != header.size())
    return fail("write");
  if (std::fclose(file.release()) != 0)
    return fail("write");
  if (std::rename(temporary.c_str(), path) != 0)
    return fail("write");
  return nullptr;
}

nnc_status_t nnc_trainer_load_checkpoint(nnc_trainer_t *trainer, const char *path) {
  if (!trainer || !path)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      "nnc_trainer_load_checkpoint: trainer and path must not be NULL");
  std::string where = "checkpoint '" + std::string(path) + "'";
  File file(std::fopen(path, "rb"));
  struct stat info;
  if (!file || fstat(fileno(file.get()), &info) != 0) {
    int error = errno;
    return makeStatus(fileErrorCode(error), "cannot open " + where + ": " + std::strerror(error));
  }
  if (!S_ISREG(info.st_mode))
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT, where + " is not a regular file");
  Reader reader{file.get(), path, static_cast<uint64_t>(info.st_size)};

  char magic[sizeof(kMagic)] = {};
  size_t head = static_cast<size_t>(std::min<uint64_t>(reader.size, sizeof(magic)));
  if (nnc_status_t status = reader.read(magic, head, "the magic"))
    return status;
  if (std::memcmp(magic, kMagic, head) != 0 || head == 0)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      where + (head ? " is not an nnc checkpoint (it does not start with "
                                      "'NNCCKPT1')"
                                    : " is empty"));
  if (nnc_status_t status = reader.read(magic + head, sizeof(magic) - head, "the magic"))
    return status;
  uint64_t signature;
  if (nnc_status_t status = reader.read(signature, "the signature"))
    return status;
  if (signature != trainer->signature)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      where + " belongs to another model or optimizer (signature " +
                          hex(signature) + ", this trainer's is " + hex(trainer->signature) + ")");
  uint32_t count;
  if (nnc_status_t status = reader.read(count, "the tensor count"))
    return status;
  if (count != trainer->variables.size())
    return reader.invalid("holds " + std::to_string(count) + " tensors, expected " +
                          std::to_string(trainer->variables.size()));
  // Into the spare set: the current one stays as it is until all is read.
  int spare = 1 - trainer->current;
  for (size_t i = 0; i < trainer->variables.size(); ++i) {
    Variable &variable = trainer->variables[i];
    if (nnc_status_t status = readTensor(reader, variable, i, variable.buffers[spare].get()))
      return status;
  }
  if (reader.offset != reader.size)
    return reader.invalid("has trailing data after its last tensor (" +
                          std::to_string(reader.size - reader.offset) + " bytes)");
  trainer->current = spare;
  for (const Variable &variable : trainer->variables)
    stepCount(variable, variable.buffers[spare].get(), trainer->steps);
  return nullptr;
}
