#!/usr/bin/env bash
# Builds a folder that benchmarks nnc's CUDA target against PyTorch on a GPU
# machine which cannot build nnc itself: the bench models compiled with
# -target=cuda, their test data, nnc-run with the runtime and the libraries
# it links, and run.sh, which checks every model against its reference,
# times nnc and PyTorch's CUDA-graph replay (bench/torch_cuda.py) in the
# same run and prints the ratios. With --batch N the models are exported with a
# symbolic batch, compiled at batch N (--dim batch=N) and timed on random
# inputs (their test data is at batch 1), PyTorch at the same batch. With
# --precision tf32 (or bf16) the models are compiled with that --precision
# and compared with PyTorch's TF32 replay (bf16: no PyTorch peer is timed).
#
#   bench/cuda-bundle.sh OUT [--models a,b] [--cuda-arch sm_80,sm_90] [--batch N]
#                            [--precision f32|tf32|bf16]
#   (on the GPU machine)  OUT/run.sh [--runs N]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: bench/cuda-bundle.sh OUT [--models a,b] [--cuda-arch LIST]}
shift
MODELS=mlp_b1,mlp_b64,gpt_block,transformer_encoder,unet_small,mobilenet_v2,resnet18
ARCH=sm_80,sm_90
BATCH=
PRECISION=f32
while [ $# -gt 0 ]; do
  case "$1" in
    --precision) PRECISION=$2; shift 2 ;;
    --models) MODELS=$2; shift 2 ;;
    --cuda-arch) ARCH=$2; shift 2 ;;
    --batch) BATCH=$2; shift 2 ;;
    *) echo "cuda-bundle.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
BUILD_DIR=${BUILD_DIR:-build}
[ -x "$BUILD_DIR/bin/nnc" ] || { echo "cuda-bundle.sh: build nnc first (scripts/build.sh)" >&2; exit 2; }
mkdir -p "$OUT/models" "$OUT/lib"
if [ -z "$BATCH" ]; then
  SRC=$BUILD_DIR/models/opset17
  /usr/bin/python3 bench/gen_models.py --out "$SRC" --opset 17 --models "$MODELS" > /dev/null
else
  SRC=$BUILD_DIR/models/opset17-dynamic
  /usr/bin/python3 bench/gen_models.py --out "$SRC" --opset 17 --models "$MODELS" \
    --dynamic-batch > /dev/null
fi
for m in ${MODELS//,/ }; do
  echo "cuda-bundle: compiling $m${BATCH:+ at batch $BATCH}"
  "$BUILD_DIR/bin/nnc" "$SRC/$m/model.onnx" -target=cuda --cuda-arch="$ARCH" \
    ${BATCH:+--dim=batch=$BATCH} --precision="$PRECISION" -o "$OUT/models/$m.so"
  rm -rf "$OUT/models/$m.data"
  [ -n "$BATCH" ] || cp -r "$SRC/$m/test_data_set_0" "$OUT/models/$m.data"
done
cp "$BUILD_DIR/bin/nnc-run" "$OUT/"
# The runtime and what nnc-run links beyond the C and C++ libraries.
ldd "$BUILD_DIR/bin/nnc-run" | awk '/=> \// {print $3}' |
  grep -E 'libnnc_runtime|libprotobuf|libonnx_proto|libz\.' | xargs -I{} cp {} "$OUT/lib/"
cp bench/torch_cuda.py bench/gen_models.py "$OUT/"
cat > "$OUT/run.sh" <<RUN
#!/usr/bin/env bash
# nnc's CUDA target against PyTorch on this machine's GPU (see cuda-bundle.sh).
set -uo pipefail
cd "\$(dirname "\$0")"
export LD_LIBRARY_PATH=\$PWD/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
RUNS=200
[ "\${1:-}" = "--runs" ] && RUNS=\$2
status=0
for m in ${MODELS//,/ }; do
  data=
  [ -d models/\$m.data ] && data="--test-data models/\$m.data"
  ./nnc-run models/\$m.so --device=cuda \$data --bench \$RUNS --warmup 20 \\
    > models/\$m.log 2>&1 || status=1
  echo "nnc \$m: \$(grep -E 'max abs error|FAIL|error' models/\$m.log | head -1 | sed 's/.*: max/max/') | \$(grep -o 'median [0-9.]* [mu]*s' models/\$m.log)"
done
PYTHONUNBUFFERED=1 python3 torch_cuda.py --models $MODELS --runs \$RUNS ${BATCH:+--batch $BATCH} 2>&1 | grep -v Warning | tee torch.log
python3 - $MODELS $PRECISION <<'PY'
import re, sys
def ms(text):
    v, unit = re.search(r"median ([0-9.]+) (us|ms|s)", text).groups()
    return float(v) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]
torch = {}
for line in open("torch.log"):
    m = re.match(r"(\S+)\s+batch\s+\d+\s+(f32|tf32)\s+median\s+([0-9.]+).*with copies\s+([0-9.]+)", line)
    if m:
        torch[(m.group(1), m.group(2))] = (float(m.group(3)), float(m.group(4)))
# nnc's run copies the input in and the output out: the second ratio is
# against PyTorch doing the same around its replay.
precision = sys.argv[2]
print(f"nnc --precision={precision} against PyTorch {precision if precision != 'bf16' else '(none timed at bf16)'}")
print(f"{'model':20s} {'nnc ms':>9s} {'torch':>10s} {'ratio':>6s} {'+copies':>9s} {'ratio':>6s}")
for name in sys.argv[1].split(","):
    try:
        nnc = ms(open(f"models/{name}.log").read())
    except (AttributeError, OSError):
        print(f"{name:20s} (no nnc time)"); continue
    t = torch.get((name, precision))
    print(f"{name:20s} {nnc:9.4f} {t[0]:10.4f} {nnc / t[0]:6.2f} {t[1]:9.4f} {nnc / t[1]:6.2f}"
          if t else f"{name:20s} {nnc:9.4f}")
PY
exit \$status
RUN
chmod +x "$OUT/run.sh"
echo "cuda-bundle: $(du -sh "$OUT" | cut -f1) in $OUT; on the GPU machine run $OUT/run.sh"
