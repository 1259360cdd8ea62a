//===- NNOps.td - the nn dialect -----------------------------*- tablegen -*-===//
//
// nn is nnc's graph-level dialect: canonical, opset-free tensor ops. The ONNX
// frontend resolves every opset difference on import, so passes below see one
// form per operation (see docs/NNDialect.md for the rationale).
//
//===----------------------------------------------------------------------===//

#ifndef NNC_DIALECTS_NN_IR_NNOPS_TD
#define NNC_DIALECTS_NN_IR_NNOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def NN_Dialect : Dialect {
  let name = "nn";
  let cppNamespace = "::nnc::nn";
  let summary = "canonical, opset-free neural network tensor ops";
  let description = [{
    Every op works on ranked tensors. Static shapes are first-class; a dynamic
    dimension (`?`) stays representable, and `nn-refine-shapes` makes result
    types as static as the operands allow. Inputs that ONNX passes as tensors
    but that describe a shape (reshape's target shape, slice bounds, expand's
    shape, ...) stay operands, so shape subgraphs can fold into them.
  }];
  let hasConstantMaterializer = 1;
  let useDefaultTypePrinterParser = 1;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def NN_StringType : TypeDef<NN_Dialect, "String"> {
  let mnemonic = "string";
  let summary = "a UTF-8 string, the element type of ONNX's string tensors";
  let description = [{
    Only data movement, `nn.cast` to and from numbers and
    `nn.string_normalizer` take string tensors. Lowered, an element is the
    address of a NUL-terminated string (abi.h's NNC_DTYPE_STRING), held as
    i64; the text itself is the caller's or the runtime's, never copied by
    compiled code.
  }];
}

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

// Result-type inference with a compatibility rule that accepts a result more
// static than the inferred one (refinement), shared by every nn op.
def NN_InferType : TraitList<[
  DeclareOpInterfaceMethods<InferTypeOpInterface>,
  NativeOpTrait<"InferTypeOpAdaptor", [], [{
    static ::llvm::LogicalResult inferReturnTypes(::mlir::MLIRContext *context,
        std::optional<::mlir::Location> location, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferredReturnTypes);
    static bool isCompatibleReturnTypes(::mlir::TypeRange l, ::mlir::TypeRange r) {
      return ::nnc::nn::areCompatibleResultTypes(l, r);
    }
  }], [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *context,
        std::optional<::mlir::Location> location, ::mlir::ValueRange operands,
        ::mlir::DictionaryAttr attributes, ::mlir::OpaqueProperties properties,
        ::mlir::RegionRange regions,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferredReturnTypes) {
      $cppClass::Adaptor adaptor(operands, attributes, properties, regions);
      if (::mlir::failed($cppClass::inferReturnTypes(context, location, adaptor,
                                                     inferredReturnTypes)))
        return ::mlir::failure();
      return ::nnc::nn::checkInferredShapes(location, getOperationName(),
                                            inferredReturnTypes);
    }
  }]>
]>;

// Operand and result types are tensors that can exist: no negative dim, a
// byte size within int64. Checked before inference, which assumes it.
def NN_ValidShapes : NativeOpTrait<"ValidShapes"> {
  let cppNamespace = "::nnc::nn";
}

class NN_Op<string mnemonic, list<Trait> traits = []>
    : Op<NN_Dialect, mnemonic,
         !listconcat(traits, [NoMemoryEffect, NN_ValidShapes, NN_InferType])> {
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def NN_FloatTensor : RankedTensorOf<[AnyFloat]>;
def NN_IntTensor : RankedTensorOf<[AnyInteger]>;
def NN_BoolTensor : RankedTensorOf<[I1]>;
def NN_NumericTensor : RankedTensorOf<[AnyFloat, AnyInteger]>;
def NN_Tensor : RankedTensorOf<[AnyType]>;

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// `folder`: small constants fold (shape arithmetic such as the negated axes
// of an expanded LayerNormalization, or a size rounded up in floats).
class NN_UnaryOp<string mnemonic, string what, Type type = NN_FloatTensor,
                 list<Trait> traits = [], bit folder = 0>
    : NN_Op<mnemonic, traits> {
  let summary = what;
  let description = "Applies `" # what # "` to each element. Example:\n\n"
    # "```mlir\n%y = nn." # mnemonic # " %x : (tensor<4xf32>) -> tensor<4xf32>\n```";
  let arguments = (ins type:$input);
  let results = (outs type:$result);
  let hasFolder = folder;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        std::optional<::mlir::Location>, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      types.push_back(adaptor.getInput().getType());
      return ::mlir::success();
    }
  }] # !if(folder, [{
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      return ::nnc::nn::foldUnary(getOperation(), adaptor.getInput());
    }
  }], "");
}

