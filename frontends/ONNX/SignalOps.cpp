//===- SignalOps.cpp - the discrete Fourier transform, short-time too -----===//
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

/// The transform along the last dim (of `size`) of the real part
/// `parts[0]` and, for a complex signal, the imaginary part `parts[1]`: its
/// first `outputs` frequencies' real and imaginary parts.
std::pair<Value, Value> transform(NodeImporter &n, ArrayRef<Value> parts, int64_t size,
                                  int64_t outputs, bool inverse) {
  Type element = getElementTypeOrSelf(parts[0].getType());
  Value c = twiddles(n, element, size, outputs, /*sine=*/false);
  Value s = twiddles(n, element, size, outputs, /*sine=*/true);
  auto times = [&](Value v, Value m) { return n.create<nn::MatMulOp>(v, m); };
  Value re, im;
  Value a = parts[0];
  if (parts.size() == 1) {
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
  return {re, im};
}

/// Part `i` (0 real, 1 imaginary) of a signal whose last dim holds the
/// components, that dim dropped.
Value component(NodeImporter &n, Value x, int64_t i) {
  int64_t rank = NodeImporter::rank(x);
  Value sliced = n.create<nn::SliceOp>(x, n.constI64({i}), n.constI64({i + 1}),
                                       n.constI64({rank - 1}), n.constI64({1}));
  return n.create<nn::SqueezeOp>(sliced, n.builder.getDenseI64ArrayAttr({rank - 1}));
}

/// A scalar integer input given as a constant (dft_length, frame_step,
/// frame_length).
std::optional<int64_t> constantScalar(NodeImporter &n, unsigned i) {
  std::optional<SmallVector<int64_t>> given = n.constInts(i);
  if (!given || given->size() != 1)
    return std::nullopt;
  return given->front();
}

/// STFT: the signal [batch, length, 1 or 2] cut into frames of frame_length
/// every frame_step samples (a gather), each multiplied by the window and
/// transformed like DFT along the frame: [batch, frames, bins, 2], frames =
/// (length - frame_length) / frame_step + 1. The frame length must be known
/// when compiling (a constant, or the window's length): it sizes the
/// transform's constant matrices. The step may be given at run time (the
/// gathered indices then a Range of it).
LogicalResult importSTFT(NodeImporter &n) {
  OpBuilder &b = n.builder;
  Value x = n.input(0);
  auto type = NodeImporter::type(x);
  if (!isa<FloatType>(type.getElementType()))
    return n.fail("the signal must be floating-point");
  if (type.getRank() != 3 || type.isDynamicDim(2) || type.getDimSize(2) < 1 || type.getDimSize(2) > 2)
    return n.fail("the signal must be [batch, length, 1 (real) or 2 (complex)]");
  if (type.isDynamicDim(1))
    return n.fail("the signal's length must be static: it gives the number of frames");
  int64_t length = type.getDimSize(1);
  bool complex = type.getDimSize(2) == 2;
  std::optional<int64_t> step = constantScalar(n, 1);
  if (step && *step < 1)
    return n.fail("frame_step must be positive (got " + Twine(*step) + ")");
  std::optional<int64_t> frameLength;
  Value window = n.input(2);
  if (window) {
    auto windowType = NodeImporter::type(window);
    if (windowType.getRank() != 1 || windowType.isDynamicDim(0))
      return n.fail("the window must be 1-D of a static length");
    if (windowType.getElementType() != type.getElementType())
      return n.fail("the window's element type must be the signal's");
    frameLength = windowType.getDimSize(0);
  }
  if (n.input(3)) {
    std::optional<int64_t> given = constantScalar(n, 3);
    if (!given)
      return n.fail("frame_length must be a constant (it gives the transform's size)");
    if (frameLength && *frameLength != *given)
      return n.fail("frame_length " + Twine(*given) + " differs from the window's length " +
                    Twine(*frameLength));
    frameLength = *given;
  }
  if (!frameLength)
    return n.fail("needs a window or a frame_length");
  int64_t size = *frameLength;
  if (size < 1 || size > length)
    return n.fail("frame_length " + Twine(size) + " must be between 1 and the signal's length " +
                  Twine(length));
  bool onesided = n.attrInt("onesided", 1) != 0;
  if (onesided && complex)
    return n.fail("a one-sided transform needs a real signal");
  int64_t bins = onesided ? size / 2 + 1 : size;
  // Frame f's sample j is the signal's f * step + j.
  Value indices;
  if (step) {
    int64_t frames = (length - size) / *step + 1;
    SmallVector<int64_t> at;
    for (int64_t f = 0; f < frames; ++f)
      for (int64_t j = 0; j < size; ++j)
        at.push_back(f * *step + j);
    indices = n.create<nn::ConstantOp>(cast<ElementsAttr>(DenseElementsAttr::get(
        RankedTensorType::get({frames, size}, b.getI64Type()), ArrayRef<int64_t>(at))));
  } else {
    // A step given at run time (docs/dynamic-shapes.md): the frame count,
    // (length - size) / step + 1, is a dim read from it before the run. A
    // step below 1 is refused then.
    Type i64 = b.getI64Type();
    auto stepType = NodeImporter::type(n.input(1));
    if (!isa<IntegerType>(stepType.getElementType()) || !stepType.hasStaticShape() ||
        stepType.getNumElements() != 1)
      return n.fail("frame_step must be one integer");
    Value stepValue = n.create<nn::ReshapeOp>(n.toI64(n.input(1)), n.constI64({}), b.getBoolAttr(false));
    // On the signal, which the result always reads (RuntimeParameters.cpp's
    // checked()).
    x = n.create<nn::CheckOp>(x, n.create<nn::GreaterEqualOp>(stepValue, n.scalar(i64, 1)),
                              b.getStringAttr("frame_step must be positive"));
    // The frames start at 0, step, ... up to length - size.
    Value starts = n.create<nn::RangeOp>(n.scalar(i64, 0), n.scalar(i64, length - size + 1),
                                         stepValue);
    SmallVector<int64_t> offsets;
    for (int64_t j = 0; j < size; ++j)
      offsets.push_back(j);
    indices = n.create<nn::AddOp>(
        n.create<nn::UnsqueezeOp>(starts, b.getDenseI64ArrayAttr({1})),
        n.create<nn::ConstantOp>(cast<ElementsAttr>(DenseElementsAttr::get(
            RankedTensorType::get({1, size}, i64), ArrayRef<int64_t>(offsets)))));
  }
  Value framed = n.create<nn::GatherOp>(x, indices, b.getI64IntegerAttr(1));
  SmallVector<Value> parts{component(n, framed, 0)};
  if (complex)
    parts.push_back(component(n, framed, 1));
  if (window)
    for (Value &v : parts)
      v = n.create<nn::MulOp>(v, window);
  auto [re, im] = transform(n, parts, size, bins, /*inverse=*/false);
  SmallVector<Value> components;
  for (Value v : {re, im})
    components.push_back(n.create<nn::UnsqueezeOp>(v, b.getDenseI64ArrayAttr({3})));
  n.setOutputs(n.create<nn::ConcatOp>(ValueRange(components), b.getI64IntegerAttr(3)));
  return success();
}

/// MelWeightMatrix: a [dft_length / 2 + 1, num_mel_bins] matrix of
/// triangular filters, all five inputs given at run time (the matrix's dims
/// read from them before the run: docs/dynamic-shapes.md). As ONNX's
/// reference computes it, in f64 (NumPy 1's promotion of its f32 scalars):
/// num_mel_bins + 2 points evenly spaced in mel between the edges (the step
/// by num_mel_bins + 2), each back to hertz and to a spectrogram bin,
/// floor((dft_length + 1) * hz / sample_rate); filter i rises linearly from
/// bin[i] to 1 at bin[i + 1] and falls to bin[i + 2] (a filter whose rise
/// is empty is a 1 at bin[i + 1]). log10 is ln(x) / ln(10), within an ulp
/// of the C library's. A negative count or length, or a sample rate below
/// 1, is refused before the run; bins outside the matrix are dropped (the
/// reference would index out of range, or wrap a negative one).
LogicalResult importMelWeightMatrix(NodeImporter &n) {
  OpBuilder &b = n.builder;
  Type i64 = b.getI64Type(), f64 = b.getF64Type();
  SmallVector<Value> in;
  for (unsigned k = 0; k < 5; ++k) {
    Value v = n.input(k);
    auto type = v ? NodeImporter::type(v) : RankedTensorType();
    if (!v || !type.hasStaticShape() || type.getNumElements() != 1)
      return n.fail("expects five scalar inputs");
    bool integer = k < 3;
    if (integer != isa<IntegerType>(type.getElementType()) ||
        (!integer && !isa<FloatType>(type.getElementType())))
      return n.fail(integer ? "num_mel_bins, dft_length and sample_rate must be integers"
                            : "the edges in hertz must be floating-point");
    in.push_back(n.create<nn::ReshapeOp>(v, n.constI64({}), b.getBoolAttr(false)));
  }
  Type out = importElementType(*b.getContext(), n.attrInt("output_datatype", 1));
  if (!out || !isa<FloatType>(out))
    return n.fail("output_datatype must be a floating-point type");
  auto cast = [&](Value v, Type t) { return n.create<nn::CastOp>(v, TypeAttr::get(t)); };
  Value mels = cast(in[0], i64), dft = cast(in[1], i64), rate = cast(in[2], i64);
  // Values the reference cannot compute with are refused before the run.
  auto atLeast = [&](Value v, int64_t least, StringRef message) {
    return n.create<nn::CheckOp>(v, n.create<nn::GreaterEqualOp>(v, n.scalar(i64, least)),
                                 b.getStringAttr(message));
  };
  mels = atLeast(mels, 0, "num_mel_bins must not be negative");
  dft = atLeast(dft, 0, "dft_length must not be negative");
  rate = atLeast(rate, 1, "sample_rate must be positive");
  // The mel of an edge: 2595 * log10(1 + hz / 700).
  auto mel = [&](Value hz) {
    Value ratio = n.create<nn::AddOp>(n.scalar(f64, 1),
                                      n.create<nn::DivOp>(cast(hz, f64), n.scalar(f64, 700)));
    Value log10 = n.create<nn::DivOp>(n.create<nn::LogOp>(ratio), n.scalar(f64, std::log(10.0)));
    return n.create<nn::MulOp>(n.scalar(f64, 2595), log10);
  };
  Value low = mel(in[3]), high = mel(in[4]);
  Value points = n.create<nn::AddOp>(mels, n.scalar(i64, 2));
  Value step = n.create<nn::DivOp>(n.create<nn::SubOp>(high, low), cast(points, f64));
  Value at = cast(n.create<nn::RangeOp>(n.scalar(i64, 0), points, n.scalar(i64, 1)), f64);
  Value melPoints = n.create<nn::AddOp>(n.create<nn::MulOp>(at, step), low);
  Value hz = n.create<nn::MulOp>(
      n.scalar(f64, 700),
      n.create<nn::SubOp>(n.create<nn::PowOp>(n.scalar(f64, 10),
                                               n.create<nn::DivOp>(melPoints, n.scalar(f64, 2595))),
                          n.scalar(f64, 1)));
  Value bins = n.create<nn::FloorOp>(n.create<nn::DivOp>(
      n.create<nn::MulOp>(cast(n.create<nn::AddOp>(dft, n.scalar(i64, 1)), f64), hz), cast(rate, f64)));
  // Filter i's three points, [1, M]; the spectrogram's bins k, [K, 1].
  Value filters = n.create<nn::RangeOp>(n.scalar(i64, 0), mels, n.scalar(i64, 1));
  auto point = [&](int64_t offset) {
    Value picked = n.create<nn::GatherOp>(
        bins, n.create<nn::AddOp>(filters, n.scalar(i64, offset)), b.getI64IntegerAttr(0));
    return n.create<nn::UnsqueezeOp>(picked, b.getDenseI64ArrayAttr({0}));
  };
  Value left = point(0), center = point(1), right = point(2);
  Value spectrum = n.create<nn::AddOp>(n.create<nn::DivOp>(dft, n.scalar(i64, 2)), n.scalar(i64, 1));
  Value k = n.create<nn::UnsqueezeOp>(
      cast(n.create<nn::RangeOp>(n.scalar(i64, 0), spectrum, n.scalar(i64, 1)), f64),
      b.getDenseI64ArrayAttr({1}));
  auto both = [&](Value x, Value y) { return n.create<nn::AndOp>(x, y); };
  Value rising = both(both(n.create<nn::GreaterEqualOp>(k, left), n.create<nn::LessEqualOp>(k, center)),
                      n.create<nn::GreaterOp>(center, left));
  Value falling = both(both(n.create<nn::GreaterEqualOp>(k, center), n.create<nn::LessOp>(k, right)),
                       n.create<nn::GreaterOp>(right, center));
  Value peak = both(n.create<nn::EqualOp>(center, left), n.create<nn::EqualOp>(k, center));
  // Divisors kept nonzero where their branch is not taken.
  auto ratio = [&](Value num, Value den) {
    Value safe = n.create<nn::WhereOp>(n.create<nn::EqualOp>(den, n.scalar(f64, 0)), n.scalar(f64, 1), den);
    return n.create<nn::DivOp>(num, safe);
  };
  Value zero = n.scalar(f64, 0), one = n.scalar(f64, 1);
  Value weights = n.create<nn::WhereOp>(
      falling, ratio(n.create<nn::SubOp>(right, k), n.create<nn::SubOp>(right, center)),
      n.create<nn::WhereOp>(rising, ratio(n.create<nn::SubOp>(k, left), n.create<nn::SubOp>(center, left)),
                            n.create<nn::WhereOp>(peak, one, zero)));
  n.setOutputs(cast(weights, out));
  return success();
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
    std::optional<int64_t> given = constantScalar(n, 1);
    if (!given)
      return n.fail("dft_length must be a constant integer");
    size = *given;
    if (size < 1)
      return n.fail("dft_length must be positive (got " + Twine(size) + ")");
  }
  bool inverse = n.attrInt("inverse", 0) != 0, onesided = n.attrInt("onesided", 0) != 0;
  if (onesided && (complex || inverse))
    return n.fail("a one-sided transform needs a real signal and the forward direction");
  int64_t outputs = onesided ? size / 2 + 1 : size;

  // Real and imaginary parts, the component dim dropped.
  SmallVector<Value> parts{component(n, x, 0)};
  if (complex)
    parts.push_back(component(n, x, 1));
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
  auto [re, im] = transform(n, parts, size, outputs, inverse);
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
      {"STFT", 17, M, importSTFT},
      {"MelWeightMatrix", 17, M, importMelWeightMatrix},
  });
}
