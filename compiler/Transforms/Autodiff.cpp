//===- Autodiff.cpp - the training functions of a model -------------------===//
//
// nn-autodiff turns an inference @main into a training module: the forward
// pass with the parameters as arguments, a loss, a reverse sweep built from
// each op's vector-Jacobian product (GradientOpInterface), and an optimizer
// update, all as nn ops. Everything after this pass (folding, fusion, tiling,
// code generation) is the same as for inference, on every target. The
// function names and argument names are the contract with the runtime's
// trainer (docs/training.md).
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/NN/IR/NNBuilder.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

namespace nnc::nn {
#define GEN_PASS_DEF_NNAUTODIFF
#include "compiler/Transforms/Passes.h.inc"
} // namespace nnc::nn

using namespace mlir;
using namespace nnc::nn;

namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

bool isFloatTensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && isa<FloatType>(type.getElementType());
}

/// A trainable parameter: an initializer of @main.
struct Parameter {
  ConstantOp constant;
  std::string name;
};

/// One state tensor: `state:<name>` of `type`. Optimizer state starts at
/// zeros; a batch norm's running statistic starts at `initial`.
struct StateSlot {
  std::string name;
  RankedTensorType type;
  ConstantOp initial = nullptr;
};

/// A batch norm whose running mean and variance are initializers: training
/// updates them (state `running:<initializer>`, or `running:<initializer>@K`
/// for the K-th batch norm statistic read of an initializer that something
/// else reads too, as when an exporter merged equal initializers), and eval
/// reads them.
struct RunningStats {
  BatchNormOp norm;
  unsigned meanSlot, varianceSlot; // into `state`
};


struct AutodiffPass : nnc::nn::impl::NNAutodiffBase<AutodiffPass> {
  using NNAutodiffBase::NNAutodiffBase;

