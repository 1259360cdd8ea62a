//===- Strings.cpp - ops that read or make text ---------------------------===//
//
// A string tensor's element is the address of a NUL-terminated string, held
// as i64 (abi.h's NNC_DTYPE_STRING): data movement copies addresses, and
// the ops below ask the runtime, through the nnc_abi_strings_t of the call's
// context, to read text (Cast to numbers, StringNormalizer's stopwords) or
// to make it (Cast to strings, case changes), one element at a time. Each is
// a call of an external `nnc_strings_*` function, which the artifact
// defines as a trampoline into the context's table (Artifact.cpp); the
// loops are scf.for on the host thread, where that context is found. Text
// is never parsed or formatted in compiled code: the runtime's C++ library
// does it, with one definition of how numbers are written.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/NNToLinalg/Lowering.h"

#include "compiler/Target/AbiDtype.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::lowering;

namespace {
/// The external functions (their trampolines' signatures: Artifact.cpp's
/// addStringTrampolines): texts are addresses as i64, values their bits.
struct Callee {
  StringRef name;
  int results; // 0: i32, 1: i64
  SmallVector<int> args; // 32 or 64 bits each
};
const Callee kFormat{"nnc_strings_format", 1, {32, 64}};
const Callee kParse{"nnc_strings_parse", 1, {32, 64}};
const Callee kIsStopword{"nnc_strings_is_stopword", 0, {64, 64, 64, 32}};
const Callee kChangeCase{"nnc_strings_change_case", 1, {64, 32}};

/// Calls `callee` (declared in the module on first use) at the builder's
/// position; in the loops below that is the rewriter, whose position the
/// loop builders move into their bodies.
Value call(OpBuilder &b, Operation *from, const Callee &callee, ValueRange args) {
  auto module = from->getParentOfType<ModuleOp>();
  Type result = b.getIntegerType(callee.results ? 64 : 32);
  if (!module.lookupSymbol<func::FuncOp>(callee.name)) {
    SmallVector<Type> argTypes;
    for (int bits : callee.args)
      argTypes.push_back(b.getIntegerType(bits));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto decl = func::FuncOp::create(b, from->getLoc(), callee.name,
                                     b.getFunctionType(argTypes, {result}));
    decl.setPrivate();
  }
  return func::CallOp::create(b, from->getLoc(), callee.name, TypeRange{result}, args).getResult(0);
}

/// The runtime's code for a numeric element type (before signless
/// conversion) that text is read as or written from: f32, f64, integers.
std::optional<int32_t> numberCode(Type type) {
  int32_t code = abiDtype(type, false);
  if (code == 0 || code == NNC_DTYPE_BOOL || code == NNC_DTYPE_STRING || code == NNC_DTYPE_F16 ||
      code == NNC_DTYPE_BF16)
    return std::nullopt;
  return code;
}

/// `x` (an element of a numeric type) as the low bits of an i64.
Value toBits(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  if (isa<FloatType>(type))
    x = arith::BitcastOp::create(b, loc, b.getIntegerType(type.getIntOrFloatBitWidth()), x);
  if (x.getType().getIntOrFloatBitWidth() < 64)
    x = arith::ExtUIOp::create(b, loc, b.getI64Type(), x);
  return x;
}

/// The value of `type` in the low bits of `bits`.
Value fromBits(OpBuilder &b, Location loc, Value bits, Type type) {
  unsigned width = type.getIntOrFloatBitWidth();
  if (width < 64)
    bits = arith::TruncIOp::create(b, loc, b.getIntegerType(width), bits);
  if (isa<FloatType>(type))
    bits = arith::BitcastOp::create(b, loc, type, bits);
  return bits;
}

/// `input` as a 1-D tensor of its elements (a view for the loops below).
Value flatten(OpBuilder &b, Location loc, Value input) {
  auto type = tensorType(input);
  if (type.getRank() == 1)
    return input;
  if (type.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, RankedTensorType::get({1}, type.getElementType()),
                                         input, ArrayRef<ReassociationIndices>{});
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    all[0].push_back(d);
  return tensor::CollapseShapeOp::create(b, loc, input, all);
}

/// nn.cast to or from !nn.string: one runtime call per element.
struct StringCastPattern : OpConversionPattern<nn::CastOp> {
  StringCastPattern(const TypeConverter &converter, MLIRContext *context)
      : OpConversionPattern(converter, context, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(nn::CastOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Type from = getElementTypeOrSelf(op.getInput().getType()), to = op.getTo();
    bool fromText = isa<nn::StringType>(from), toText = isa<nn::StringType>(to);
    if (!fromText && !toText)
      return failure();
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto resultType = cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    if (fromText && toText) {
      b.replaceOp(op, input);
      return success();
    }
    std::optional<int32_t> code = numberCode(fromText ? to : from);
    if (!code)
      return op.emitOpError("cannot cast between text and this element type");
    Value flat = flatten(b, loc, input);
    OpFoldResult size = tensor::getMixedSize(b, loc, flat, 0);
    Value count = getValueOrCreateConstantIndexOp(b, loc, size);
    Value dtype = arith::ConstantIntOp::create(b, loc, b.getI32Type(), *code);
    Type element = resultType.getElementType();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0), one = arith::ConstantIndexOp::create(b, loc, 1);
    Value init = tensor::EmptyOp::create(b, loc, ArrayRef<OpFoldResult>{size}, element);
    auto loop = scf::ForOp::create(
        b, loc, zero, count, one, ValueRange{init},
        [&](OpBuilder &, Location nl, Value i, ValueRange acc) {
          Value x = tensor::ExtractOp::create(b, nl, flat, ValueRange{i});
          Value y = toText ? call(b, op, kFormat, {dtype, toBits(b, nl, x)})
                           : fromBits(b, nl, call(b, op, kParse, {dtype, x}), element);
          Value next = tensor::InsertOp::create(b, nl, y, acc[0], ValueRange{i});
          scf::YieldOp::create(b, nl, next);
        });
    Value result = loop.getResult(0);
    if (resultType.getRank() == 0) {
      result = tensor::CollapseShapeOp::create(b, loc, resultType, result,
                                               ArrayRef<ReassociationIndices>{});
    } else if (resultType.getRank() != 1) {
      SmallVector<OpFoldResult> dims = tensor::getMixedSizes(b, loc, input);
      SmallVector<ReassociationIndices> all(1);
      for (int64_t d = 0; d < resultType.getRank(); ++d)
        all[0].push_back(d);
      result = tensor::ExpandShapeOp::create(b, loc, resultType, result, all, dims);
    }
    b.replaceOp(op, result);
    return success();
  }
};

/// The stopwords one after another, each NUL-terminated, as a constant
/// global of the module: its address as i64.
Value stopwordTable(ConversionPatternRewriter &b, nn::StringNormalizerOp op) {
  std::string bytes;
  for (Attribute word : op.getStopwords())
    bytes += cast<StringAttr>(word).getValue().str() + '\0';
  auto module = op->getParentOfType<ModuleOp>();
  std::string name;
  for (int k = 0;; ++k) {
    name = "nnc_stopwords_" + std::to_string(k);
    if (!module.lookupSymbol(name))
      break;
  }
  Location loc = op.getLoc();
  auto arrayType = LLVM::LLVMArrayType::get(b.getI8Type(), bytes.size());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    LLVM::GlobalOp::create(b, loc, arrayType, /*isConstant=*/true, LLVM::Linkage::Internal, name,
                           b.getStringAttr(bytes));
  }
  Value address = LLVM::AddressOfOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()), name);
  return LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), address);
}

