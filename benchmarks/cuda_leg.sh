#!/usr/bin/env bash
# The version matrix's CUDA leg, on a GPU machine whose python3 already holds torch:
#
#   benchmarks/cuda_leg.sh OUT [WHEELS]
#
# WHEELS: a folder of wheels for what that python lacks (jsonschema and its needs),
# unpacked into a scratch folder. Each step has its own time limit, so the results that
# finished always reach OUT: version_matrix_cuda.json (the entry "X cuda" for
# benchmarks/results/version_matrix.json), inductor-cuda.json (the conformance
# report) and inductor-cuda-extra.tgz (its log and repros, or its journal if it stopped).
set -uo pipefail
out=${1:?usage: benchmarks/cuda_leg.sh OUT [WHEELS]}
wheels=${2:-}
device=${OPSPEC_LEG_DEVICE:-cuda}  # cpu only to try the script where there is no GPU
jobs=${OPSPEC_LEG_JOBS:-12}
cd "$(dirname "$0")/.."
mkdir -p "$out"
if [ -n "$wheels" ]; then
  site=$(mktemp -d)  # a fresh folder: nothing left there by an earlier run shadows the wheels
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" "$wheels"/*.whl || exit 1
  export PYTHONPATH=$site
fi
command -v nvidia-smi >/dev/null && nvidia-smi -L
export PYTHONUNBUFFERED=1
# each worker compiles its own kernels: a compile pool per worker would oversubscribe the cores
export TORCHINDUCTOR_COMPILE_THREADS=1
# synchronous launches: a device fault is charged to the call that made it, not to a later one
export CUDA_LAUNCH_BLOCKING=1
keep=$(mktemp -d)
leg() {  # leg SECONDS STEP...
  local limit=$1; shift
  python3 benchmarks/version_matrix.py --here --device "$device" --steps "$@" --workers "$jobs" --jobs "$jobs" \
    --step-timeout "$limit" --keep "$keep" --out "$out/version_matrix_$device.json"
}
leg "${OPSPEC_LEG_ROWS_S:-120}" special_cases
leg "${OPSPEC_LEG_INDUCTOR_S:-300}" inductor
leg "${OPSPEC_LEG_DECOMP_S:-150}" decompositions
cp "$keep/inductor-$device.json" "$out/" 2>/dev/null
(cd "$keep" && tar czf "$out/inductor-$device-extra.tgz" --exclude "inductor-$device.json" .)
python3 - "$out/version_matrix_$device.json" <<'EOF'
import json, sys
for key, entry in json.load(open(sys.argv[1]))["versions"].items():
    for step in ("special_cases", "inductor", "decompositions"):
        if step in entry:
            print(f"{key}: {step}: {entry[step]['summary']} ({entry[step].get('duration_s')} s)")
EOF
