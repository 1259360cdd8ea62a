//===- SignalOps.cpp - the discrete Fourier transform ----------------------===//
//
// DFT along one axis of static length N is a product with constant cosine
// and sine matrices [N, K] (K = N, or N / 2 + 1 for a one-sided transform of
// a real signal): the matmul schedules do the rest. With e^{-2 pi i k n / N}
// = cos - i sin, for x = a + ib:
//
//   forward:  re = a C + b S,  im = b C - a S
//   inverse:  re = (a C - b S) / N,  im = (a S + b C) / N
//
// O(N^2) work rather than an FFT's O(N log N): for the lengths models use
// (audio frames, a few hundred to a few thousand), one matmul beats a
// sequence of butterfly passes over memory.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/NodeImporter.h"

#include <cmath>

using namespace mlir;
using namespace nnc;
using namespace nnc::onnx_frontend;

namespace {
/// The [n, k] matrix of cos (or sin) of 2 pi j m / n at row m, column j, of
/// `element` type.
Value twiddles(NodeImporter &n, Type element, int64_t rows, int64_t columns, bool sine) {
  auto type = RankedTensorType::get({rows, columns}, element);
  const llvm::fltSemantics &semantics = cast<FloatType>(element).getFloatSemantics();
  SmallVector<APFloat> values;
  values.reserve(rows * columns);
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t j = 0; j < columns; ++j) {
      // The angle's exact multiple of 2 pi / n, reduced first: cos and sin
      // of large arguments lose digits.
      double angle = 2 * M_PI * double((m * j) % rows) / double(rows);
      APFloat v(sine ? std::sin(angle) : std::cos(angle));
      bool lost;
      v.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
      values.push_back(v);
    }
  return n.create<nn::ConstantOp>(cast<ElementsAttr>(DenseElementsAttr::get(type, values)));
}

LogicalResult importDFT(NodeImporter &n) {
  OpBuilder &b = n.builder;
  Value x = n.input(0);
  auto type = NodeImporter::type(x);
  Type element = type.getElementType();
  int64_t rank = type.getRank();
  if (!isa<FloatType>(element))
    return n.fail("the signal must be floating-point");
  if (rank < 2 || type.isDynamicDim(rank - 1) || type.getDimSize(rank - 1) < 1 ||
      type.getDimSize(rank - 1) > 2)
    return n.fail("the signal's last dim must be 1 (real) or 2 (complex)");
  bool complex = type.getDimSize(rank - 1) == 2;
  int64_t axis = n.attrInt("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank - 1)
    return n.fail("axis " + Twine(n.attrInt("axis", 1)) + " must name a signal dim (not the last)");
  if (type.isDynamicDim(axis))
    return n.fail("the transformed dim must be static: its cosines and sines are constants");
  int64_t length = type.getDimSize(axis), size = length;
  if (n.input(1)) {
    std::optional<SmallVector<int64_t>> given = n.constInts(1);
    if (!given || given->size() != 1)
      return n.fail("dft_length must be a constant integer");
    size = given->front();
    if (size < 1)
      return n.fail("dft_length must be positive (got " + Twine(size) + ")");
  }
  bool inverse = n.attrInt("inverse", 0) != 0, onesided = n.attrInt("onesided", 0) != 0;
  if (onesided && (complex || inverse))
    return n.fail("a one-sided transform needs a real signal and the forward direction");
  int64_t outputs = onesided ? size / 2 + 1 : size;

  // Real and imaginary parts, the component dim dropped.
  auto part = [&](int64_t i) {
    Value sliced = n.create<nn::SliceOp>(x, n.constI64({i}), n.constI64({i + 1}),
                                         n.constI64({rank - 1}), n.constI64({1}));
    return n.create<nn::SqueezeOp>(sliced, b.getDenseI64ArrayAttr({rank - 1}));
  };
  SmallVector<Value> parts{part(0)};
  if (complex)
    parts.push_back(part(1));
  // The transformed dim last, trimmed or zero-padded to dft_length.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  SmallVector<int64_t> inversePerm(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inversePerm[p] = i;
  for (Value &v : parts) {
    v = n.create<nn::TransposeOp>(v, b.getDenseI64ArrayAttr(perm));
    int64_t last = rank - 2;
    if (size < length) {
      v = n.create<nn::SliceOp>(v, n.constI64({0}), n.constI64({size}), n.constI64({last}),
                                n.constI64({1}));
    } else if (size > length) {
      SmallVector<int64_t> zerosShape(NodeImporter::type(v).getShape());
      if (llvm::any_of(zerosShape, ShapedType::isDynamic))
        return n.fail("zero-padding to dft_length needs static signal dims");
      zerosShape.back() = size - length;
      Value zeros = n.create<nn::ConstantOp>(cast<ElementsAttr>(n.scalarAttr(element, 0, zerosShape)));
      v = n.create<nn::ConcatOp>(ValueRange{v, zeros}, b.getI64IntegerAttr(last));
    }
  }
  Value c = twiddles(n, element, size, outputs, /*sine=*/false);
  Value s = twiddles(n, element, size, outputs, /*sine=*/true);
  auto times = [&](Value v, Value m) { return n.create<nn::MatMulOp>(v, m); };
  Value re, im;
  Value a = parts[0];
  if (!complex) {
    re = times(a, c);
    im = n.create<nn::NegOp>(times(a, s));
    if (inverse) // e^{+i}: the sine's sign flips
      im = n.create<nn::NegOp>(im);
  } else {
    Value bIm = parts[1];
    if (!inverse) {
      re = n.create<nn::AddOp>(times(a, c), times(bIm, s));
      im = n.create<nn::SubOp>(times(bIm, c), times(a, s));
    } else {
      re = n.create<nn::SubOp>(times(a, c), times(bIm, s));
      im = n.create<nn::AddOp>(times(a, s), times(bIm, c));
    }
  }
  if (inverse) {
    Value scale = n.scalar(element, 1.0 / double(size));
    re = n.create<nn::MulOp>(re, scale);
    im = n.create<nn::MulOp>(im, scale);
  }
  SmallVector<Value> components;
  for (Value v : {re, im}) {
    v = n.create<nn::TransposeOp>(v, b.getDenseI64ArrayAttr(inversePerm));
    components.push_back(n.create<nn::UnsqueezeOp>(v, b.getDenseI64ArrayAttr({rank - 1})));
  }
  n.setOutputs(n.create<nn::ConcatOp>(ValueRange(components), b.getI64IntegerAttr(rank - 1)));
  return success();
}
} // namespace

void nnc::onnx_frontend::addSignalHandlers(std::vector<HandlerEntry> &t) {
  constexpr int64_t M = kMaxOpset;
  t.insert(t.end(), {
      {"DFT", 17, M, importDFT},
  });
}