/// StringNormalizer: the strings that are not stopwords, counted, then
/// written case changed in order (DataDependent.cpp's count-then-fill); one
/// empty string when none is left.
struct StringNormalizerPattern : OpConversionPattern<nn::StringNormalizerOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::StringNormalizerOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value flat = flatten(b, loc, adaptor.getInput());
    Value count = getValueOrCreateConstantIndexOp(b, loc, tensor::getMixedSize(b, loc, flat, 0));
    auto i32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v).getResult(); };
    Value action = i32(op.getCaseChange());
    int64_t numStopwords = op.getStopwords().size();
    Value table = numStopwords ? stopwordTable(b, op) : Value();
    Value words = arith::ConstantIntOp::create(b, loc, b.getI64Type(), numStopwords);
    Value caseSensitive = i32(op.getCaseSensitive());
    // Kept: not a stopword (a failed check, text that is not UTF-8, keeps
    // it; the run fails anyway).
    auto kept = [&](OpBuilder &, Location nl, Value i) -> Value {
      if (!numStopwords)
        return arith::ConstantIntOp::create(b, nl, b.getI1Type(), 1);
      Value text = tensor::ExtractOp::create(b, nl, flat, ValueRange{i});
      Value hit = call(b, op, kIsStopword, {text, table, words, caseSensitive});
      return arith::CmpIOp::create(b, nl, arith::CmpIPredicate::ne, hit, i32(1));
    };
    Value zero = arith::ConstantIndexOp::create(b, loc, 0), one = arith::ConstantIndexOp::create(b, loc, 1);
    Value n = zero;
    if (numStopwords) {
      auto counting = scf::ForOp::create(
          b, loc, zero, count, one, ValueRange{zero},
          [&](OpBuilder &, Location nl, Value i, ValueRange acc) {
            Value add = arith::SelectOp::create(b, nl, kept(b, nl, i), one, zero);
            scf::YieldOp::create(b, nl, ValueRange{arith::AddIOp::create(b, nl, acc[0], add)});
          });
      n = counting.getResult(0);
    } else {
      n = count;
    }
    // ONNX: with nothing left, the result is one empty string.
    Value none = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, n, zero);
    Value length = arith::SelectOp::create(b, loc, none, one, n);
    Value bound = arith::MaxUIOp::create(b, loc, count, one);
    Value extent = nn::BoundedExtentOp::create(b, loc, length, bound);
    Value init = tensor::EmptyOp::create(b, loc, ArrayRef<OpFoldResult>{extent}, b.getI64Type());
    auto filling = scf::ForOp::create(
        b, loc, zero, count, one, ValueRange{zero, init},
        [&](OpBuilder &, Location nl, Value i, ValueRange acc) {
          Value next = acc[0], result = acc[1];
          auto pick = scf::IfOp::create(
              b, nl, kept(b, nl, i),
              [&](OpBuilder &, Location tl) {
                Value text = tensor::ExtractOp::create(b, tl, flat, ValueRange{i});
                Value changed = call(b, op, kChangeCase, {text, action});
                Value written = tensor::InsertOp::create(b, tl, changed, result, ValueRange{next});
                Value after = arith::AddIOp::create(b, tl, next, one);
                scf::YieldOp::create(b, tl, ValueRange{after, written});
              },
              [&](OpBuilder &, Location el) { scf::YieldOp::create(b, el, ValueRange{next, result}); });
          scf::YieldOp::create(b, nl, pick.getResults());
        });
    Value result = filling.getResult(1);
    auto empty = scf::IfOp::create(
        b, loc, none,
        [&](OpBuilder &, Location tl) {
          Value nothing = arith::ConstantIntOp::create(b, tl, b.getI64Type(), 0);
          Value text = call(b, op, kChangeCase, {nothing, i32(0)});
          scf::YieldOp::create(b, tl, ValueRange{tensor::InsertOp::create(b, tl, text, result, ValueRange{zero}).getResult()});
        },
        [&](OpBuilder &, Location el) { scf::YieldOp::create(b, el, ValueRange{result}); });
    result = empty.getResult(0);
    auto resultType = cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    if (resultType.getRank() == 2)
      result = tensor::ExpandShapeOp::create(b, loc, resultType, result,
                                             SmallVector<ReassociationIndices>{{0, 1}},
                                             ArrayRef<OpFoldResult>{b.getIndexAttr(1), extent});
    b.replaceOp(op, result);
    return success();
  }
};
} // namespace