def NN_SqrtOp : NN_UnaryOp<"sqrt", "square root">;
def NN_ExpOp : NN_UnaryOp<"exp", "natural exponential">;
def NN_LogOp : NN_UnaryOp<"log", "natural logarithm">;
def NN_ErfOp : NN_UnaryOp<"erf", "Gauss error function">;
def NN_SigmoidOp : NN_UnaryOp<"sigmoid", "logistic sigmoid 1 / (1 + exp(-x))">;
def NN_TanhOp : NN_UnaryOp<"tanh", "hyperbolic tangent">;
def NN_SoftplusOp : NN_UnaryOp<"softplus", "softplus log(1 + exp(x))">;
def NN_HardSwishOp : NN_UnaryOp<"hard_swish", "hard swish x * max(0, min(1, x / 6 + 1 / 2))">;
def NN_FloorOp : NN_UnaryOp<"floor", "rounding toward negative infinity", NN_FloatTensor, [], 1>;
def NN_CeilOp : NN_UnaryOp<"ceil", "rounding toward positive infinity", NN_FloatTensor, [], 1>;
def NN_RoundOp : NN_UnaryOp<"round", "rounding to nearest, ties to even", NN_FloatTensor, [], 1>;
def NN_ReciprocalOp : NN_UnaryOp<"reciprocal", "reciprocal 1 / x", NN_FloatTensor, [], 1>;
def NN_SinOp : NN_UnaryOp<"sin", "sine">;
def NN_CosOp : NN_UnaryOp<"cos", "cosine">;
def NN_TanOp : NN_UnaryOp<"tan", "tangent">;
def NN_AsinOp : NN_UnaryOp<"asin", "arcsine">;
def NN_AcosOp : NN_UnaryOp<"acos", "arccosine">;
def NN_AtanOp : NN_UnaryOp<"atan", "arctangent">;
def NN_SinhOp : NN_UnaryOp<"sinh", "hyperbolic sine">;
def NN_CoshOp : NN_UnaryOp<"cosh", "hyperbolic cosine">;
def NN_AsinhOp : NN_UnaryOp<"asinh", "inverse hyperbolic sine">;
def NN_AcoshOp : NN_UnaryOp<"acosh", "inverse hyperbolic cosine">;
def NN_AtanhOp : NN_UnaryOp<"atanh", "inverse hyperbolic tangent">;
def NN_SoftsignOp : NN_UnaryOp<"softsign", "softsign x / (1 + |x|)">;
def NN_NegOp : NN_UnaryOp<"neg", "negation", NN_NumericTensor, [], 1>;
def NN_AbsOp : NN_UnaryOp<"abs", "absolute value", NN_NumericTensor, [], 1>;
def NN_SignOp : NN_UnaryOp<"sign", "sign (-1, 0 or 1)", NN_NumericTensor, [], 1>;
def NN_ReluOp : NN_UnaryOp<"relu", "rectified linear unit max(x, 0)", NN_NumericTensor, [], 1>;
def NN_NotOp : NN_UnaryOp<"not", "logical negation", NN_BoolTensor, [], 1>;

def NN_DropoutOp : NN_UnaryOp<"dropout", "dropout"> {
  let description = [{
    ONNX's Dropout: the identity at inference (the graph stage removes it).
    Training (nn-autodiff) zeroes each element with probability `ratio`
    and scales the rest by 1 / (1 - ratio), from nn.random_uniform. `ratio`
    is absent when the model computes it at run time.

    ```mlir
    %y = nn.dropout %x {ratio = 1.000000e-01 : f64} : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, OptionalAttr<F64Attr>:$ratio);
  let hasCanonicalizer = 1;
}

def NN_RandomUniformOp : NN_Op<"random_uniform"> {
  let summary = "counter-based uniform random numbers in [0, 1)";
  let description = [{
    An f32 tensor of `shape` whose element i (row-major) is a function of
    `seed`, the 0-D i32 `counter` and i alone, so any device and any
    schedule give the same numbers, and a new counter a new draw. With
    mix(x) the 32-bit hash x ^= x >> 16; x *= 0x7feb352d; x ^= x >> 15;
    x *= 0x846ca68b; x ^= x >> 16 (all mod 2^32):

        key = mix(seed ^ mix(counter * 0x9e3779b9))
        element i = (mix(i * 0x85ebca6b + key) >> 8) / 2^24

    ```mlir
    %u = nn.random_uniform %step {seed = 7 : i64, shape = array<i64: 2, 3>}
         : (tensor<i32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins TensorOf<[I32]>:$counter, I64Attr:$seed, DenseI64ArrayAttr:$shape);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *context,
        std::optional<::mlir::Location>, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      types.push_back(::mlir::RankedTensorType::get(adaptor.getShape(),
                                                    ::mlir::Float32Type::get(context)));
      return ::mlir::success();
    }
  }];
}

class NN_UnaryAttrOp<string mnemonic, string what, dag attrs>
    : NN_UnaryOp<mnemonic, what> {
  let arguments = !con((ins NN_FloatTensor:$input), attrs);
}

def NN_LeakyReluOp : NN_UnaryAttrOp<"leaky_relu",
    "leaky rectified linear unit: x < 0 ? alpha * x : x", (ins F32Attr:$alpha)>;
def NN_EluOp : NN_UnaryAttrOp<"elu",
    "exponential linear unit: x < 0 ? alpha * (exp(x) - 1) : x", (ins F32Attr:$alpha)>;
def NN_SeluOp : NN_UnaryAttrOp<"selu",
    "scaled exponential linear unit: gamma * (x < 0 ? alpha * (exp(x) - 1) : x)",
    (ins F32Attr:$alpha, F32Attr:$gamma)>;
def NN_HardSigmoidOp : NN_UnaryAttrOp<"hard_sigmoid",
    "hard sigmoid max(0, min(1, alpha * x + beta))", (ins F32Attr:$alpha, F32Attr:$beta)>;

