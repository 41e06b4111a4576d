#!/usr/bin/env bash
# Inductor's every-dtype CUDA report, on a GPU machine whose python3 already holds torch:
#
#   benchmarks/cuda_report.sh OUT [WHEELS]
#
# Runs `opspec conform --backend inductor --device cuda --isolate --dtypes all`, one
# worker per core, and leaves in OUT the report (inductor-cuda.json) and its log.
# WHEELS: a folder of wheels for what that python lacks (jsonschema and its needs, and
# the Hypothesis that constraints.txt pins, so cases draw what they draw on CPU).
#
# A GPU machine may be lent in calls of bounded length: OPSPEC_REPORT_STOP_S stops the
# run that many seconds in, leaving the finished cases in OUT/inductor-cuda.jsonl (a
# journal); OPSPEC_REPORT_RESUME=that journal runs only the rest in a later call.
# OPSPEC_LEG_DEVICE=cpu and OPSPEC_REPORT_OPS=GLOB try the script where there is no GPU.
set -uo pipefail
out=$(realpath -m "${1:?usage: benchmarks/cuda_report.sh OUT [WHEELS]}")
wheels=${2:-}
device=${OPSPEC_LEG_DEVICE:-cuda}
python=${PYTHON:-python3}
cd "$(dirname "$0")/.."
mkdir -p "$out"
if [ -n "$wheels" ]; then
  site=$(mktemp -d)  # a fresh folder: nothing left there by an earlier run shadows the wheels
  "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" "$wheels"/*.whl || exit 1
  export PYTHONPATH=$site
fi
# the tree's src first; the unpacked wheels after it
export PYTHONPATH=$PWD/src${PYTHONPATH:+:$PYTHONPATH}
command -v nvidia-smi >/dev/null && nvidia-smi -L
export PYTHONUNBUFFERED=1
# each worker compiles its own kernels: a compile pool per worker would oversubscribe the cores
export TORCHINDUCTOR_COMPILE_THREADS=1
# synchronous launches: a device fault is charged to the call that made it, not to a later one
export CUDA_LAUNCH_BLOCKING=1
work=$(mktemp -d)
report=$work/inductor-$device.json
args=(--backend inductor --device "$device" --isolate --dtypes all -j "${OPSPEC_REPORT_JOBS:-$(nproc)}" --report "$report")
[ -n "${OPSPEC_REPORT_RESUME:-}" ] && args+=(--resume "$(realpath "$OPSPEC_REPORT_RESUME")")
[ -n "${OPSPEC_REPORT_OPS:-}" ] && args+=(--ops "$OPSPEC_REPORT_OPS")
# timeout 0 sets no limit; on TERM the journal keeps every case finished so far
timeout "${OPSPEC_REPORT_STOP_S:-0}" "$python" -m opspec conform "${args[@]}" >"$out/inductor-$device.log" 2>&1
status=$?
tail -n 25 "$out/inductor-$device.log"
if [ -f "$report" ]; then
  cp "$report" "$out/"
  echo "report: $out/inductor-$device.json (conform exit $status)"
elif [ -f "${report%.json}.jsonl" ]; then
  cp "${report%.json}.jsonl" "$out/"
  echo "stopped (exit $status): $(($(wc -l <"${report%.json}.jsonl") - 1)) cases in $out/inductor-$device.jsonl; resume with OPSPEC_REPORT_RESUME"
  exit 3
else
  echo "no report and no journal (conform exit $status)"
  exit 1
fi
