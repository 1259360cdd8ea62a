//===- Pipelines.cpp - nnc's stage pipelines ------------------------------===//

#include "compiler/Pipelines/Pipelines.h"

#include "compiler/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void nnc::buildGraphPipeline(OpPassManager &pm, const CompileOptions &) {
  OpPassManager &func = pm.nest<func::FuncOp>();
  // Fold exporter shape arithmetic and make types static before anything else looks at shapes.
  func.addPass(nn::createNNRefineShapes());
  // Removes what folding left dead (shape subgraphs, unused constants).
  func.addPass(createCanonicalizerPass());
  // Exporters repeat identical shape subgraphs and constants; keep one of each.
  func.addPass(createCSEPass());
}

void nnc::registerPipelines() {
  PassPipelineRegistration<>("nnc-graph", "nnc's graph stage (nn -> nn)",
                             [](OpPassManager &pm) { buildGraphPipeline(pm, CompileOptions()); });
}