  func::FuncOp main;
  SmallVector<Parameter> params;
  SmallVector<StateSlot> state;
  SmallVector<RunningStats> running;
  RankedTensorType labelsType;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    main = module.lookupSymbol<func::FuncOp>("main");
    if (!main) {
      module.emitError("training needs a function @main");
      return signalPassFailure();
    }
    foldSettings();
    if (failed(checkOptions()) || failed(checkMain()) || failed(findParameters()) ||
        failed(chooseLabels()))
      return signalPassFailure();
    planState();
    if (failed(planRunningStats()))
      return signalPassFailure();
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointAfter(main);
    if (failed(buildInit(b)) || failed(buildEval(b)) || failed(buildTraining(b, false)) ||
        failed(buildTraining(b, true)))
      return signalPassFailure();
    main.erase();
  }

  /// Folds what the exporter computes from constants alone (a resize's
  /// scales, a reshape's shape) and refines the types after it, so gradients
  /// see static shapes and constant settings. Nothing an initializer feeds is
  /// folded: the parameters stay as they are until they are arguments.
  void foldSettings() {
    auto isSetting = [](Value v) {
      auto constant = v.getDefiningOp<ConstantOp>();
      return constant && !constant->hasAttr("nn.initializer");
    };
    for (int round = 0; round < 32; ++round) {
      bool folded = false;
      for (Operation &op : llvm::make_early_inc_range(main.getBody().front())) {
        if (isa<ConstantOp>(op) || op.getNumResults() != 1 || op.getNumOperands() == 0 ||
            !llvm::all_of(op.getOperands(), isSetting))
          continue;
        SmallVector<Attribute> operands;
        for (Value v : op.getOperands())
          operands.push_back(v.getDefiningOp<ConstantOp>().getValue());
        SmallVector<OpFoldResult> results;
        if (failed(op.fold(operands, results)) || results.size() != 1)
          continue;
        auto value = dyn_cast_if_present<ElementsAttr>(dyn_cast<Attribute>(results[0]));
        if (!value || !areCompatibleResultTypes(TypeRange{value.getType()}, op.getResultTypes()))
          continue;
        OpBuilder b(&op);
        op.getResult(0).replaceAllUsesWith(ConstantOp::create(b, op.getLoc(), value).getResult());
        op.erase();
        folded = true;
      }
      if (!refineResultTypes(main) && !folded)
        break;
    }
  }

  LogicalResult checkOptions() {
    auto bad = [&](const Twine &message) { return getOperation().emitError(message); };
    if (!loss.empty() && loss != "model" && loss != "mse" && loss != "cross-entropy")
      return bad("unknown loss '" + loss + "' (expected model, mse or cross-entropy)");
    if (optimizer != "sgd" && optimizer != "adam" && optimizer != "adamw")
      return bad("unknown optimizer '" + optimizer + "' (expected sgd, adam or adamw)");
    if (!(learningRate > 0) || !(momentum >= 0) || !(weightDecay >= 0) ||
        !(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1) || !(epsilon > 0))
      return bad("optimizer settings out of range: lr and eps must be positive, momentum and "
                 "weight decay non-negative, beta1 and beta2 in [0, 1)");
    return success();
  }

  LogicalResult checkMain() {
    if (main.getNumResults() == 0)
      return main.emitError("training needs a model output for the loss");
    for (Type type : llvm::concat<const Type>(main.getArgumentTypes(), main.getResultTypes()))
      if (!cast<RankedTensorType>(type).hasStaticShape())
        return main.emitError("training needs static shapes (got ")
               << type << "); pin dynamic dims with --input-shape or --dim";
    // Dims that become dynamic inside (a Slice to a run-time length feeding
    // a recurrence, imported as a loop over its steps): the reverse sweep
    // differentiates a straight line of static ops, and would not see the
    // parameters a loop's body reads.
    for (Operation &op : main.getBody().front()) {
      if (op.getNumRegions() != 0)
        return op.emitError("training cannot differentiate a loop (a recurrent op or Loop of a "
                            "length known only at run time): pin a sequence length with --dim or "
                            "--input-shape, or make a Loop's trip count a constant");
      for (Type type : op.getResultTypes())
        if (auto tensor = dyn_cast<RankedTensorType>(type); tensor && !tensor.hasStaticShape())
          return op.emitError("training needs static shapes (a value of type ")
                 << type << " inside the model); pin dynamic dims with --input-shape or --dim";
    }
    for (DropoutOp dropout : main.getBody().getOps<DropoutOp>()) {
      std::optional<double> ratio;
      if (std::optional<APFloat> attr = dropout.getRatio())
        ratio = attr->convertToDouble();
      if (!ratio)
        return dropout.emitOpError("needs a constant ratio for training");
      if (!(*ratio >= 0 && *ratio < 1))
        return dropout.emitOpError("ratio must be in [0, 1) (got ") << *ratio << ")";
    }
    return success();
  }

  /// How many leading operands of `op` the loss can be differentiated
  /// through: a training batch norm reads its batch's statistics, not the
  /// running ones; a resize's scales and a pad's fill value are settings.
  static unsigned differentiableOperands(Operation &op) {
    if (isa<BatchNormOp>(op))
      return 3;
    if (isa<ResizeOp, PadOp>(op))
      return 1;
    return op.getNumOperands();
  }

  /// The float initializers the first result depends on through float values
  /// (the operands differentiableOperands counts).
  LogicalResult findParameters() {
    Block &body = main.getBody().front();
    llvm::StringSet<> frozen;
    for (const std::string &name : freeze)
      frozen.insert(name);
    llvm::StringSet<> seen;
    DenseSet<Value> active; // depends on an initializer
    for (Operation &op : body) {
      auto constant = dyn_cast<ConstantOp>(op);
      if (auto name = op.getAttrOfType<StringAttr>("nn.initializer"); constant && name) {
        seen.insert(name.getValue());
        if (isFloatTensor(constant) && !frozen.contains(name.getValue()) &&
            !op.hasAttr("nn.loss_weight"))
          active.insert(constant);
        continue;
      }
      if (llvm::any_of(op.getOperands(), [&](Value v) { return active.contains(v); }))
        for (Value r : op.getResults())
          if (isFloatTensor(r))
            active.insert(r);
    }
    for (const std::string &name : freeze)
      if (!seen.contains(name))
        return main.emitError("--freeze names '") << name << "', which is no initializer";
    // Walk back from the loss's input through active values.
    DenseSet<Value> needed;
    Value output = body.getTerminator()->getOperand(0);
    if (active.contains(output))
      needed.insert(output);
    for (Operation &op : llvm::reverse(body)) {
      if (llvm::none_of(op.getResults(), [&](Value r) { return needed.contains(r); }))
        continue;
      for (Value v : op.getOperands().take_front(differentiableOperands(op)))
        if (active.contains(v))
          needed.insert(v);
    }
    for (Operation &op : body)
      if (auto constant = dyn_cast<ConstantOp>(op); constant && needed.contains(constant))
        params.push_back({constant, op.getAttrOfType<StringAttr>("nn.initializer").str()});
    if (params.empty())
      return main.emitError("the model has no trainable parameters: no float initializer "
                            "(unfrozen) reaches its first output");
    return success();
  }

  /// Picks the loss when none was asked for (the model's own when its first
  /// output is a float scalar, else mse) and the labels' type; a model's own
  /// loss takes no labels (they are among the model's inputs).
  LogicalResult chooseLabels() {
    auto output = cast<RankedTensorType>(main.getResultTypes()[0]);
    bool scalar = output.getRank() == 0 && isa<FloatType>(output.getElementType());
    if (loss.empty())
      loss = scalar ? "model" : "mse";
    if (loss == "model") {
      if (!scalar)
        return main.emitError("--loss=model needs the model's first output to be its loss, a "
                              "float scalar (got ")
               << output << ")";
      return success();
    }
    for (const std::string &name : dataNames())
      if (name == "labels")
        return main.emitError("the model has an input named 'labels', the name the training "
                              "functions give the labels of --loss=")
               << loss << "; rename it, or use --loss=model if the model computes its loss";
    if (loss == "mse") {
      labelsType = output;
      return success();
    }
    if (output.getRank() != 2)
      return main.emitError("cross-entropy needs logits of shape N x C (got ") << output << ")";
    labelsType = RankedTensorType::get({output.getDimSize(0)}, IntegerType::get(&getContext(), 64));
    return success();
  }

  void planState() {
    MLIRContext *context = &getContext();
    state.push_back({"step", RankedTensorType::get({}, Float32Type::get(context))});
    for (Parameter &p : params) {
      auto type = tensorType(p.constant);
      if (optimizer == "sgd" && momentum > 0)
        state.push_back({p.name + ":momentum", type});
      if (optimizer != "sgd") {
        state.push_back({p.name + ":m", type});
        state.push_back({p.name + ":v", type});
      }
    }
  }

  /// The running statistics of every batch norm that has them as
  /// initializers, after the optimizer state.
  LogicalResult planRunningStats() {
    Block &body = main.getBody().front();
    // Each batch norm statistic read, numbered per initializer in op order
    // (mean before variance), as the exporter numbers them in node order.
    DenseMap<std::pair<Operation *, unsigned>, unsigned> readIndex;
    DenseMap<Operation *, unsigned> reads;
    for (BatchNormOp norm : body.getOps<BatchNormOp>())
      for (unsigned operand : {3u, 4u})
        if (Operation *def = norm->getOperand(operand).getDefiningOp())
          readIndex[{norm, operand}] = reads[def]++;
    llvm::StringSet<> names;
    for (const StateSlot &s : state)
      names.insert(s.name);
    auto isStat = [](Value v) {
      auto constant = v.getDefiningOp<ConstantOp>();
      return constant && constant->hasAttr("nn.initializer") && isFloatTensor(constant);
    };
    for (BatchNormOp norm : body.getOps<BatchNormOp>()) {
      if (!isStat(norm.getMean()) || !isStat(norm.getVariance()))
        continue;
      unsigned slots[2];
      for (unsigned operand : {3u, 4u}) {
        auto constant = norm->getOperand(operand).getDefiningOp<ConstantOp>();
        std::string slot =
            "running:" + constant->getAttrOfType<StringAttr>("nn.initializer").str();
        // An initializer read by anything else too (another batch norm, the
        // scale an exporter merged it with) gets one statistic per read.
        if (!constant->hasOneUse())
          slot += "@" + std::to_string(readIndex.lookup({norm, operand}));
        state.push_back({slot, tensorType(constant), constant});
        slots[operand - 3] = state.size() - 1;
        if (!names.insert(slot).second)
          return main.emitError("two state tensors are called 'state:") << slot << "'";
      }
      running.push_back({norm, slots[0], slots[1]});
    }
    return success();
  }

  /// The running statistics' slots: the last 2 * running.size() of `state`.
  ArrayRef<StateSlot> runningSlots() const {
    return ArrayRef(state).take_back(2 * running.size());
  }

  /// A new public function; `names` become the arguments' and results' nn.name.
  func::FuncOp makeFunction(OpBuilder &b, StringRef name, ArrayRef<Type> inputs,
                            ArrayRef<std::string> inputNames, ArrayRef<Type> outputs,
                            ArrayRef<std::string> outputNames) {
    auto func = func::FuncOp::create(b, main.getLoc(), name, b.getFunctionType(inputs, outputs));
    for (auto [i, n] : llvm::enumerate(inputNames))
      func.setArgAttr(i, "nn.name", b.getStringAttr(n));
    for (auto [i, n] : llvm::enumerate(outputNames))
      func.setResultAttr(i, "nn.name", b.getStringAttr(n));
    func.addEntryBlock();
    return func;
  }

  std::vector<std::string> dataNames() {
    std::vector<std::string> names;
    for (unsigned i = 0; i < main.getNumArguments(); ++i) {
      auto name = main.getArgAttrOfType<StringAttr>(i, "nn.name");
      names.push_back(name ? name.str() : "input_" + std::to_string(i));
    }
    return names;
  }

  /// Batch norm in training mode: normalized by the batch's mean and
  /// (biased) variance over all dims but the channels, as PyTorch's train().
  /// Built from nn ops, which have gradients. With `running` (the running
  /// mean and variance), also returns their update as PyTorch makes it:
  /// weighted by the op's momentum, the variance's batch term unbiased.
  Value trainingBatchNorm(NNBuilder &nb, BatchNormOp norm, Value x, Value scale, Value bias,
                          std::pair<Value, Value> *running = nullptr) {
    auto type = tensorType(x);
    int64_t rank = type.getRank();
    SmallVector<int64_t> axes{0}, channelShape(rank, 1);
    for (int64_t i = 2; i < rank; ++i)
      axes.push_back(i);
    channelShape[1] = type.getDimSize(1);
    auto mean = [&](Value v) {
      return nb.make<ReduceMeanOp>(v, nb.b.getDenseI64ArrayAttr(axes), nb.b.getBoolAttr(true));
    };
    auto perChannel = [&](Value v) { return nb.reshape(v, channelShape); };
    Value centered = nb.sub(x, mean(x));
    Value variance = mean(nb.mul(centered, centered));
    Value rstd = nb.make<ReciprocalOp>(nb.make<SqrtOp>(
        nb.add(variance, nb.scalar(x, norm.getEpsilon().convertToDouble()))));
    if (running) {
      int64_t count = type.getNumElements() / std::max<int64_t>(type.getDimSize(1), 1);
      double keep = norm.getMomentum().convertToDouble();
      auto blend = [&](Value old, Value batch, double factor) {
        Value flat = nb.reshape(batch, tensorType(old).getShape());
        return nb.add(nb.mulScalar(old, keep), nb.mulScalar(flat, (1.0 - keep) * factor));
      };
      running->first = blend(running->first, mean(x), 1.0);
      running->second = blend(running->second, variance,
                              (double)count / (double)std::max<int64_t>(count - 1, 1));
    }
    return nb.add(nb.mul(nb.mul(centered, rstd), perChannel(scale)), perChannel(bias));
  }

  /// The seed of the k-th dropout's stream: the user's seed and k, mixed
  /// (training_models.py's reference mirrors this).
  static uint32_t dropoutSeed(int64_t seed, unsigned k) {
    uint32_t x = static_cast<uint32_t>(seed) + k * 0x9e3779b9u;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    return x ^ (x >> 16);
  }

  /// Dropout in training: each element zeroed with probability `ratio`
  /// (where its nn.random_uniform draw falls below it), the others scaled
  /// by 1 / (1 - ratio), as PyTorch's train(); the mask is a constant to the
  /// gradient, which mul carries.
  Value trainingDropout(NNBuilder &nb, DropoutOp dropout, Value x, Value counter, unsigned k) {
    double ratio = dropout.getRatio()->convertToDouble();
    if (ratio == 0)
      return x;
    auto type = tensorType(x);
    Value u = nb.make<RandomUniformOp>(counter, nb.b.getI64IntegerAttr(dropoutSeed(seed, k)),
                                       nb.b.getDenseI64ArrayAttr(type.getShape()));
    Value dropped = nb.make<LessOp>(u, nb.scalar(u, ratio));
    Value mask = nb.where(dropped, nb.scalar(x, 0.0), nb.scalar(x, 1.0 / (1.0 - ratio)));
    return nb.mul(x, mask);
  }

  /// Clones @main's body into `func` after its data arguments, with
  /// parameter `i` read from argument `paramBase + i`. Returns @main's results.
  /// With `training`, ops switch to their training behaviour (batch norm).
  /// `runningIn` (two per entry of `running`: mean, variance) holds the
  /// running statistics an inference batch norm reads; with `runningOut`, a
  /// training batch norm updates them into it, in the same order. Training
  /// dropouts draw their masks with `step` (f32 0-D; null: 0) as the counter.
  SmallVector<Value> cloneForward(func::FuncOp func, unsigned paramBase, OpBuilder &b,
                                  bool training, ArrayRef<Value> runningIn = {},
                                  SmallVectorImpl<Value> *runningOut = nullptr,
                                  Value step = nullptr) {
    DenseMap<Operation *, unsigned> runningIndex;
    for (auto [i, r] : llvm::enumerate(running))
      runningIndex[r.norm] = i;
    IRMapping map;
    Block &body = func.getBody().front();
    for (unsigned i = 0; i < main.getNumArguments(); ++i)
      map.map(main.getArgument(i), body.getArgument(i));
    for (auto [i, p] : llvm::enumerate(params))
      map.map(p.constant.getResult(), body.getArgument(paramBase + i));
    b.setInsertionPointToEnd(&body);
    Value counter;
    unsigned dropouts = 0;
    for (Operation &op : main.getBody().front().without_terminator()) {
      if (auto dropout = dyn_cast<DropoutOp>(op)) {
        Value x = map.lookup(dropout.getInput());
        if (!training) {
          map.map(dropout.getResult(), x);
          continue;
        }
        NNBuilder nb{b, op.getLoc()};
        if (!counter)
          counter = step ? nb.make<CastOp>(step, TypeAttr::get(b.getI32Type()))
                         : nb.splat(RankedTensorType::get({}, b.getI32Type()), 0);
        map.map(dropout.getResult(), trainingDropout(nb, dropout, x, counter, dropouts++));
        continue;
      }
      if (auto constant = dyn_cast<ConstantOp>(op); constant && map.contains(constant.getResult()))
        continue;
      auto norm = dyn_cast<BatchNormOp>(op);
      auto it = norm ? runningIndex.find(norm) : runningIndex.end();
      if (norm && training) {
        NNBuilder nb{b, op.getLoc()};
        std::pair<Value, Value> stats;
        bool update = runningOut && it != runningIndex.end();
        if (update)
          stats = {runningIn[2 * it->second], runningIn[2 * it->second + 1]};
        map.map(norm.getResult(),
                trainingBatchNorm(nb, norm, map.lookup(norm.getInput()), map.lookup(norm.getScale()),
                                  map.lookup(norm.getBias()), update ? &stats : nullptr));
        if (update) {
          (*runningOut)[2 * it->second] = stats.first;
          (*runningOut)[2 * it->second + 1] = stats.second;
        }
        continue;
      }
      Operation *clone = b.clone(op, map);
      if (norm && !runningIn.empty() && it != runningIndex.end()) {
        clone->setOperand(3, runningIn[2 * it->second]);
        clone->setOperand(4, runningIn[2 * it->second + 1]);
      }
    }
    SmallVector<Value> results;
    for (Value v : main.getBody().front().getTerminator()->getOperands())
      results.push_back(map.lookup(v));
    return results;
  }

  LogicalResult buildInit(OpBuilder &b) {
    SmallVector<Type> types;
    std::vector<std::string> names;
    for (Parameter &p : params) {
      types.push_back(p.constant.getType());
      names.push_back("param:" + p.name);
    }
    for (const StateSlot &s : state) {
      types.push_back(s.type);
      names.push_back("state:" + s.name);
    }
    func::FuncOp init = makeFunction(b, "init", {}, {}, types, names);
    OpBuilder ib = OpBuilder::atBlockEnd(&init.getBody().front());
    NNBuilder nb{ib, main.getLoc()};
    SmallVector<Value> values;
    for (Parameter &p : params)
      values.push_back(ib.clone(*p.constant)->getResult(0));
    for (const StateSlot &s : state)
      values.push_back(s.initial ? ib.clone(*s.initial)->getResult(0) : nb.splat(s.type, 0.0));
    func::ReturnOp::create(ib, main.getLoc(), values);
    b.setInsertionPointAfter(init);
    return success();
  }

  LogicalResult buildEval(OpBuilder &b) {
    SmallVector<Type> inputs(main.getArgumentTypes());
    std::vector<std::string> inputNames = dataNames(), outputNames;
    for (Parameter &p : params) {
      inputs.push_back(p.constant.getType());
      inputNames.push_back("param:" + p.name);
    }
    unsigned runningBase = inputs.size();
    for (const StateSlot &s : runningSlots()) {
      inputs.push_back(s.type);
      inputNames.push_back("state:" + s.name);
    }
    for (unsigned i = 0; i < main.getNumResults(); ++i) {
      auto name = main.getResultAttrOfType<StringAttr>(i, "nn.name");
      outputNames.push_back(name ? name.str() : "output_" + std::to_string(i));
    }
    func::FuncOp eval = makeFunction(b, "eval", inputs, inputNames,
                                     SmallVector<Type>(main.getResultTypes()), outputNames);
    OpBuilder eb(&getContext());
    SmallVector<Value> runningIn;
    for (unsigned i = 0; i < 2 * running.size(); ++i)
      runningIn.push_back(eval.getArgument(runningBase + i));
    SmallVector<Value> results =
        cloneForward(eval, main.getNumArguments(), eb, /*training=*/false, runningIn);
    func::ReturnOp::create(eb, main.getLoc(), results);
    b.setInsertionPointAfter(eval);
    return success();
  }

  /// The mean loss of `output` against `labels`, a 0-D tensor; the model's
  /// own loss is its output.
  Value buildLoss(NNBuilder &nb, Value output, Value labels) {
    if (loss == "model")
      return output;
    if (loss == "mse") {
      Value d = nb.sub(output, labels);
      return nb.reduceAll<ReduceMeanOp>(nb.mul(d, d));
    }
    // -mean over the batch of log_softmax(logits)[n, label[n]], the label
    // picked by a one-hot mask (labels outside [0, C) pick nothing).
    auto logitsType = tensorType(output);
    int64_t n = logitsType.getDimSize(0), c = logitsType.getDimSize(1);
    Value logp = nb.make<LogSoftmaxOp>(output, nb.b.getI64IntegerAttr(1));
    SmallVector<int64_t> classes = llvm::to_vector(llvm::seq<int64_t>(0, c));
    auto classesType = RankedTensorType::get({1, c}, nb.b.getI64Type());
    Value classIds = nb.make<ConstantOp>(cast<ElementsAttr>(DenseElementsAttr::get(classesType, ArrayRef<int64_t>(classes))));
    Value column = nb.make<UnsqueezeOp>(labels, nb.b.getDenseI64ArrayAttr({1}));
    Value mask = nb.make<CastOp>(nb.make<EqualOp>(column, classIds),
                                 TypeAttr::get(logitsType.getElementType()));
    Value picked = nb.reduceAll<ReduceSumOp>(nb.mul(mask, logp));
    return nb.mulScalar(picked, -1.0 / (double)std::max<int64_t>(n, 1));
  }

  /// The reverse sweep over `func`'s body from `loss`: the gradient of each
  /// parameter argument (params start at `paramBase`).
  FailureOr<SmallVector<Value>> buildGradients(func::FuncOp func, unsigned paramBase, Value loss,
                                               OpBuilder &b) {
    Block &body = func.getBody().front();
    DenseSet<Value> active;
    for (unsigned i = 0; i < params.size(); ++i)
      active.insert(body.getArgument(paramBase + i));
    SmallVector<Operation *> forward;
    for (Operation &op : body) {
      if (llvm::any_of(op.getOperands(), [&](Value v) { return active.contains(v); })) {
        for (Value r : op.getResults())
          if (isFloatTensor(r))
            active.insert(r);
        forward.push_back(&op);
      }
    }
    DenseMap<Value, Value> grads;
    NNBuilder nb{b, func.getLoc()};
    grads[loss] = nb.scalar(loss, 1.0);
    for (Operation *op : llvm::reverse(forward)) {
      SmallVector<Value> resultGrads;
      for (Value r : op->getResults())
        resultGrads.push_back(grads.lookup(r));
      if (llvm::all_of(resultGrads, [](Value g) { return !g; }))
        continue;
      auto gradient = dyn_cast<GradientOpInterface>(op);
      if (!gradient)
        return op->emitOpError("has no gradient: training through it is not supported (a "
                               "float initializer reaching it only as a shape or scale "
                               "stays constant with --freeze=NAME)");
      SmallVector<Value> operandGrads;
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(&body);
      if (failed(gradient.buildGradients(b, resultGrads, operandGrads)))
        return op->emitOpError("could not build its gradient");
      for (auto [operand, g] : llvm::zip(op->getOperands(), operandGrads)) {
        if (!g || !active.contains(operand))
          continue;
        Value &sum = grads[operand];
        sum = sum ? nb.add(sum, g) : g;
      }
    }
    SmallVector<Value> result;
    for (unsigned i = 0; i < params.size(); ++i) {
      Value arg = body.getArgument(paramBase + i), g = grads.lookup(arg);
      result.push_back(g ? g : nb.splat(tensorType(arg), 0.0));
    }
    return result;
  }

  /// @loss_and_gradients, or with `update` @train_step.
  LogicalResult buildTraining(OpBuilder &b, bool update) {
    SmallVector<Type> inputs(main.getArgumentTypes());
    std::vector<std::string> inputNames = dataNames(), outputNames{"loss"};
    if (labelsType) {
      inputs.push_back(labelsType);
      inputNames.push_back("labels");
    }
    unsigned paramBase = inputs.size();
    // The loss is reported in f32 whatever the model's precision (the
    // trainer's contract); the gradients keep the parameters' types.
    auto f32 = Float32Type::get(&getContext());
    SmallVector<Type> outputs{RankedTensorType::get({}, f32)};

    for (Parameter &p : params) {
      inputs.push_back(p.constant.getType());
      inputNames.push_back("param:" + p.name);
      outputs.push_back(p.constant.getType());
      outputNames.push_back((update ? "param:" : "grad:") + p.name);
    }
    unsigned stateBase = inputs.size();
    if (update)
      for (const StateSlot &s : state) {
        inputs.push_back(s.type);
        inputNames.push_back("state:" + s.name);
        outputs.push_back(s.type);
        outputNames.push_back("state:" + s.name);
      }
    func::FuncOp func = makeFunction(b, update ? "train_step" : "loss_and_gradients", inputs,
                                     inputNames, outputs, outputNames);
    b.setInsertionPointAfter(func);
    OpBuilder fb(&getContext());
    // train_step updates the running statistics from its state arguments.
    SmallVector<Value> runningIn, runningOut(update ? 2 * running.size() : 0);
    for (unsigned i = 0; i < runningOut.size(); ++i)
      runningIn.push_back(func.getArgument(stateBase + state.size() - runningOut.size() + i));
    Value step = update ? func.getArgument(stateBase) : Value(); // state:step
    SmallVector<Value> forward = cloneForward(func, paramBase, fb, /*training=*/true, runningIn,
                                              update ? &runningOut : nullptr, step);
    Block &body = func.getBody().front();
    fb.setInsertionPointToEnd(&body);
    NNBuilder nb{fb, func.getLoc()};
    Value lossValue = buildLoss(nb, forward[0], labelsType ? body.getArgument(paramBase - 1) : Value());
    if (!lossValue)
      return func.emitError("could not build the loss");
    FailureOr<SmallVector<Value>> grads = buildGradients(func, paramBase, lossValue, fb);
    if (failed(grads))
      return failure();
    Value reported = tensorType(lossValue).getElementType() == f32
                         ? lossValue
                         : nb.make<CastOp>(lossValue, TypeAttr::get(f32));
    SmallVector<Value> results{reported};
    if (!update) {
      results.append(*grads);
    } else {
      SmallVector<Value> paramArgs, stateArgs;
      for (unsigned i = 0; i < params.size(); ++i)
        paramArgs.push_back(body.getArgument(paramBase + i));
      for (unsigned i = 0; i < state.size(); ++i)
        stateArgs.push_back(body.getArgument(stateBase + i));

      SmallVector<Value> newParams, newState;
      applyOptimizer(nb, paramArgs, *grads, stateArgs, newParams, newState);
      results.append(newParams);
      results.append(newState);
      results.append(runningOut);
    }
    if (llvm::any_of(results, [](Value v) { return !v; }))
      return func.emitError("could not build the training step");
    func::ReturnOp::create(fb, func.getLoc(), results);
    return success();
  }

  /// PyTorch's SGD (dampening 0, no Nesterov), Adam and AdamW. `stateArgs`
  /// holds state:step, then each parameter's slots in planState's order.
  void applyOptimizer(NNBuilder &nb, ArrayRef<Value> paramArgs, ArrayRef<Value> grads,
                      ArrayRef<Value> stateArgs, SmallVectorImpl<Value> &newParams,
                      SmallVectorImpl<Value> &newState) {
    Value step = nb.add(stateArgs[0], nb.scalar(stateArgs[0], 1.0));
    newState.push_back(step);
    unsigned slot = 1;
    for (auto [p, gIn] : llvm::zip(paramArgs, grads)) {
      Value g = gIn;
      if (optimizer != "adamw" && weightDecay > 0)
        g = nb.add(g, nb.mulScalar(p, weightDecay));
      if (optimizer == "sgd") {
        Value direction = g;
        if (momentum > 0) {
          // buf = momentum * buf + g (PyTorch starts buf at g: the same from zeros).
          direction = nb.add(nb.mulScalar(stateArgs[slot++], momentum), g);
          newState.push_back(direction);
        }
        newParams.push_back(nb.sub(p, nb.mulScalar(direction, learningRate)));
        continue;
      }
      Value decayed = p;
      if (optimizer == "adamw" && weightDecay > 0)
        decayed = nb.mulScalar(p, 1.0 - learningRate * weightDecay);
      Value m = nb.add(nb.mulScalar(stateArgs[slot++], beta1), nb.mulScalar(g, 1.0 - beta1));
      Value v = nb.add(nb.mulScalar(stateArgs[slot++], beta2), nb.mulScalar(nb.mul(g, g), 1.0 - beta2));
      newState.push_back(m);
      newState.push_back(v);
      // p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps),
      // in the parameter's precision.
      Type element = tensorType(p).getElementType();
      Value t = element == tensorType(step).getElementType()
                    ? step
                    : nb.make<CastOp>(step, TypeAttr::get(element));
      auto correction = [&](double beta) {
        return nb.sub(nb.scalar(t, 1.0), nb.make<PowOp>(nb.scalar(t, beta), t));
      };
      Value stepSize = nb.div(nb.scalar(t, learningRate), correction(beta1));
      Value denom = nb.add(nb.div(nb.make<SqrtOp>(v), nb.make<SqrtOp>(correction(beta2))),
                           nb.scalar(v, epsilon));
      newParams.push_back(nb.sub(decayed, nb.mul(stepSize, nb.div(m, denom))));
    }
  }
};

} // namespace
