//===- GraphPipeline.cpp - the graph stage (nn -> nn) ---------------------===//
//
// A library of its own: the importer's fuzz target runs this stage without
// linking the lowering and the code generators.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/Pipelines.h"

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void nnc::buildGraphPipeline(OpPassManager &pm, const CompileOptions &options) {
  // Gradients first: the parameters are still the initializers' constants,
  // before folding and CSE merge or rewrite them.
  if (options.train) {
    nn::NNAutodiffOptions autodiff;
    autodiff.loss = options.train->loss;
    autodiff.optimizer = options.train->optimizer;
    autodiff.learningRate = options.train->learningRate;
    autodiff.momentum = options.train->momentum;
    autodiff.weightDecay = options.train->weightDecay;
    autodiff.beta1 = options.train->beta1;
    autodiff.beta2 = options.train->beta2;
    autodiff.epsilon = options.train->epsilon;
    autodiff.seed = options.train->seed;
    autodiff.freeze.assign(options.train->freeze.begin(), options.train->freeze.end());
    pm.addPass(nn::createNNAutodiff(autodiff));
  }
  OpPassManager &func = pm.nest<func::FuncOp>();
  // Fold exporter shape arithmetic and make types static before anything else looks at shapes.
  func.addPass(nn::createNNRefineShapes());
  // Removes what folding left dead (shape subgraphs, unused constants).
  func.addPass(createCanonicalizerPass());
  // Exporters repeat identical shape subgraphs and constants; keep one of each.
  func.addPass(createCSEPass());
  // Inference batch norms after convolutions cost nothing once folded into
  // their weights; the original constants are then dead.
  func.addPass(nn::createNNFoldBatchNorm());
  // Then the filters, folded, lose the taps that only read padding.
  func.addPass(nn::createNNTrimDeadTaps());
  func.addPass(createCanonicalizerPass());
}
