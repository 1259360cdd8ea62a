#!/usr/bin/env bash
# Builds nnc's libFuzzer targets with clang, ASan and UBSan (in build-fuzz/),
# replays every input that once crashed them (test/Fuzz/regressions/<target>/),
# then fuzzes each target for FUZZ_SECONDS (default 60) from a seed corpus of
# ONNX's node tests and the bench models. Exits non-zero on any finding; the
# input that caused it is left in build-fuzz/findings/<target>/.
#   scripts/fuzz.sh [target ...]     (default: model tensor descriptor bind strings)
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_DIR=${FUZZ_DIR:-build-fuzz}
SECONDS_PER_TARGET=${FUZZ_SECONDS:-60}
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(model tensor descriptor bind strings)

if [ ! -f "$FUZZ_DIR/build.ninja" ]; then
  # -O1 and line tables: readable reports, and a build a third faster than -O2 -g.
  CC=clang-22 CXX=clang++-22 cmake -G Ninja -S . -B "$FUZZ_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -gline-tables-only -DNDEBUG" \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only -DNDEBUG" \
    -DNNC_SANITIZE=address,undefined -DNNC_FUZZ=ON -DNNC_BUILD_PYTHON=OFF > /dev/null
fi
# Quiet unless the build fails.
if ! ninja -C "$FUZZ_DIR" $(printf 'nnc-fuzz-%s ' "${TARGETS[@]}") > "$FUZZ_DIR/build.log" 2>&1; then
  tail -40 "$FUZZ_DIR/build.log"
  exit 1
fi

# Seeds: the bench models as the lit suite generates them (cached there).
BENCH_MODELS=${BENCH_MODELS:-build/models/opset17}
/usr/bin/python3 bench/gen_models.py --out "$BENCH_MODELS" --opset 17 > /dev/null
SEEDS="$FUZZ_DIR/corpus/seeds"
[ -d "$SEEDS/model" ] || /usr/bin/python3 test/Fuzz/make_corpus.py --out "$SEEDS" --bench "$BENCH_MODELS"

# Allocation failures are statuses the code must handle, not sanitizer
# reports; libFuzzer's own limits (-rss_limit_mb, -malloc_limit_mb) still
# report a single allocation or a process above 2 GiB.
export ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1
status=0
for target in "${TARGETS[@]}"; do
  binary="$FUZZ_DIR/bin/nnc-fuzz-$target"
  regressions="test/Fuzz/regressions/$target"
  findings="$FUZZ_DIR/findings/$target"
  corpus="$FUZZ_DIR/corpus/$target"
  rm -rf "$findings" && mkdir -p "$findings" "$corpus"
  if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
    echo "fuzz $target: replaying $(ls "$regressions" | wc -l) regression inputs"
    if ! "$binary" -rss_limit_mb=2048 -timeout=30 "$regressions"/* > "$findings/regressions.log" 2>&1; then
      echo "fuzz $target: a regression input fails again:"; tail -40 "$findings/regressions.log"
      status=1
      continue
    fi
  fi
  echo "fuzz $target: ${SECONDS_PER_TARGET}s"
  # New inputs go to the first folder, the working corpus; seeds are only read.
  folders=("$corpus")
  [ -d "$SEEDS/$target" ] && folders+=("$SEEDS/$target")
  # A fixed seed (FUZZ_SEED) makes a run repeatable on the same machine.
  if ! "$binary" -seed="${FUZZ_SEED:-1}" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout=30 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="$findings/" "${folders[@]}" \
      > "$findings/fuzz.log" 2>&1; then
    echo "fuzz $target: FOUND a failure (input in $findings/):"; grep -A40 "ERROR\|==ERROR\|runtime error\|FuzzBind\|FuzzDescriptor\|deadly signal\|out-of-memory\|timeout" "$findings/fuzz.log" | head -60
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$findings/fuzz.log" | tr '\n' ' '; echo
  fi
done
exit $status