def NN_CastOp : NN_Op<"cast"> {
  let summary = "element type conversion";
  let description = [{
    Converts each element to the element type `to`; float to integer truncates
    toward zero, any nonzero value becomes `true` in `i1`.

    ```mlir
    %y = nn.cast %x {to = i64} : (tensor<4xf32>) -> tensor<4xi64>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, TypeAttr:$to);
  let results = (outs NN_Tensor:$result);
  let hasFolder = 1;
}

// Binary elementwise ops broadcast their operands the NumPy way.
class NN_BinaryOp<string mnemonic, string what, Type type = NN_NumericTensor,
                  Type resultType = type, list<Trait> traits = []>
    : NN_Op<mnemonic, traits> {
  let summary = what;
  let description = "Computes `" # what # "` elementwise with NumPy broadcasting. "
    # "Example:\n\n```mlir\n%z = nn." # mnemonic
    # " %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3x"
    # !if(!eq(resultType, NN_BoolTensor), "i1", "f32") # ">\n```";
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs resultType:$result);
  let hasFolder = 1;
  code resultElement = !if(!eq(resultType, NN_BoolTensor),
    "::mlir::IntegerType::get(context, 1)",
    "::mlir::getElementTypeOrSelf(adaptor.getLhs().getType())");
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *context,
        std::optional<::mlir::Location> location, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      if (::mlir::getElementTypeOrSelf(adaptor.getLhs().getType()) !=
          ::mlir::getElementTypeOrSelf(adaptor.getRhs().getType()))
        return ::mlir::emitOptionalError(location, "'", getOperationName(),
                                         "' op expected operands of one element type");
      return ::nnc::nn::inferBroadcast(location, getOperationName(),
          adaptor.getOperands(), }] # resultElement # [{, types);
    }
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      return ::nnc::nn::foldBinary(getOperation(), adaptor.getOperands());
    }
  }];
}

def NN_AddOp : NN_BinaryOp<"add", "x + y", NN_NumericTensor, NN_NumericTensor, [Commutative]>;
def NN_SubOp : NN_BinaryOp<"sub", "x - y">;
def NN_MulOp : NN_BinaryOp<"mul", "x * y", NN_NumericTensor, NN_NumericTensor, [Commutative]>;
def NN_DivOp : NN_BinaryOp<"div", "x / y (integers truncate toward zero)">;
def NN_MaxOp : NN_BinaryOp<"max", "max(x, y)", NN_NumericTensor, NN_NumericTensor, [Commutative]>;
def NN_MinOp : NN_BinaryOp<"min", "min(x, y)", NN_NumericTensor, NN_NumericTensor, [Commutative]>;
def NN_PowOp : NN_BinaryOp<"pow", "x raised to the power y">;
def NN_ShiftLeftOp : NN_BinaryOp<"shift_left", "x << y (0 when y >= the bit width)", NN_IntTensor>;
def NN_ShiftRightOp : NN_BinaryOp<"shift_right",
    "x >> y, logical (0 when y >= the bit width)", NN_IntTensor>;
def NN_AndOp : NN_BinaryOp<"and", "logical and", NN_BoolTensor, NN_BoolTensor, [Commutative]>;
def NN_OrOp : NN_BinaryOp<"or", "logical or", NN_BoolTensor, NN_BoolTensor, [Commutative]>;
def NN_XorOp : NN_BinaryOp<"xor", "logical exclusive or", NN_BoolTensor, NN_BoolTensor, [Commutative]>;
def NN_EqualOp : NN_BinaryOp<"equal", "x == y", NN_Tensor, NN_BoolTensor, [Commutative]>;
def NN_LessOp : NN_BinaryOp<"less", "x < y", NN_NumericTensor, NN_BoolTensor>;
def NN_LessEqualOp : NN_BinaryOp<"less_equal", "x <= y", NN_NumericTensor, NN_BoolTensor>;
def NN_GreaterOp : NN_BinaryOp<"greater", "x > y", NN_NumericTensor, NN_BoolTensor>;
def NN_GreaterEqualOp : NN_BinaryOp<"greater_equal", "x >= y", NN_NumericTensor, NN_BoolTensor>;

