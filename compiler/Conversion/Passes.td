//===- Passes.td - conversion passes of nnc -----------------*- tablegen -*-===//

#ifndef NNC_COMPILER_CONVERSION_PASSES_TD
#define NNC_COMPILER_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertNNToLinalg : Pass<"nnc-convert-nn-to-linalg", "mlir::ModuleOp"> {
  let summary = "lower nn ops to linalg, tensor, arith and math on tensors";
  let description = [{
    One pattern per nn op family. Needs static shapes (run `nn-refine-shapes`
    and pin symbolic dims first); a dynamic dim is reported at its op.
    Unsigned integer tensors become signless, function signatures included.

    ```mlir
    %y = nn.relu %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    becomes a `linalg.generic` whose body is `arith.maximumf %in, %zero`.
  }];
  let options = [
    Option<"maxTapSum", "max-tap-sum", "int64_t", /*default=*/"49",
           "the most taps a depthwise convolution sums in one elementwise op "
           "(one operand per tap); larger filters keep the loop nest">,
    Option<"strings", "strings", "bool", /*default=*/"true",
           "whether string tensors may be compiled (the runtime reads and makes "
           "their text on the CPU only)">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
                           "mlir::math::MathDialect", "mlir::tensor::TensorDialect",
                           "mlir::scf::SCFDialect", "mlir::cf::ControlFlowDialect",
                           "mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect"];
}

#endif // NNC_COMPILER_CONVERSION_PASSES_TD
