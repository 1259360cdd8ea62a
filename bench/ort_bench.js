#!/usr/bin/env node
// ONNX Runtime's side of the benchmark: the counterpart of
// `nnc-run MODEL.so --test-data DIR --bench N --warmup W --threads T`.
//
//   node ort_bench.js MODEL.onnx TEST_DATA_DIR RUNS WARMUP THREADS
//
// Loads the model with onnxruntime-node (CPU), feeds the test data set's
// inputs, runs WARMUP untimed and RUNS timed inferences, and prints one line of
// JSON: {"median_ms": ..., "min_ms": ..., "runs": ..., "ort": "<version>"}.
// Each run is timed around `await session.run()`, as an application calls it.

'use strict';

const fs = require('fs');
const path = require('path');

let ort;
try {
  ort = require('onnxruntime-node');
} catch (e) {
  console.error('ort_bench.js: onnxruntime-node is not installed; bench/run.sh installs it');
  process.exit(2);
}

// --- A minimal TensorProto reader: the fields numpy_helper.from_array writes.

// TensorProto.DataType -> [ORT type, typed array, bytes per element].
const DTYPES = {
  1: ['float32', Float32Array, 4],
  6: ['int32', Int32Array, 4],
  7: ['int64', BigInt64Array, 8],
  9: ['bool', Uint8Array, 1],
  11: ['float64', Float64Array, 8],
};

function readVarint(buf, pos) {
  let value = 0n;
  let shift = 0n;
  for (;;) {
    const byte = buf[pos++];
    value |= BigInt(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return [value, pos];
    shift += 7n;
  }
}

// Returns an ort.Tensor from a serialized TensorProto with raw_data.
function readTensor(file) {
  const buf = fs.readFileSync(file);
  const dims = [];
  let dataType = 0;
  let raw = null;
  let pos = 0;
  while (pos < buf.length) {
    let key;
    [key, pos] = readVarint(buf, pos);
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) { // varint: dims (unpacked) or data_type
      let v;
      [v, pos] = readVarint(buf, pos);
      if (field === 1) dims.push(Number(v));
      if (field === 2) dataType = Number(v);
    } else if (wire === 2) { // length-delimited: packed dims, name, raw_data, ...
      let len;
      [len, pos] = readVarint(buf, pos);
      const end = pos + Number(len);
      if (field === 1) {
        while (pos < end) {
          let v;
          [v, pos] = readVarint(buf, pos);
          dims.push(Number(v));
        }
      } else if (field === 9) {
        raw = buf.subarray(pos, end);
      }
      pos = end;
    } else if (wire === 5) {
      pos += 4;
    } else if (wire === 1) {
      pos += 8;
    } else {
      throw new Error(`${file}: not a TensorProto (wire type ${wire})`);
    }
  }
  const dtype = DTYPES[dataType];
  if (!dtype) throw new Error(`${file}: unsupported TensorProto data type ${dataType}`);
  if (!raw) throw new Error(`${file}: tensor without raw_data (typed data fields are not read)`);
  // Copy into a fresh, aligned buffer: raw_data sits at any offset in the file.
  const bytes = new Uint8Array(raw);
  const data = new dtype[1](bytes.buffer, 0, bytes.length / dtype[2]);
  return new ort.Tensor(dtype[0], data, dims);
}

async function main() {
  const [modelPath, dataDir, runsArg, warmupArg, threadsArg] = process.argv.slice(2);
  const runs = Number(runsArg);
  const warmup = Number(warmupArg);
  const threads = Number(threadsArg);
  if (!modelPath || !dataDir || !(runs >= 1) || !(warmup >= 0) || !(threads >= 1)) {
    console.error('usage: node ort_bench.js MODEL.onnx TEST_DATA_DIR RUNS WARMUP THREADS');
    process.exit(2);
  }

  // One intra-op pool of THREADS threads, nothing else running in parallel:
  // the same resources nnc's runtime gets with --threads THREADS.
  const session = await ort.InferenceSession.create(modelPath, {
    executionProviders: ['cpu'],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  session.inputNames.forEach((name, i) => {
    feeds[name] = readTensor(path.join(dataDir, `input_${i}.pb`));
  });

  for (let i = 0; i < warmup; ++i) await session.run(feeds);
  const ms = [];
  for (let i = 0; i < runs; ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const n = ms.length;
  const median = n % 2 ? ms[(n - 1) / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  console.log(JSON.stringify({ median_ms: median, min_ms: ms[0], runs: n, ort: ort.env.versions.common }));
  await session.release();
}

main().catch((e) => {
  console.error(`ort_bench.js: ${e.message}`);
  process.exit(2);
});