def NN_ModOp : NN_Op<"mod"> {
  let summary = "remainder";
  let description = [{
    Remainder of x / y with broadcasting. With `fmod = false` (integers only)
    the sign follows the divisor, like Python's `%`; with `fmod = true` it
    follows the dividend, like C's `fmod`.

    ```mlir
    %z = nn.mod %x, %y {fmod = false} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    ```
  }];
  let arguments = (ins NN_NumericTensor:$lhs, NN_NumericTensor:$rhs, BoolAttr:$fmod);
  let results = (outs NN_NumericTensor:$result);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def NN_WhereOp : NN_Op<"where"> {
  let summary = "elementwise select";
  let description = [{
    Picks `x` where `condition` is true and `y` elsewhere, broadcasting all three.

    ```mlir
    %z = nn.where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins NN_BoolTensor:$condition, NN_Tensor:$x, NN_Tensor:$y);
  let results = (outs NN_Tensor:$result);
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra, convolution, pooling, normalization
//===----------------------------------------------------------------------===//

def NN_MatMulOp : NN_Op<"matmul"> {
  let summary = "matrix product with NumPy semantics";
  let description = [{
    Batched matrix product: 1-D operands are promoted (and the promoted
    dimension dropped from the result), batch dimensions broadcast.

    ```mlir
    %c = nn.matmul %a, %b : (tensor<8x16x32xf32>, tensor<32x64xf32>) -> tensor<8x16x64xf32>
    ```
  }];
  let arguments = (ins NN_NumericTensor:$lhs, NN_NumericTensor:$rhs);
  let results = (outs NN_NumericTensor:$result);
}

def NN_ConvOp : NN_Op<"conv"> {
  let summary = "N-d grouped convolution, channels first";
  let description = [{
    `input` is N x C x D1 x ... x Dn, `filter` is M x C/group x K1 x ... x Kn,
    the optional `bias` has M elements. `pads` holds the n leading pads then
    the n trailing ones; ONNX's auto_pad is resolved to explicit pads on import.

    ```mlir
    %y = nn.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64,
           pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
         : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$filter,
                   Optional<NN_FloatTensor>:$bias, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations, DenseI64ArrayAttr:$pads, I64Attr:$group);
  let results = (outs NN_FloatTensor:$result);
}

def NN_ConvTransposeOp : NN_Op<"conv_transpose"> {
  let summary = "N-d grouped transposed convolution, channels first";
  let description = [{
    The gradient of `nn.conv` with respect to its input. `filter` is
    C x M/group x K1 x ... x Kn. Output size per spatial dim:
    stride * (in - 1) + output_padding + (K - 1) * dilation + 1 - pad_begin - pad_end.
    ONNX's output_shape and auto_pad are resolved to explicit pads on import.

    ```mlir
    %y = nn.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64,
           output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>,
           strides = array<i64: 2, 2>}
         : (tensor<1x8x4x4xf32>, tensor<8x4x2x2xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$filter,
                   Optional<NN_FloatTensor>:$bias, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$dilations, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$output_padding, I64Attr:$group);
  let results = (outs NN_FloatTensor:$result);
}

class NN_PoolOp<string mnemonic, string what, dag extra, Type type = NN_NumericTensor>
    : NN_Op<mnemonic> {
  let summary = what;
  let description = "Sliding-window " # what # " over the spatial dimensions of an "
    # "N x C x D1 x ... x Dn input; `pads` holds the leading then the trailing pads, "
    # "`ceil_mode` rounds the output size up.\n\n```mlir\n%y = nn." # mnemonic
    # " %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel = array<i64: 2, 2>, "
    # "pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}\n"
    # "     : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>\n```";
  let arguments = !con((ins type:$input, DenseI64ArrayAttr:$kernel,
                        DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                        DenseI64ArrayAttr:$pads, BoolAttr:$ceil_mode), extra);
  let results = (outs type:$result);
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        std::optional<::mlir::Location> location, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::nnc::nn::inferPool(location, getOperationName(),
          adaptor.getInput().getType(), adaptor.getKernel(), adaptor.getStrides(),
          adaptor.getDilations(), adaptor.getPads(), adaptor.getCeilMode(), types);
    }
  }];
}

def NN_MaxPoolOp : NN_PoolOp<"max_pool", "max pooling", (ins)>;
// Float only, as ONNX's AveragePool: an integer mean would need a rounding rule.
def NN_AvgPoolOp : NN_PoolOp<"avg_pool", "average pooling",
                             (ins BoolAttr:$count_include_pad), NN_FloatTensor>;

def NN_BatchNormOp : NN_Op<"batch_norm"> {
  let summary = "batch normalization with running statistics (inference form)";
  let description = [{
    y = scale * (x - mean) / sqrt(var + epsilon) + bias, per channel (dim 1).
    `momentum` (ONNX's: the running statistics' weight when training updates
    them) matters only to training.

    ```mlir
    %y = nn.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f32}
         : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
            tensor<4xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$scale, NN_FloatTensor:$bias,
                   NN_FloatTensor:$mean, NN_FloatTensor:$variance, F32Attr:$epsilon,
                   DefaultValuedAttr<F32Attr, "0.9f">:$momentum);
  let results = (outs NN_FloatTensor:$result);
}

def NN_InstanceNormOp : NN_Op<"instance_norm"> {
  let summary = "instance normalization";
  let description = [{
    Normalizes each (batch, channel) slice over its spatial dims, then applies
    the per-channel `scale` and `bias`.

    ```mlir
    %y = nn.instance_norm %x, %s, %b {epsilon = 1.0e-05 : f32}
         : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$scale,
                   NN_FloatTensor:$bias, F32Attr:$epsilon);
  let results = (outs NN_FloatTensor:$result);
}

def NN_LayerNormOp : NN_Op<"layer_norm"> {
  let summary = "layer normalization";
  let description = [{
    Normalizes over the dims from `axis` to the last, then applies `scale` and
    the optional `bias`, both broadcast to those dims.

    ```mlir
    %y = nn.layer_norm %x, %s, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32}
         : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$scale,
                   Optional<NN_FloatTensor>:$bias, I64Attr:$axis, F32Attr:$epsilon);
  let results = (outs NN_FloatTensor:$result);
}

class NN_AxisOp<string mnemonic, string what> : NN_Op<mnemonic> {
  let summary = what;
  let description = "Computes " # what # " along dimension `axis`.\n\n```mlir\n%y = nn."
    # mnemonic # " %x {axis = 1 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>\n```";
  let arguments = (ins NN_FloatTensor:$input, I64Attr:$axis);
  let results = (outs NN_FloatTensor:$result);
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        std::optional<::mlir::Location> location, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      if (::mlir::failed(::nnc::nn::checkAxis(location, getOperationName(),
              adaptor.getInput().getType(), adaptor.getAxis())))
        return ::mlir::failure();
      types.push_back(adaptor.getInput().getType());
      return ::mlir::success();
    }
  }];
}

def NN_SoftmaxOp : NN_AxisOp<"softmax", "softmax exp(x) / sum(exp(x))">;
def NN_LogSoftmaxOp : NN_AxisOp<"log_softmax", "log of softmax">;

def NN_CumSumOp : NN_Op<"cumsum"> {
  let summary = "cumulative sum";
  let description = [{
    Running sum along `axis`; `exclusive` leaves out the current element,
    `reverse` sums from the end.

    ```mlir
    %y = nn.cumsum %x {axis = 0 : i64, exclusive = false, reverse = false}
         : (tensor<5xf32>) -> tensor<5xf32>
    ```
  }];
  let arguments = (ins NN_NumericTensor:$input, I64Attr:$axis, BoolAttr:$exclusive,
                   BoolAttr:$reverse);
  let results = (outs NN_NumericTensor:$result);
}

def NN_TopKOp : NN_Op<"top_k"> {
  let summary = "the k largest (or smallest) elements along `axis`, sorted";
  let description = [{
    `k` is a one-element i64 tensor, at most the size of `axis`; it may be
    known only at run time (the result's dim along `axis` is then dynamic).
    The values come out in order, largest first (smallest first unless
    `largest`), equal values by increasing index; NaN counts as larger than
    any number. `indices` are the elements' i64 positions along `axis`.

    ```mlir
    %v, %i = nn.top_k %x, %k {axis = 1 : i64, largest = true}
             : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
    ```
  }];
  let arguments = (ins NN_NumericTensor:$input, RankedTensorOf<[I64]>:$k, I64Attr:$axis,
                   BoolAttr:$largest);
  let results = (outs NN_NumericTensor:$values, RankedTensorOf<[I64]>:$indices);
}

def NN_TriluOp : NN_Op<"trilu"> {
  let summary = "upper or lower triangle of the last two dims";
  let description = [{
    Keeps the elements on and above (`upper`) or on and below the `k`-th
    diagonal of each matrix in the last two dims and zeroes the rest. `k` is a
    0-D i64 tensor: it moves no dims, so it may be known only at run time.

    ```mlir
    %y = nn.trilu %x, %k {upper = true} : (tensor<4x4xf32>, tensor<i64>) -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, RankedTensorOf<[I64]>:$k, BoolAttr:$upper);
  let results = (outs NN_Tensor:$result);
}

def NN_EinsumOp : NN_Op<"einsum"> {
  let summary = "Einstein summation";
  let description = [{
    Explicit-output Einstein summation (the importer adds the implicit output).
    Each operand's subscripts name its dims; repeated letters are contracted.

    ```mlir
    %c = nn.einsum %a, %b {equation = "bij,bjk->bik"}
         : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
    ```
  }];
  let arguments = (ins Variadic<NN_NumericTensor>:$inputs, StrAttr:$equation);
  let results = (outs NN_NumericTensor:$result);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class NN_ReduceOp<string mnemonic, string what> : NN_Op<mnemonic> {
  let summary = what # " over `axes`";
  let description = "Reduces the sorted, non-negative `axes` (nonempty unless the input is "
    # "0-D) with " # what
    # "; `keepdims` keeps them as size 1.\n\n```mlir\n%y = nn." # mnemonic
    # " %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>\n```";
  let arguments = (ins NN_NumericTensor:$input, DenseI64ArrayAttr:$axes, BoolAttr:$keepdims);
  let results = (outs NN_NumericTensor:$result);
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        std::optional<::mlir::Location> location, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::nnc::nn::inferReduce(location, getOperationName(),
          adaptor.getInput().getType(), adaptor.getAxes(), adaptor.getKeepdims(), types);
    }
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      return ::nnc::nn::foldReduce(getOperation(), adaptor.getInput(), getAxes());
    }
  }];
  let hasFolder = 1;
}