std::optional<std::string> lowering::stringRefusal(Operation *op, bool allowed) {
  auto text = [](Type t) { return isa<nn::StringType>(getElementTypeOrSelf(t)); };
  if (auto func = dyn_cast<func::FuncOp>(op)) {
    // A graph's inputs and outputs: the runtime passes strings to CPU
    // sessions only.
    FunctionType type = func.getFunctionType();
    if (!allowed && (llvm::any_of(type.getInputs(), text) || llvm::any_of(type.getResults(), text)))
      return std::string("string tensors run on the CPU target only (a graph input or output "
                         "holds strings)");
    return std::nullopt;
  }
  if (llvm::none_of(op->getOperandTypes(), text) && llvm::none_of(op->getResultTypes(), text))
    return std::nullopt;
  if (!allowed)
    return std::string("string tensors run on the CPU target only");
  // Outside nn: the control flow of If (converted with its branches), and
  // of Loop and Scan, whose carried values and scan outputs keep one type.
  if (!isa<nn::NNDialect>(op->getDialect())) {
    if (isa<scf::ForOp, scf::WhileOp>(op))
      return std::string("a Loop or Scan carrying strings from one iteration to the next, or "
                         "collecting them as scan outputs, is not supported");
    return std::nullopt;
  }
  // Ops that only move elements (copy addresses) or read dims, and the two
  // that read or make text. Anything comparing or combining strings would
  // compare addresses: refused.
  if (isa<nn::CastOp, nn::StringNormalizerOp, nn::ReshapeOp, nn::TransposeOp, nn::ConcatOp,
          nn::GatherOp, nn::GatherNDOp, nn::SliceOp, nn::SqueezeOp, nn::UnsqueezeOp, nn::FlattenOp,
          nn::ExpandOp, nn::TileOp, nn::SplitOp, nn::WhereOp, nn::CheckOp, nn::ShapeOp,
          nn::SizeOp>(op))
    return std::nullopt;
  return "cannot compile " + op->getName().getStringRef().str() +
         " with string tensors: only Cast, StringNormalizer, Shape, Size and ops that move "
         "elements (Reshape, Transpose, Concat, Gather, Slice, Squeeze, Unsqueeze, Flatten, "
         "Expand, Tile, Split, Where, Identity) take them";
}

void lowering::populateStringPatterns(NNTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<StringCastPattern, StringNormalizerPattern>(converter, patterns.getContext());
}
