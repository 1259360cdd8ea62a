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

def NNFoldBatchNorm : Pass<"nn-fold-batch-norm", "mlir::func::FuncOp"> {
  let summary = "fold inference batch norms into the convolutions before them";
  let description = [{
    A batch norm whose input is a convolution used only by it, with the
    filter, the convolution's bias (if any) and the statistics all f32
    constants, becomes that convolution with scaled filter and shifted bias:
    g = scale / sqrt(var + epsilon) per output channel, W' = W * g,
    b' = (b - mean) * g + bias, computed in double and rounded once. The norm
    then costs nothing at run time. Other batch norms are left alone.

    ```mlir
    %y = nn.conv %x, %w {...} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
    %z = nn.batch_norm %y, %s, %b, %m, %v {epsilon = 1.0e-05 : f32} : ...
    ```
    becomes `%z = nn.conv %x, %w2, %b2 {...}` with new constants %w2 and %b2.
  }];
  let dependentDialects = ["nnc::nn::NNDialect"];
}

def NNTrimDeadTaps : Pass<"nn-trim-dead-taps", "mlir::func::FuncOp"> {
  let summary = "drop filter taps that only ever read a convolution's padding";
  let description = [{
    For a convolution with static shapes and an f32 constant filter, a tap
    along a spatial dim is dead when, for every output position, it reads a
    padding row (or column): 3x3 filters over the 1x1 maps of a CNN's last
    stage at a small input keep only their center tap. Dead leading and
    trailing taps are cut from the filter at compile time, and the leading
    and trailing pads shrink so that every kept tap reads what it read
    before; the result is the same convolution with fewer multiply-adds and
    fewer weights to read. Convolutions whose trimming would need a negative
    pad are left alone.

    ```mlir
    %y = nn.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, ...}
         : (tensor<1x512x1x1xf32>, tensor<512x512x3x3xf32>) -> tensor<1x512x1x1xf32>
    // becomes
    %y = nn.conv %x, %w_center {pads = array<i64: 0, 0, 0, 0>, ...}
         : (tensor<1x512x1x1xf32>, tensor<512x512x1x1xf32>) -> tensor<1x512x1x1xf32>
    ```
  }];
  let dependentDialects = ["nnc::nn::NNDialect"];
}

def NNAutodiff : Pass<"nn-autodiff", "mlir::ModuleOp"> {
  let summary = "derive the training functions of @main";
  let description = [{
    Replaces `@main` by the four functions of a training module
    (docs/training.md): `@init` returns the parameters' initial values and
    zeroed optimizer state; `@eval` is the forward pass with the parameters
    as arguments; `@loss_and_gradients` appends the loss to the forward pass
    and the reverse sweep after it; `@train_step` also applies the optimizer.

    The parameters are the float initializers (nn.constant ops carrying
    `nn.initializer`) that the loss depends on, minus `freeze` and a loss's
    class weights (`nn.loss_weight`). The reverse
    sweep visits the ops on a path from a parameter to the loss in reverse
    order and asks each for its vector-Jacobian product
    (GradientOpInterface); gradients of a value used several times are summed.
    An op without a gradient is an error at the op. Shapes must be static.
  }];
  let options = [
    Option<"loss", "loss", "std::string", "\"\"",
           "model, mse or cross-entropy (empty: model for a scalar first output, else mse)">,
    Option<"optimizer", "optimizer", "std::string", "\"sgd\"", "sgd, adam or adamw">,
    Option<"learningRate", "lr", "double", "0.01", "learning rate">,
    Option<"momentum", "momentum", "double", "0.0", "SGD momentum">,
    Option<"weightDecay", "weight-decay", "double", "0.0",
           "L2 (sgd, adam) or decoupled (adamw) weight decay">,
    Option<"beta1", "beta1", "double", "0.9", "Adam's first-moment decay">,
    Option<"beta2", "beta2", "double", "0.999", "Adam's second-moment decay">,
    Option<"epsilon", "eps", "double", "1e-8", "Adam's denominator term">,
    Option<"seed", "seed", "int64_t", "0", "the dropout masks' random seed">,
    ListOption<"freeze", "freeze", "std::string", "initializers to keep constant">
  ];
  let dependentDialects = ["nnc::nn::NNDialect", "mlir::func::FuncDialect"];
}

#endif // NNC_COMPILER_TRANSFORMS_PASSES_TD