def NN_ReduceSumOp : NN_ReduceOp<"reduce_sum", "sum">;
def NN_ReduceMeanOp : NN_ReduceOp<"reduce_mean", "mean">;
def NN_ReduceMaxOp : NN_ReduceOp<"reduce_max", "maximum">;
def NN_ReduceMinOp : NN_ReduceOp<"reduce_min", "minimum">;
def NN_ReduceProdOp : NN_ReduceOp<"reduce_prod", "product">;
def NN_ReduceL1Op : NN_ReduceOp<"reduce_l1", "sum of absolute values">;
def NN_ReduceL2Op : NN_ReduceOp<"reduce_l2", "Euclidean norm">;
def NN_ReduceSumSquareOp : NN_ReduceOp<"reduce_sum_square", "sum of squares">;
def NN_ReduceLogSumOp : NN_ReduceOp<"reduce_log_sum", "log of the sum">;
def NN_ReduceLogSumExpOp : NN_ReduceOp<"reduce_log_sum_exp", "log of the sum of exponentials">;

class NN_ArgOp<string mnemonic, string what> : NN_Op<mnemonic> {
  let summary = "index of the " # what # " along `axis`";
  let description = "Returns i64 indices of the " # what # " along `axis`; ties pick the "
    # "first index unless `select_last_index`.\n\n```mlir\n%i = nn." # mnemonic
    # " %x {axis = 1 : i64, keepdims = false, select_last_index = false}"
    # " : (tensor<2x8xf32>) -> tensor<2xi64>\n```";
  let arguments = (ins NN_NumericTensor:$input, I64Attr:$axis, BoolAttr:$keepdims,
                   BoolAttr:$select_last_index);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *context,
        std::optional<::mlir::Location> location, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      if (::mlir::failed(::nnc::nn::checkAxis(location, getOperationName(),
              adaptor.getInput().getType(), adaptor.getAxis())))
        return ::mlir::failure();
      int64_t axis = adaptor.getAxis();
      if (::mlir::failed(::nnc::nn::inferReduce(location, getOperationName(),
              adaptor.getInput().getType(), ::llvm::ArrayRef<int64_t>(axis),
              adaptor.getKeepdims(), types)))
        return ::mlir::failure();
      types[0] = ::llvm::cast<::mlir::RankedTensorType>(types[0]).clone(
          ::mlir::IntegerType::get(context, 64));
      return ::mlir::success();
    }
  }];
}

def NN_ArgMaxOp : NN_ArgOp<"argmax", "maximum">;
def NN_ArgMinOp : NN_ArgOp<"argmin", "minimum">;

//===----------------------------------------------------------------------===//
// Data movement and shapes
//===----------------------------------------------------------------------===//

