//===- Passes.td - nn-level passes ---------------------------*- tablegen -*-===//

#ifndef NNC_COMPILER_TRANSFORMS_PASSES_TD
#define NNC_COMPILER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def NNRefineShapes : Pass<"nn-refine-shapes", "mlir::func::FuncOp"> {
  let summary = "make result types as static as the operands allow, folding shape arithmetic";
  let description = [{
    Alternates result-type inference (in program order, so each op sees its
    operands' refined types) with folding, until neither changes anything; then
    updates the function's result types. Shape subgraphs such as
    Shape -> Gather -> Concat -> Reshape fold to constants this way, and the
    reshape's result becomes static.

    Before:
    ```mlir
    %s = nn.shape %x {end = 2 : i64, start = 0 : i64} : (tensor<2x8xf32>) -> tensor<2xi64>
    %y = nn.reshape %x, %s {allowzero = false} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<?x?xf32>
    ```
    After:
    ```mlir
    %y = nn.reshape %x, %cst {allowzero = false} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<2x8xf32>
    ```
    (and a reshape to its own type then folds away under canonicalization).
  }];
  let dependentDialects = ["nnc::nn::NNDialect"];
}

#endif // NNC_COMPILER_TRANSFORMS_PASSES_TD
