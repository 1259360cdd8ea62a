// RUN: nnc-opt %s --nnc-convert-nn-to-linalg --split-input-file | FileCheck %s

// Scalar bodies of the elementwise ops not covered by elementwise.mlir. Each
// op is one parallel linalg.generic; these check the body.

// CHECK-LABEL: func.func @sqrt
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.sqrt %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @sqrt(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.sqrt %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @exp
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @exp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @log
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.log %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @log(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.log %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @erf
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.erf %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @erf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.erf %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @tanh
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.tanh %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.tanh %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sin
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.sin %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @sin(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.sin %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @cos
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.cos %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @cos(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.cos %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @tan
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.tan %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @tan(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.tan %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @asin
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.asin %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @asin(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.asin %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @acos
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.acos %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @acos(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.acos %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @atan
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.atan %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @atan(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.atan %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sinh
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.sinh %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @sinh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.sinh %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @cosh
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.cosh %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @cosh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.cosh %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @asinh
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.asinh %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @asinh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.asinh %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @acosh
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.acosh %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @acosh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.acosh %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @atanh
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.atanh %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @atanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.atanh %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @floor
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.floor %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @floor(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.floor %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @ceil
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.ceil %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @ceil(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.ceil %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @round
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.roundeven %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @round(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.round %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}


// -----

// CHECK-LABEL: func.func @reciprocal
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[R:.*]] = arith.divf %[[ONE]], %[[X]] : f32
// CHECK: linalg.yield %[[R]] : f32
func.func @reciprocal(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.reciprocal %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// sigmoid(x) = 1 / (1 + exp(-x))
// CHECK-LABEL: func.func @sigmoid
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[N:.*]] = arith.negf %[[X]] : f32
// CHECK-DAG: %[[E:.*]] = math.exp %[[N]] : f32
// CHECK-DAG: %[[D:.*]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK-DAG: %[[R:.*]] = arith.divf %[[ONE]], %[[D]] : f32
// CHECK: linalg.yield %[[R]] : f32
func.func @sigmoid(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// softplus(x) = max(x, 0) + log1p(exp(-|x|)), which cannot overflow.
// CHECK-LABEL: func.func @softplus
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[POS:.*]] = arith.maximumf %[[X]], %[[ZERO]] : f32
// CHECK-DAG: %[[ABS:.*]] = math.absf %[[X]] : f32
// CHECK-DAG: %[[NEG:.*]] = arith.negf %[[ABS]] : f32
// CHECK-DAG: %[[E:.*]] = math.exp %[[NEG]] : f32
// CHECK-DAG: %[[L:.*]] = math.log1p %[[E]] : f32
// CHECK-DAG: %[[R:.*]] = arith.addf %[[POS]], %[[L]] : f32
// CHECK: linalg.yield %[[R]] : f32
func.func @softplus(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.softplus %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// hard_swish(x) = x * min(max(x / 6 + 1/2, 0), 1)
// CHECK-LABEL: func.func @hard_swish
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[SIXTH:.*]] = arith.constant 0.166666672 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[S:.*]] = arith.mulf %[[X]], %[[SIXTH]] : f32
// CHECK-DAG: %[[T:.*]] = arith.addf %[[S]], %[[HALF]] : f32
// CHECK-DAG: %[[LO:.*]] = arith.maximumf %[[T]], %[[ZERO]] : f32
// CHECK-DAG: %[[HI:.*]] = arith.minimumf %[[LO]], %[[ONE]] : f32
// CHECK-DAG: %[[R:.*]] = arith.mulf %[[X]], %[[HI]] : f32
// CHECK: linalg.yield %[[R]] : f32
func.func @hard_swish(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.hard_swish %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// softsign(x) = x / (1 + |x|)
// CHECK-LABEL: func.func @softsign
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ABS:.*]] = math.absf %[[X]] : f32
// CHECK-DAG: %[[D:.*]] = arith.addf %[[ONE]], %[[ABS]] : f32
// CHECK-DAG: %[[R:.*]] = arith.divf %[[X]], %[[D]] : f32
// CHECK: linalg.yield %[[R]] : f32
func.func @softsign(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.softsign %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// leaky_relu(x) = x < 0 ? alpha * x : x
// CHECK-LABEL: func.func @leaky_relu
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG: %[[ALPHA:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[S:.*]] = arith.mulf %[[X]], %[[ALPHA]] : f32
// CHECK-DAG: %[[NEG:.*]] = arith.cmpf olt, %[[X]], %[[ZERO]] : f32
// CHECK-DAG: %[[R:.*]] = arith.select %[[NEG]], %[[S]], %[[X]] : f32
// CHECK: linalg.yield %[[R]] : f32
func.func @leaky_relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.leaky_relu %x {alpha = 0.25 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// elu(x) = x < 0 ? alpha * expm1(x) : x
// CHECK-LABEL: func.func @elu
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG: %[[ALPHA:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[EM1:.*]] = math.expm1 %[[X]] : f32
// CHECK-DAG: %[[S:.*]] = arith.mulf %[[EM1]], %[[ALPHA]] : f32
// CHECK-DAG: %[[NEG:.*]] = arith.cmpf olt, %[[X]], %[[ZERO]] : f32
// CHECK-DAG: %[[R:.*]] = arith.select %[[NEG]], %[[S]], %[[X]] : f32
// CHECK: linalg.yield %[[R]] : f32
func.func @elu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.elu %x {alpha = 0.5 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// selu(x) = gamma * (x <= 0 ? alpha * expm1(x) : x)
// CHECK-LABEL: func.func @selu
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG: %[[ALPHA:.*]] = arith.constant 1.500000e+00 : f32
// CHECK-DAG: %[[GAMMA:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[EM1:.*]] = math.expm1 %[[X]] : f32
// CHECK-DAG: %[[S:.*]] = arith.mulf %[[EM1]], %[[ALPHA]] : f32
// CHECK-DAG: %[[NP:.*]] = arith.cmpf ole, %[[X]], %[[ZERO]] : f32
// CHECK-DAG: %[[Y:.*]] = arith.select %[[NP]], %[[S]], %[[X]] : f32
// CHECK-DAG: %[[R:.*]] = arith.mulf %[[Y]], %[[GAMMA]] : f32
// CHECK: linalg.yield %[[R]] : f32
func.func @selu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.selu %x {alpha = 1.5 : f32, gamma = 2.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// hard_sigmoid(x) = min(max(alpha * x + beta, 0), 1)
// CHECK-LABEL: func.func @hard_sigmoid
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG: %[[ALPHA:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-DAG: %[[BETA:.*]] = arith.constant 7.500000e-01 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[S:.*]] = arith.mulf %[[X]], %[[ALPHA]] : f32
// CHECK-DAG: %[[T:.*]] = arith.addf %[[S]], %[[BETA]] : f32
// CHECK-DAG: %[[LO:.*]] = arith.maximumf %[[T]], %[[ZERO]] : f32
// CHECK-DAG: %[[R:.*]] = arith.minimumf %[[LO]], %[[ONE]] : f32
// CHECK: linalg.yield %[[R]] : f32
func.func @hard_sigmoid(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.hard_sigmoid %x {alpha = 0.25 : f32, beta = 0.75 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Narrow floats compute the function in f32.
// CHECK-LABEL: func.func @sigmoid_bf16
// CHECK: ^bb0(%[[X:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK: math.exp %{{.*}} : f32
// CHECK: %[[R:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT: linalg.yield %[[R]] : bf16
func.func @sigmoid_bf16(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = nn.sigmoid %x : (tensor<4xbf16>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// CHECK-LABEL: func.func @neg
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: ^bb0(%[[I:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[S:.*]] = arith.subi %[[Z]], %[[I]] : i32
// CHECK-NEXT: linalg.yield %[[S]] : i32
func.func @neg(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %0 = nn.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = nn.neg %i : (tensor<4xi32>) -> tensor<4xi32>
  return %0, %1 : tensor<4xf32>, tensor<4xi32>
}

// -----

// abs: absf, absi, and nothing to do for unsigned integers.
// CHECK-LABEL: func.func @abs
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.absf %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: ^bb0(%[[I:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT: %[[A:.*]] = math.absi %[[I]] : i32
// CHECK-NEXT: linalg.yield %[[A]] : i32
// CHECK: ^bb0(%[[U:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT: linalg.yield %[[U]] : i32
func.func @abs(%x: tensor<4xf32>, %i: tensor<4xi32>, %u: tensor<4xui32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xui32>) {
  %0 = nn.abs %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = nn.abs %i : (tensor<4xi32>) -> tensor<4xi32>
  %2 = nn.abs %u : (tensor<4xui32>) -> tensor<4xui32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xi32>, tensor<4xui32>
}

// -----

// relu: maximumf, maxsi, and the identity for unsigned integers.
// CHECK-LABEL: func.func @relu
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[R:.*]] = arith.maximumf %[[X]], %[[Z]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: ^bb0(%[[I:.*]]: i8, %{{.*}}: i8):
// CHECK-NEXT: %[[ZI:.*]] = arith.constant 0 : i8
// CHECK-NEXT: %[[RI:.*]] = arith.maxsi %[[I]], %[[ZI]] : i8
// CHECK-NEXT: linalg.yield %[[RI]] : i8
// CHECK: ^bb0(%[[U:.*]]: i8, %{{.*}}: i8):
// CHECK-NEXT: linalg.yield %[[U]] : i8
func.func @relu(%x: tensor<4xf32>, %i: tensor<4xi8>, %u: tensor<4xui8>) -> (tensor<4xf32>, tensor<4xi8>, tensor<4xui8>) {
  %0 = nn.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = nn.relu %i : (tensor<4xi8>) -> tensor<4xi8>
  %2 = nn.relu %u : (tensor<4xui8>) -> tensor<4xui8>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xi8>, tensor<4xui8>
}

// -----

// sign(x) = x > 0 ? 1 : (x < 0 ? -1 : 0)
// CHECK-LABEL: func.func @sign_f32
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[M1:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-DAG: %[[POS:.*]] = arith.cmpf ogt, %[[X]], %[[Z]] : f32
// CHECK-DAG: %[[NEG:.*]] = arith.cmpf olt, %[[X]], %[[Z]] : f32
// CHECK-DAG: %[[S:.*]] = arith.select %[[NEG]], %[[M1]], %[[Z]] : f32
// CHECK-DAG: %[[R:.*]] = arith.select %[[POS]], %[[ONE]], %[[S]] : f32
// CHECK: linalg.yield %[[R]] : f32
func.func @sign_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.sign %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sign_i64
// CHECK: ^bb0(%[[X:.*]]: i64, %{{.*}}: i64):
// CHECK-DAG: %[[Z:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[M1:.*]] = arith.constant -1 : i64
// CHECK-DAG: %[[POS:.*]] = arith.cmpi sgt, %[[X]], %[[Z]] : i64
// CHECK-DAG: %[[NEG:.*]] = arith.cmpi slt, %[[X]], %[[Z]] : i64
// CHECK-DAG: %[[S:.*]] = arith.select %[[NEG]], %[[M1]], %[[Z]] : i64
// CHECK-DAG: %[[R:.*]] = arith.select %[[POS]], %[[ONE]], %[[S]] : i64
// CHECK: linalg.yield %[[R]] : i64
func.func @sign_i64(%x: tensor<4xi64>) -> tensor<4xi64> {
  %0 = nn.sign %x : (tensor<4xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// Unsigned sign compares with unsigned predicates.
// CHECK-LABEL: func.func @sign_ui8
// CHECK: ^bb0(%[[X:.*]]: i8, %{{.*}}: i8):
// CHECK-DAG: %[[Z:.*]] = arith.constant 0 : i8
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i8
// CHECK-DAG: %[[POS:.*]] = arith.cmpi ugt, %[[X]], %[[Z]] : i8
// CHECK-DAG: %[[NEG:.*]] = arith.cmpi ult, %[[X]], %[[Z]] : i8
// CHECK-DAG: %[[S:.*]] = arith.select %[[NEG]], %{{.*}}, %[[Z]] : i8
// CHECK-DAG: %[[R:.*]] = arith.select %[[POS]], %[[ONE]], %[[S]] : i8
// CHECK: linalg.yield %[[R]] : i8
func.func @sign_ui8(%x: tensor<4xui8>) -> tensor<4xui8> {
  %0 = nn.sign %x : (tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// CHECK-LABEL: func.func @not
// CHECK: ^bb0(%[[X:.*]]: i1, %{{.*}}: i1):
// CHECK-NEXT: %[[T:.*]] = arith.constant true
// CHECK-NEXT: %[[R:.*]] = arith.xori %[[X]], %[[T]] : i1
// CHECK-NEXT: linalg.yield %[[R]] : i1
func.func @not(%x: tensor<4xi1>) -> tensor<4xi1> {
  %0 = nn.not %x : (tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @sub
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: ^bb0(%[[I:.*]]: i32, %[[J:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT: %[[S:.*]] = arith.subi %[[I]], %[[J]] : i32
// CHECK-NEXT: linalg.yield %[[S]] : i32
func.func @sub(%x: tensor<4xf32>, %y: tensor<4xf32>, %i: tensor<4xi32>, %j: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %0 = nn.sub %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = nn.sub %i, %j : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0, %1 : tensor<4xf32>, tensor<4xi32>
}

// -----

// Float max/min propagate NaN (maximumf/minimumf).
// CHECK-LABEL: func.func @max_min_f32
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.maximumf %[[A]], %[[B]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: ^bb0(%[[C:.*]]: f32, %[[D:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.minimumf %[[C]], %[[D]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
func.func @max_min_f32(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = nn.max %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = nn.min %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @max_min_i32
// CHECK: arith.maxsi %{{.*}}, %{{.*}} : i32
// CHECK: arith.minsi %{{.*}}, %{{.*}} : i32
func.func @max_min_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %0 = nn.max %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = nn.min %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0, %1 : tensor<4xi32>, tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @max_min_ui32
// CHECK: arith.maxui %{{.*}}, %{{.*}} : i32
// CHECK: arith.minui %{{.*}}, %{{.*}} : i32
func.func @max_min_ui32(%x: tensor<4xui32>, %y: tensor<4xui32>) -> (tensor<4xui32>, tensor<4xui32>) {
  %0 = nn.max %x, %y : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  %1 = nn.min %x, %y : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  return %0, %1 : tensor<4xui32>, tensor<4xui32>
}

// -----

// CHECK-LABEL: func.func @pow_f32
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = math.powf %[[A]], %[[B]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @pow_f32(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.pow %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// f16 pow widens both operands to f32.
// CHECK-LABEL: func.func @pow_f16
// CHECK: ^bb0(%[[A:.*]]: f16, %[[B:.*]]: f16, %{{.*}}: f16):
// CHECK-DAG: %[[WA:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK-DAG: %[[WB:.*]] = arith.extf %[[B]] : f16 to f32
// CHECK: %[[P:.*]] = math.powf %[[WA]], %[[WB]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[P]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[R]] : f16
func.func @pow_f16(%x: tensor<4xf16>, %y: tensor<4xf16>) -> tensor<4xf16> {
  %0 = nn.pow %x, %y : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @pow_i32
// CHECK: ^bb0(%[[A:.*]]: i32, %[[B:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT: %[[R:.*]] = math.ipowi %[[A]], %[[B]] : i32
// CHECK-NEXT: linalg.yield %[[R]] : i32
func.func @pow_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = nn.pow %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Float mod (fmod = true) is C's fmod: the sign follows the dividend.
// CHECK-LABEL: func.func @fmod_f32
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.remf %[[A]], %[[B]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @fmod_f32(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.mod %x, %y {fmod = true} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Integer fmod is remsi of a divisor made safe (0 and -1 become 1: x % -1
// is 0 and the minimum's would trap), 0 where the divisor is 0.
// CHECK-LABEL: func.func @fmod_i32
// CHECK: ^bb0(%[[A:.*]]: i32, %[[B:.*]]: i32, %{{.*}}: i32):
// CHECK-DAG: %[[Z:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[ISZ:.*]] = arith.cmpi eq, %[[B]], %[[Z]] : i32
// CHECK-DAG: %[[ISM1:.*]] = arith.cmpi eq, %[[B]], %{{.*}} : i32
// CHECK-DAG: %[[EITHER:.*]] = arith.ori %{{.*}}, %{{.*}} : i1
// CHECK-DAG: %[[SAFE:.*]] = arith.select %[[EITHER]], %[[ONE]], %[[B]] : i32
// CHECK-DAG: %[[REM:.*]] = arith.remsi %[[A]], %[[SAFE]] : i32
// CHECK-DAG: %[[R:.*]] = arith.select %[[ISZ]], %[[Z]], %[[REM]] : i32
// CHECK: linalg.yield %[[R]] : i32
func.func @fmod_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = nn.mod %x, %y {fmod = true} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Signed mod with fmod = false is the floor mod: the remainder moves by the
// divisor when it is nonzero and its sign differs from the divisor's.
// CHECK-LABEL: func.func @floor_mod_i32
// CHECK: ^bb0(%[[A:.*]]: i32, %[[B:.*]]: i32, %{{.*}}: i32):
// CHECK-DAG: %[[Z:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[ISZ:.*]] = arith.cmpi eq, %[[B]], %[[Z]] : i32
// CHECK-DAG: %[[EITHER:.*]] = arith.ori %{{.*}}, %{{.*}} : i1
// CHECK-DAG: %[[SAFE:.*]] = arith.select %[[EITHER]], %[[ONE]], %[[B]] : i32
// CHECK: %[[REM:.*]] = arith.remsi %[[A]], %[[SAFE]] : i32
// CHECK-DAG: %[[Z2:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[NZ:.*]] = arith.cmpi ne, %[[REM]], %[[Z2]] : i32
// CHECK-DAG: %[[RNEG:.*]] = arith.cmpi slt, %[[REM]], %[[Z2]] : i32
// CHECK-DAG: %[[YNEG:.*]] = arith.cmpi slt, %[[SAFE]], %[[Z2]] : i32
// CHECK-DAG: %[[DIFF:.*]] = arith.xori %[[RNEG]], %[[YNEG]] : i1
// CHECK-DAG: %[[FIX:.*]] = arith.andi %[[NZ]], %[[DIFF]] : i1
// CHECK-DAG: %[[ADJ:.*]] = arith.addi %[[REM]], %[[SAFE]] : i32
// CHECK-DAG: %[[M:.*]] = arith.select %[[FIX]], %[[ADJ]], %[[REM]] : i32
// CHECK-DAG: %[[R:.*]] = arith.select %[[ISZ]], %[[Z]], %[[M]] : i32
// CHECK: linalg.yield %[[R]] : i32
func.func @floor_mod_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = nn.mod %x, %y {fmod = false} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Unsigned mod is remui (both fmod values agree for unsigned operands).
// CHECK-LABEL: func.func @mod_ui16
// CHECK: ^bb0(%[[A:.*]]: i16, %[[B:.*]]: i16, %{{.*}}: i16):
// CHECK-DAG: %[[Z:.*]] = arith.constant 0 : i16
// CHECK-DAG: %[[ISZ:.*]] = arith.cmpi eq, %[[B]], %[[Z]] : i16
// CHECK-DAG: %[[SAFE:.*]] = arith.select %[[ISZ]], %{{.*}}, %[[B]] : i16
// CHECK-DAG: %[[REM:.*]] = arith.remui %[[A]], %[[SAFE]] : i16
// CHECK-DAG: %[[R:.*]] = arith.select %[[ISZ]], %[[Z]], %[[REM]] : i16
// CHECK: linalg.yield %[[R]] : i16
// CHECK-NOT: arith.remsi
func.func @mod_ui16(%x: tensor<4xui16>, %y: tensor<4xui16>) -> tensor<4xui16> {
  %0 = nn.mod %x, %y {fmod = false} : (tensor<4xui16>, tensor<4xui16>) -> tensor<4xui16>
  return %0 : tensor<4xui16>
}

// -----

// CHECK-LABEL: func.func @logical
// CHECK: ^bb0(%[[A:.*]]: i1, %[[B:.*]]: i1, %{{.*}}: i1):
// CHECK-NEXT: %[[R:.*]] = arith.andi %[[A]], %[[B]] : i1
// CHECK: ^bb0(%[[C:.*]]: i1, %[[D:.*]]: i1, %{{.*}}: i1):
// CHECK-NEXT: %[[S:.*]] = arith.ori %[[C]], %[[D]] : i1
// CHECK: ^bb0(%[[E:.*]]: i1, %[[F:.*]]: i1, %{{.*}}: i1):
// CHECK-NEXT: %[[T:.*]] = arith.xori %[[E]], %[[F]] : i1
func.func @logical(%x: tensor<4xi1>, %y: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = nn.and %x, %y : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %1 = nn.or %x, %y : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %2 = nn.xor %x, %y : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// Float comparisons are ordered.
// CHECK-LABEL: func.func @compare_f32
// CHECK: outs(%{{.*}} : tensor<4xi1>)
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: i1):
// CHECK-NEXT: arith.cmpf oeq, %[[A]], %[[B]] : f32
// CHECK: arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK: arith.cmpf ole, %{{.*}}, %{{.*}} : f32
// CHECK: arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
// CHECK: arith.cmpf oge, %{{.*}}, %{{.*}} : f32
func.func @compare_f32(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = nn.equal %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = nn.less %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %2 = nn.less_equal %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %3 = nn.greater %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %4 = nn.greater_equal %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0, %1, %2, %3, %4 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @compare_i32
// CHECK: ^bb0(%[[A:.*]]: i32, %[[B:.*]]: i32, %{{.*}}: i1):
// CHECK-NEXT: arith.cmpi eq, %[[A]], %[[B]] : i32
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK: arith.cmpi sle, %{{.*}}, %{{.*}} : i32
// CHECK: arith.cmpi sgt, %{{.*}}, %{{.*}} : i32
// CHECK: arith.cmpi sge, %{{.*}}, %{{.*}} : i32
func.func @compare_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = nn.equal %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %1 = nn.less %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %2 = nn.less_equal %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %3 = nn.greater %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %4 = nn.greater_equal %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  return %0, %1, %2, %3, %4 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @compare_ui32
// CHECK: arith.cmpi eq, %{{.*}}, %{{.*}} : i32
// CHECK: arith.cmpi ult, %{{.*}}, %{{.*}} : i32
// CHECK: arith.cmpi ule, %{{.*}}, %{{.*}} : i32
// CHECK: arith.cmpi ugt, %{{.*}}, %{{.*}} : i32
// CHECK: arith.cmpi uge, %{{.*}}, %{{.*}} : i32
func.func @compare_ui32(%x: tensor<4xui32>, %y: tensor<4xui32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = nn.equal %x, %y : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
  %1 = nn.less %x, %y : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
  %2 = nn.less_equal %x, %y : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
  %3 = nn.greater %x, %y : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
  %4 = nn.greater_equal %x, %y : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
  return %0, %1, %2, %3, %4 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// Equal also takes booleans.
// CHECK-LABEL: func.func @equal_i1
// CHECK: arith.cmpi eq, %{{.*}}, %{{.*}} : i1
func.func @equal_i1(%x: tensor<4xi1>, %y: tensor<4xi1>) -> tensor<4xi1> {
  %0 = nn.equal %x, %y : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Where broadcasts all three operands; a 0-D operand reads ().
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @where
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[SCALAR]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK: ^bb0(%[[C:.*]]: i1, %[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.select %[[C]], %[[A]], %[[B]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @where(%c: tensor<2x4xi1>, %x: tensor<4xf32>, %y: tensor<f32>) -> tensor<2x4xf32> {
  %0 = nn.where %c, %x, %y : (tensor<2x4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Float casts: truncf narrows, extf widens; f16 <-> bf16 goes through f32.
// CHECK-LABEL: func.func @cast_floats
// CHECK: ^bb0(%[[A:.*]]: f32, %{{.*}}: f16):
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[A]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[T]] : f16
// CHECK: ^bb0(%[[B:.*]]: f16, %{{.*}}: f32):
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[B]] : f16 to f32
// CHECK-NEXT: linalg.yield %[[E]] : f32
// CHECK: ^bb0(%[[C:.*]]: f16, %{{.*}}: bf16):
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[C]] : f16 to f32
// CHECK-NEXT: %[[N:.*]] = arith.truncf %[[W]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[N]] : bf16
// CHECK: ^bb0(%[[D:.*]]: bf16, %{{.*}}: f16):
// CHECK-NEXT: %[[W2:.*]] = arith.extf %[[D]] : bf16 to f32
// CHECK-NEXT: %[[N2:.*]] = arith.truncf %[[W2]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[N2]] : f16
func.func @cast_floats(%x: tensor<4xf32>, %h: tensor<4xf16>, %b: tensor<4xbf16>) -> (tensor<4xf16>, tensor<4xf32>, tensor<4xbf16>, tensor<4xf16>) {
  %0 = nn.cast %x {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
  %1 = nn.cast %h {to = f32} : (tensor<4xf16>) -> tensor<4xf32>
  %2 = nn.cast %h {to = bf16} : (tensor<4xf16>) -> tensor<4xbf16>
  %3 = nn.cast %b {to = f16} : (tensor<4xbf16>) -> tensor<4xf16>
  return %0, %1, %2, %3 : tensor<4xf16>, tensor<4xf32>, tensor<4xbf16>, tensor<4xf16>
}

// -----

// Integer casts: the source's signedness picks extsi / extui; narrowing
// truncates; same width is the identity (bits kept).
// CHECK-LABEL: func.func @cast_ints
// CHECK: arith.extsi %{{.*}} : i8 to i32
// CHECK: arith.extui %{{.*}} : i8 to i32
// CHECK: arith.trunci %{{.*}} : i64 to i16
// CHECK: arith.trunci %{{.*}} : i64 to i16
// CHECK: ^bb0(%[[S:.*]]: i8, %{{.*}}: i8):
// CHECK-NEXT: linalg.yield %[[S]] : i8
// CHECK: arith.extui %{{.*}} : i1 to i32
func.func @cast_ints(%i8: tensor<4xi8>, %u8: tensor<4xui8>, %i64: tensor<4xi64>, %b: tensor<4xi1>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi16>, tensor<4xui16>, tensor<4xui8>, tensor<4xi32>) {
  %0 = nn.cast %i8 {to = i32} : (tensor<4xi8>) -> tensor<4xi32>
  %1 = nn.cast %u8 {to = i32} : (tensor<4xui8>) -> tensor<4xi32>
  %2 = nn.cast %i64 {to = i16} : (tensor<4xi64>) -> tensor<4xi16>
  %3 = nn.cast %i64 {to = ui16} : (tensor<4xi64>) -> tensor<4xui16>
  %4 = nn.cast %i8 {to = ui8} : (tensor<4xi8>) -> tensor<4xui8>
  %5 = nn.cast %b {to = i32} : (tensor<4xi1>) -> tensor<4xi32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi32>, tensor<4xi32>, tensor<4xi16>, tensor<4xui16>, tensor<4xui8>, tensor<4xi32>
}

// -----

// Float to integer: the target's signedness picks fptosi / fptoui.
// CHECK-LABEL: func.func @cast_float_to_int
// CHECK: arith.fptosi %{{.*}} : f32 to i32
// CHECK: arith.fptoui %{{.*}} : f32 to i8
// CHECK: arith.fptosi %{{.*}} : f16 to i64
func.func @cast_float_to_int(%x: tensor<4xf32>, %h: tensor<4xf16>) -> (tensor<4xi32>, tensor<4xui8>, tensor<4xi64>) {
  %0 = nn.cast %x {to = i32} : (tensor<4xf32>) -> tensor<4xi32>
  %1 = nn.cast %x {to = ui8} : (tensor<4xf32>) -> tensor<4xui8>
  %2 = nn.cast %h {to = i64} : (tensor<4xf16>) -> tensor<4xi64>
  return %0, %1, %2 : tensor<4xi32>, tensor<4xui8>, tensor<4xi64>
}

// -----

// Integer to float: sitofp for signed, uitofp for bool (true is 1.0, not -1.0).
// CHECK-LABEL: func.func @cast_int_to_float
// CHECK: arith.sitofp %{{.*}} : i32 to f32
// CHECK: arith.uitofp %{{.*}} : i1 to f32
// CHECK: arith.uitofp %{{.*}} : i1 to f16
func.func @cast_int_to_float(%i: tensor<4xi32>, %b: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf16>) {
  %0 = nn.cast %i {to = f32} : (tensor<4xi32>) -> tensor<4xf32>
  %1 = nn.cast %b {to = f32} : (tensor<4xi1>) -> tensor<4xf32>
  %2 = nn.cast %b {to = f16} : (tensor<4xi1>) -> tensor<4xf16>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf16>
}

// -----

// Integer to bool compares with zero.
// CHECK-LABEL: func.func @cast_int_to_bool
// CHECK: ^bb0(%[[A:.*]]: i64, %{{.*}}: i1):
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[R:.*]] = arith.cmpi ne, %[[A]], %[[Z]] : i64
// CHECK-NEXT: linalg.yield %[[R]] : i1
// CHECK: ^bb0(%[[U:.*]]: i8, %{{.*}}: i1):
// CHECK-NEXT: %[[ZU:.*]] = arith.constant 0 : i8
// CHECK-NEXT: %[[RU:.*]] = arith.cmpi ne, %[[U]], %[[ZU]] : i8
// CHECK-NEXT: linalg.yield %[[RU]] : i1
func.func @cast_int_to_bool(%x: tensor<4xi64>, %u: tensor<4xui8>) -> (tensor<4xi1>, tensor<4xi1>) {
  %0 = nn.cast %x {to = i1} : (tensor<4xi64>) -> tensor<4xi1>
  %1 = nn.cast %u {to = i1} : (tensor<4xui8>) -> tensor<4xi1>
  return %0, %1 : tensor<4xi1>, tensor<4xi1>
}
