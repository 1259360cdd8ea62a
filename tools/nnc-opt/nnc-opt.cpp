//===- nnc-opt.cpp - the lit workhorse: nnc's dialects and passes ---------===//

#include "compiler/Codegen/Passes.h"
#include "compiler/Conversion/Passes.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/NN/IR/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  nnc::registerCompilerDialects(registry);
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  nnc::nn::registerNNTransformsPasses();
  nnc::registerNNCConversionPasses();
  nnc::registerNNCCodegenPasses();
  nnc::registerPipelines();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "nnc optimizer driver\n", registry));
}
