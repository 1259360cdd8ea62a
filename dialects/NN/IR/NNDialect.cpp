//===- NNDialect.cpp - the nn dialect -------------------------------------===//
//
// Registers the nn ops (with their gradients) and materializes folded constants as nn.constant.
//
//===----------------------------------------------------------------------===//

#include "dialects/NN/IR/NNOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace nnc::nn;

#include "dialects/NN/IR/NNDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/NN/IR/NNTypes.cpp.inc"

void NNDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/NN/IR/NNTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/NN/IR/NNOps.cpp.inc"
      >();
  attachGradientInterfaces(getContext());
}

Operation *NNDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type,
                                          Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

#define GET_OP_CLASSES
#include "dialects/NN/IR/NNOps.cpp.inc"
