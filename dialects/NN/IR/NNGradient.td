//===- NNGradient.td - the gradient interface of nn ops -----*- tablegen -*-===//

#ifndef NNC_DIALECTS_NN_IR_NNGRADIENT_TD
#define NNC_DIALECTS_NN_IR_NNGRADIENT_TD

include "mlir/IR/OpBase.td"

def NN_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::nnc::nn";
  let description = [{
    A differentiable op builds its vector-Jacobian product from nn ops: given
    the gradients of the loss with respect to its results, the gradients with
    respect to its operands. nn-autodiff calls it for each op on the path from
    a parameter to the loss, in reverse program order.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the operands' gradients at `b`'s insertion point. `resultGrads`
        has one entry per result, null for a result the loss does not depend
        on (at least one is set). `operandGrads` gets one entry per operand:
        null where the operand is not differentiable (indices, shapes, masks)
        or its gradient is zero. Fails, with an error at the op, when this
        instance (an attribute combination) has no gradient.
      }], "::llvm::LogicalResult", "buildGradients",
      (ins "::mlir::OpBuilder &":$b, "::mlir::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>
  ];
}

#endif // NNC_DIALECTS_NN_IR_NNGRADIENT_TD