def NN_ConstantOp : NN_Op<"constant", [ConstantLike]> {
  let summary = "constant tensor";
  let description = [{
    A tensor known at compile time. Weights are dense resources, so the IR
    refers to their bytes instead of copying them.

    ```mlir
    %c = nn.constant {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs NN_Tensor:$result);
  let hasFolder = 1;
  let assemblyFormat = "attr-dict `:` functional-type(operands, results)";
}

def NN_ShapeOp : NN_Op<"shape"> {
  let summary = "the dims of a tensor as a 1-D i64 tensor";
  let description = [{
    Returns dims `start` to `end` (exclusive, already clamped) of `input`'s shape.
    Folds to a constant when those dims are static.

    ```mlir
    %s = nn.shape %x {end = 2 : i64, start = 0 : i64} : (tensor<?x4xf32>) -> tensor<2xi64>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, I64Attr:$start, I64Attr:$end);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let hasFolder = 1;
}

def NN_SizeOp : NN_Op<"size"> {
  let summary = "the number of elements as a 0-D i64 tensor";
  let description = [{
    ```mlir
    %n = nn.size %x : (tensor<2x4xf32>) -> tensor<i64>
    ```
  }];
  let arguments = (ins NN_Tensor:$input);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let hasFolder = 1;
}

def NN_CheckOp : NN_Op<"check"> {
  let summary = "a value, once a condition known only at run time holds";
  let description = [{
    `input` unchanged when the 0-D `holds` is true; otherwise the run is
    refused with `message`, naming the node. Ops whose parameters are
    run-time inputs (axes, sizes) check them this way: the check joins the
    function's dim checks, evaluated before the run.

    ```mlir
    %m = nn.check %member, %ok {message = "axes must be distinct"}
         : (tensor<3xi1>, tensor<i1>) -> tensor<3xi1>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, NN_BoolTensor:$holds, StrAttr:$message);
  let results = (outs NN_Tensor:$result);
  let hasFolder = 1;
}

def NN_NonZeroOp : NN_Op<"non_zero"> {
  let summary = "the indices of the nonzero elements";
  let description = [{
    A [rank, n] i64 tensor: column j holds the index of the j-th nonzero
    element (row-major order); n, the count, is known only after the run
    (docs/dynamic-shapes.md, data-dependent outputs), at most the input's
    element count.

    ```mlir
    %i = nn.non_zero %x : (tensor<2x3xf32>) -> tensor<2x?xi64>
    ```
  }];
  let arguments = (ins NN_Tensor:$input);
  let results = (outs RankedTensorOf<[I64]>:$result);
}

def NN_StringNormalizerOp : NN_Op<"string_normalizer"> {
  let summary = "strings without the stopwords, case changed";
  let description = [{
    The strings of a [C] or [1, C] input that are not stopwords (compared as
    they are, or lower-cased when `case_sensitive` is false), in order, then
    lower-cased (`case_change` 1), upper-cased (2) or left (0), with Unicode's
    simple case mappings. When no string is left the result is one empty
    string. Its length is known only after the run (a data-dependent dim, at
    most max(C, 1)).

    ```mlir
    %y = nn.string_normalizer %x {case_change = 2 : i64, case_sensitive = true,
           stopwords = ["monday"]} : (tensor<4x!nn.string>) -> tensor<?x!nn.string>
    ```
  }];
  let arguments = (ins RankedTensorOf<[NN_StringType]>:$input, I64Attr:$case_change,
                   BoolAttr:$case_sensitive, StrArrayAttr:$stopwords);
  let results = (outs RankedTensorOf<[NN_StringType]>:$result);
}

def NN_CompressOp : NN_Op<"compress"> {
  let summary = "the slices along `axis` where a condition holds";
  let description = [{
    The slices `input[..., i, ...]` along `axis` whose `condition[i]` is true,
    in order; a condition shorter than the dim leaves out the rest. The
    result's dim along `axis` is known only after the run. A static input is
    required.

    ```mlir
    %y = nn.compress %x, %c {axis = 0 : i64} : (tensor<3x2xf32>, tensor<3xi1>) -> tensor<?x2xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, NN_BoolTensor:$condition, I64Attr:$axis);
  let results = (outs NN_Tensor:$result);
}

def NN_NonMaxSuppressionOp : NN_Op<"non_max_suppression"> {
  let summary = "greedy selection of boxes by score, dropping overlaps";
  let description = [{
    ONNX's NonMaxSuppression: for each batch and class, boxes scoring above
    `score_threshold` in order of score (the lower index first among equal
    scores), each kept unless its IoU with one kept before exceeds
    `iou_threshold`, at most `max_output` per class. The result rows are
    (batch, class, box), by batch, class and order of selection; how many
    there are is known only after the run. `boxes` is [B, N, 4] (corners
    y1, x1, y2, x2 in any order, or x, y centre, width, height with
    `center_point_box`), `scores` [B, C, N]; the thresholds and `max_output`
    are one-element tensors. A NaN `score_threshold` (ONNX's absent one)
    keeps every box.

    ```mlir
    %s = nn.non_max_suppression %boxes, %scores, %max, %iou, %score {center_point_box = false}
         : (tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<?x3xi64>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$boxes, NN_FloatTensor:$scores, RankedTensorOf<[I64]>:$max_output,
                   NN_FloatTensor:$iou_threshold, NN_FloatTensor:$score_threshold,
                   BoolAttr:$center_point_box);
  let results = (outs RankedTensorOf<[I64]>:$result);
}

def NN_UniqueOp : NN_Op<"unique"> {
  let summary = "the distinct slices along `axis`, and where they occur";
  let description = [{
    ONNX's Unique along `axis` (the caller flattens for Unique without one):
    `values` holds each distinct slice once, in increasing lexicographic order
    if `sorted`, else in order of first occurrence; `indices` the position of
    each one's first occurrence, `inverse` for each slice of the input the
    position of its value in `values`, `counts` how often each occurs. How
    many distinct slices there are is known only after the run. A static
    input is required.

    ```mlir
    %y, %i, %v, %c = nn.unique %x {axis = 0 : i64, sorted = true}
        : (tensor<6xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>)
    ```
  }];
  let arguments = (ins NN_Tensor:$input, I64Attr:$axis, BoolAttr:$sorted);
  let results = (outs NN_Tensor:$values, RankedTensorOf<[I64]>:$indices,
                 RankedTensorOf<[I64]>:$inverse, RankedTensorOf<[I64]>:$counts);
}

def NN_BoundedExtentOp : Op<NN_Dialect, "bounded_extent", [Pure]> {
  let summary = "a size only the run computes, and its bound";
  let description = [{
    `extent`, computed by the run from data (a NonZero's count), which is at
    most `bound`, computed from dims alone. Lowerings of data-dependent
    shapes make it; the shape function and the memory plan take the bound
    (buffers are sized for it before the run), the run the extent.

    ```mlir
    %n = nn.bounded_extent %count, %c6
    ```
  }];
  let arguments = (ins Index:$extent, Index:$bound);
  let results = (outs Index:$result);
  let assemblyFormat = "$extent `,` $bound attr-dict";
}

def NN_ConstantOfShapeOp : NN_Op<"constant_of_shape"> {
  let summary = "a tensor of a runtime shape filled with one value";
  let description = [{
    `shape` is a 1-D i64 tensor; `value` is a one-element tensor giving the
    fill value and the element type.

    ```mlir
    %z = nn.constant_of_shape %s {value = dense<0.0> : tensor<1xf32>}
         : (tensor<2xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I64]>:$shape, ElementsAttr:$value);
  let results = (outs NN_Tensor:$result);
  let hasFolder = 1;
}

def NN_RangeOp : NN_Op<"range"> {
  let summary = "evenly spaced values in [start, limit)";
  let description = [{
    The three operands are 0-D tensors of one element type; the result has
    max(ceil((limit - start) / delta), 0) elements.

    ```mlir
    %r = nn.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    ```
  }];
  let arguments = (ins NN_NumericTensor:$start, NN_NumericTensor:$limit, NN_NumericTensor:$delta);
  let results = (outs NN_NumericTensor:$result);
  let hasFolder = 1;
}

def NN_ReshapeOp : NN_Op<"reshape"> {
  let summary = "reshape to a runtime shape";
  let description = [{
    `shape` is a 1-D i64 tensor of static length; -1 marks the one dim to
    infer and, unless `allowzero`, 0 copies the input's dim at that index.

    ```mlir
    %y = nn.reshape %x, %s {allowzero = false} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, RankedTensorOf<[I64]>:$shape, BoolAttr:$allowzero);
  let results = (outs NN_Tensor:$result);
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def NN_FlattenOp : NN_Op<"flatten"> {
  let summary = "collapse to 2-D at `axis`";
  let description = [{
    ```mlir
    %y = nn.flatten %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, I64Attr:$axis);
  let results = (outs NN_Tensor:$result);
  let hasFolder = 1;
}

def NN_SqueezeOp : NN_Op<"squeeze"> {
  let summary = "remove size-1 dims";
  let description = [{
    `axes` are sorted, non-negative and name dims of size 1.

    ```mlir
    %y = nn.squeeze %x {axes = array<i64: 0>} : (tensor<1x4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs NN_Tensor:$result);
  let hasFolder = 1;
}

def NN_UnsqueezeOp : NN_Op<"unsqueeze"> {
  let summary = "insert size-1 dims";
  let description = [{
    `axes` are sorted, non-negative positions in the result.

    ```mlir
    %y = nn.unsqueeze %x {axes = array<i64: 0, 2>} : (tensor<4xf32>) -> tensor<1x4x1xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs NN_Tensor:$result);
  let hasFolder = 1;
}

def NN_TransposeOp : NN_Op<"transpose"> {
  let summary = "permute dims";
  let description = [{
    Result dim i is input dim `perm[i]`.

    ```mlir
    %y = nn.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs NN_Tensor:$result);
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def NN_ConcatOp : NN_Op<"concat"> {
  let summary = "join tensors along `axis`";
  let description = [{
    ```mlir
    %y = nn.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Variadic<NN_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs NN_Tensor:$result);
  let hasFolder = 1;
}

def NN_SplitOp : NN_Op<"split"> {
  let summary = "cut a tensor along `axis` into pieces of the given `sizes`";
  let description = [{
    ```mlir
    %a, %b = nn.split %x {axis = 1 : i64, sizes = array<i64: 3, 5>}
             : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x5xf32>)
    ```
  }];
  let arguments = (ins NN_Tensor:$input, I64Attr:$axis, DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<NN_Tensor>:$results);
}

def NN_SliceOp : NN_Op<"slice"> {
  let summary = "strided slice with runtime bounds";
  let description = [{
    `starts`, `ends`, `axes` and `steps` are 1-D i64 tensors of one length,
    with ONNX's semantics: negative values count from the end, bounds clamp.
    The result is static where the bounds are constants.

    ```mlir
    %y = nn.slice %x, %starts, %ends, %axes, %steps
         : (tensor<8x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>)
         -> tensor<?x4xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, RankedTensorOf<[I64]>:$starts,
                   RankedTensorOf<[I64]>:$ends, RankedTensorOf<[I64]>:$axes,
                   RankedTensorOf<[I64]>:$steps);
  let results = (outs NN_Tensor:$result);
  let hasFolder = 1;
}

def NN_GatherOp : NN_Op<"gather"> {
  let summary = "take slices along `axis` at integer indices";
  let description = [{
    Result shape: input dims before `axis`, then the indices' dims, then the
    input dims after `axis`. Negative indices count from the end.

    ```mlir
    %y = nn.gather %table, %ids {axis = 0 : i64}
         : (tensor<100x16xf32>, tensor<4xi64>) -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, NN_IntTensor:$indices, I64Attr:$axis);
  let results = (outs NN_Tensor:$result);
  let hasFolder = 1;
}

def NN_GatherElementsOp : NN_Op<"gather_elements"> {
  let summary = "take elements along `axis` at per-element indices";
  let description = [{
    `indices` has the input's rank; the result has the indices' shape, and
    result[i][j]... = input[...][indices[i][j]...][...] with the index replacing
    the coordinate along `axis`. Negative indices count from the end.

    ```mlir
    %y = nn.gather_elements %x, %i {axis = 1 : i64}
         : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, NN_IntTensor:$indices, I64Attr:$axis);
  let results = (outs NN_Tensor:$result);
}

def NN_GatherNDOp : NN_Op<"gather_nd"> {
  let summary = "take slices at index tuples";
  let description = [{
    The last dim of `indices` (k) holds tuples indexing the input's dims after
    the first `batch_dims`; the result has shape
    indices.shape[:-1] + input.shape[batch_dims + k:]. Negative indices count
    from the end.

    ```mlir
    %y = nn.gather_nd %x, %i {batch_dims = 0 : i64}
         : (tensor<2x2xf32>, tensor<3x2xi64>) -> tensor<3xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, NN_IntTensor:$indices, I64Attr:$batch_dims);
  let results = (outs NN_Tensor:$result);
}

class NN_ScatterOp<string mnemonic, string what, dag extra> : NN_Op<mnemonic> {
  let summary = what;
  let description = "Copies `input`, then writes each element of `updates` at the "
    # "position its index gives, in order, combining with the value there by `reduction` "
    # "(none, add, mul, max, min). Negative indices count from the end.";
  let arguments = !con((ins NN_Tensor:$input, NN_IntTensor:$indices, NN_Tensor:$updates,
                        StrAttr:$reduction), extra);
  let results = (outs NN_Tensor:$result);
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *,
        std::optional<::mlir::Location>, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      types.push_back(adaptor.getInput().getType());
      return ::mlir::success();
    }
  }];
}

def NN_ScatterElementsOp : NN_ScatterOp<"scatter_elements",
    "write elements along `axis` at per-element indices", (ins I64Attr:$axis)>;
def NN_ScatterNDOp : NN_ScatterOp<"scatter_nd", "write slices at index tuples", (ins)>;

def NN_ExpandOp : NN_Op<"expand"> {
  let summary = "broadcast to a runtime shape";
  let description = [{
    Broadcasts `input` together with the 1-D i64 `shape` (NumPy rules, so a
    dim of 1 in `shape` keeps the input's dim).

    ```mlir
    %y = nn.expand %x, %s : (tensor<3x1xf32>, tensor<2xi64>) -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, RankedTensorOf<[I64]>:$shape);
  let results = (outs NN_Tensor:$result);
  let hasFolder = 1;
}

def NN_TileOp : NN_Op<"tile"> {
  let summary = "repeat a tensor along each dim";
  let description = [{
    ```mlir
    %y = nn.tile %x, %r : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, RankedTensorOf<[I64]>:$repeats);
  let results = (outs NN_Tensor:$result);
}

def NN_PadOp : NN_Op<"pad"> {
  let summary = "pad with a constant, by reflection, by edge or by wrapping";
  let description = [{
    `pads` is a 1-D i64 tensor with the leading pads of every dim, then the
    trailing ones; negative pads crop. `value` is a 0-D tensor (used by the
    `constant` mode).

    ```mlir
    %y = nn.pad %x, %p, %v {mode = "constant"}
         : (tensor<2x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x5xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, RankedTensorOf<[I64]>:$pads, NN_Tensor:$value,
                   StrAttr:$mode);
  let results = (outs NN_Tensor:$result);
  let hasVerifier = 1;
}

def NN_ResizeOp : NN_Op<"resize", [AttrSizedOperandSegments]> {
  let summary = "resample with nearest, linear or cubic interpolation";
  let description = [{
    Exactly one of `scales` (1-D f32, one per dim) and `sizes` (1-D i64) is
    given. The attributes keep ONNX's names and meanings
    (`coordinate_transformation_mode`: half_pixel, asymmetric, align_corners,
    pytorch_half_pixel, half_pixel_symmetric, tf_half_pixel_for_nn,
    tf_crop_and_resize; `nearest_mode`: round_prefer_floor,
    round_prefer_ceil, floor, ceil). tf_crop_and_resize takes `roi` (1-D
    f32 or f64: every dim's start, then every dim's end, as fractions of the input)
    and gives `extrapolation_value` where a coordinate falls outside it.

    ```mlir
    %y = nn.resize %x, %scales {coordinate_transformation_mode = "asymmetric",
           cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = false,
           mode = "nearest", nearest_mode = "floor", operandSegmentSizes = array<i32: 1, 1, 0, 0>}
         : (tensor<1x3x4x4xf32>, tensor<4xf32>) -> tensor<1x3x8x8xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, Optional<RankedTensorOf<[F32]>>:$scales,
                   Optional<RankedTensorOf<[I64]>>:$sizes, Optional<RankedTensorOf<[F32, F64]>>:$roi,
                   StrAttr:$mode, StrAttr:$coordinate_transformation_mode, StrAttr:$nearest_mode,
                   F32Attr:$cubic_coeff_a, BoolAttr:$exclude_outside,
                   DefaultValuedAttr<F32Attr, "0.0f">:$extrapolation_value);
  let results = (outs NN_Tensor:$result);
  let hasVerifier = 1;
}

#endif // NNC_DIALECTS_NN_IR_NNOPS_TD
