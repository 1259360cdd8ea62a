#!/usr/bin/env bash
# nnc against ONNX Runtime on the bench models, in one command:
#
#   bench/run.sh [--quick | --long] [--set wide] [--only mlp_b1,resnet18] [--threads 1,2] ...
#
# --set wide benches the bench CNNs and the encoder at other shapes and
# torchvision's classifiers of other families instead of the bench set.
# Options go to bench.py (bench/bench.py --help lists them). The default run
# takes about 3.5 minutes on 2 cores; --quick about 1. It builds nothing: nnc,
# nnc-run and nnc-peak come from the build in build/ (or $BUILD_DIR, as for
# scripts/build.sh). It installs ONNX Runtime into bench/node_modules and
# generates the bench models into BUILD/models/opset17 when they are missing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "$here/.." && realpath -m "${BUILD_DIR:-build}")"
python=/usr/bin/python3 # Debian's: it has python3-torch and python3-onnx

die() {
  echo "bench/run.sh: $*" >&2
  exit 2
}

for tool in nnc nnc-run nnc-peak; do
  [[ -x "$build/bin/$tool" ]] || die "$build/bin/$tool is missing: build nnc first (scripts/build.sh)"
done
command -v node >/dev/null && command -v npm >/dev/null ||
  die "node and npm are needed to run ONNX Runtime (apt-get install nodejs npm)"
"$python" -c 'import onnx, torch' 2>/dev/null ||
  die "$python lacks onnx or torch (scripts/setup.sh installs them)"

# ONNX Runtime, pinned in package.json and package-lock.json. Its postinstall
# script would fetch a CUDA add-on (and fail without that host); the CPU build
# ships inside the package, so the fetch is skipped.
if ! (cd "$here" && node -e 'require("onnxruntime-node")' 2>/dev/null); then
  echo "bench/run.sh: installing onnxruntime-node into bench/node_modules" >&2
  (cd "$here" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund >&2) ||
    die "npm could not install onnxruntime-node (is the npm registry reachable?)"
fi

# The bench set's models are shared with the lit tests, which generate the
# same set; gen_models.py skips every model whose stamp is current.
set_name=bench
args=("$@")
for i in "${!args[@]}"; do
  if [[ "${args[$i]}" == --set ]]; then set_name="${args[$((i + 1))]:-}"; fi
  if [[ "${args[$i]}" == --set=* ]]; then set_name="${args[$i]#--set=}"; fi
done
case "$set_name" in
bench) models="$build/models/opset17" ;;
wide) models="$build/models/wide17" ;;
*) die "unknown --set '$set_name' (bench or wide)" ;;
esac
"$python" "$here/gen_models.py" --out "$models" --opset 17 --set "$set_name" >&2

exec "$python" "$here/bench.py" --bin "$build/bin" --models "$models" --work "$build/benchmarks" "$@"
