#!/usr/bin/env bash
# Several GPUs on one node: a policy and a trainer on the last GPU against cuda:0, the
# ranks' tests under NCCL, the main job with --device=cuda:1 and with --ranks=RANKS (one
# GPU a rank; default 2), a follower killed mid-run and the run resumed, and the paper's
# step on one GPU against several (perf/policy/ranks_bench.lua, BENCH_ARGS="--gpus=1,4").
# After gpu_build_and_test.sh's build step:
#
#   TARGETS="engine engine-sandbox train_tests" bash scripts/device/gpu_build_and_test.sh DEBS OUT build
#   bash scripts/device/ranks_job.sh OUT [steps]
#
# steps (default "devices ranks main kill bench"). MAIN_STEPS sizes the main job (10).
set -uo pipefail
OUT=$(realpath "$1")
STEPS=${2:-"devices ranks main kill bench"}
cd "$(dirname "$0")/../.."
. scripts/device/engine_env.sh
RANKS=${RANKS:-2}
has() { [[ " $STEPS " == *" $1 "* ]]; }
nvidia-smi -L | tee "$OUT/gpus.txt"

if has devices; then
  "$BUILD/tests/train/train_tests" "every CUDA device*" 2>&1 | tee "$OUT/devices.txt" | tail -4
  engine experiment1.lua --device=cuda:1 --steps=2 --seeds=1 --lr=3e-4 --out=/tmp/one-gpu1 2>&1 |
    tee "$OUT/cuda1.txt" | tail -3
fi

if has ranks; then
  for b in nccl gloo; do
    ENGINE_DIST_BACKEND=$b ENGINE_TEST_EXE=$BUILD/engine engine tests/lua/test_ranks.lua 2>&1 |
      tee "$OUT/ranks-$b.txt" | tail -2
  done
fi

# The main job (its small profile) on RANKS GPUs, one rank each, NCCL chosen by itself.
if has main; then
  /usr/bin/time -f "main job: %e s" "$BUILD/engine" --ranks="$RANKS" experiment1.lua --device=cuda \
    --steps="${MAIN_STEPS:-10}" --seeds=1 --out=/tmp/main$RANKS 2>&1 | tee "$OUT/main$RANKS.txt" | tail -5
  python3 scripts/device/count_samples.py /tmp/main$RANKS 32 | tee -a "$OUT/main$RANKS.txt"
fi

# A follower killed with -9 after the run's second committed step: rank 0 must end naming
# it, and --resume must complete the run with every step's samples exactly once.
if has kill; then
  run=(--ranks="$RANKS" experiment1.lua --device=cuda --steps=6 --seeds=1 --lr=3e-4 --out=/tmp/killed)
  "$BUILD/engine" "${run[@]}" >"$OUT/killed.txt" 2>&1 &
  leader=$!
  for _ in $(seq 600); do
    m=$(find /tmp/killed -name metrics.jsonl 2>/dev/null | head -1)
    [ -n "$m" ] && [ "$(wc -l <"$m")" -ge 2 ] && break
    sleep 0.5
  done
  follower=$(pgrep -P "$leader" -x engine | head -1)
  echo "killing follower $follower of leader $leader after $(wc -l <"$m") steps" | tee "$OUT/kill.txt"
  kill -9 "$follower"
  wait "$leader"
  echo "leader's exit status: $?" | tee -a "$OUT/kill.txt"
  grep -E "rank 1 \(pid $follower\)" "$OUT/killed.txt" | tee -a "$OUT/kill.txt"
  "$BUILD/engine" "${run[@]}" --resume 2>&1 | tee "$OUT/resumed.txt" | tail -3
  echo "resumed run's exit status: ${PIPESTATUS[0]}" | tee -a "$OUT/kill.txt"
  python3 scripts/device/count_samples.py /tmp/killed 32 6 | tee -a "$OUT/kill.txt"
fi

if has bench; then
  engine perf/policy/ranks_bench.lua ${BENCH_ARGS:-} 2>&1 | tee "$OUT/ranks-bench.txt"
fi
