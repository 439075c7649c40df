#!/usr/bin/env bash
# The default models retrained on the current corpus version, both at once on two GPUs
# (one each; on one GPU they run one after the other), with the settings each model's
# README records, then audited (scripts/experiments/audit.lua) and packed into OUT as
# small.tar and small-cuda.tar. A whole run takes about 9 minutes on two H200s, longer
# than one device call may run: a call stopped part-way leaves checkpoints every 500
# steps, and the same command on the same (still warm) machine resumes from them.
#
#   (after gpu_build_and_test.sh's build step, TARGETS="engine engine-sandbox")
#   bash scripts/device/retrain_models.sh OUT
set -uo pipefail
OUT=$(realpath "$1")
cd "$(dirname "$0")/../.."
. scripts/device/engine_env.sh
RUNS=${RUNS:-/tmp/retrain}
gpus=$(nvidia-smi -L | wc -l)
mkdir -p "$RUNS"

# name, GPU, the options of its models/NAME/README.md
train() {
  local name=$1 gpu=$2
  shift 2
  local resume=()
  [ -d "$RUNS/pt-$name" ] && resume=(--resume)
  CUDA_VISIBLE_DEVICES=$gpu "$BUILD/engine" pretrain.lua --device=cuda "$@" --save_every=500 \
    --out="$RUNS/pt-$name" --export="$RUNS/models/$name" --overwrite "${resume[@]}" \
    >>"$OUT/pt-$name.log" 2>&1
  echo "$name: exit status $?" | tee -a "$OUT/retrain.txt"
}
small=(--examples=60000 --task_share=0.3 --steps=6000 --micro_batch=64 --log_every=1000)
cuda=(--examples=60000 --task_share=0.2 --cuda_share=0.4 --steps=6000 --micro_batch=64 --log_every=500)
if [ "$gpus" -ge 2 ]; then
  train small 0 "${small[@]}" &
  train small-cuda 1 "${cuda[@]}" &
  wait
else
  train small 0 "${small[@]}"
  train small-cuda 0 "${cuda[@]}"
fi
for name in small small-cuda; do
  [ -f "$RUNS/models/$name/model.safetensors" ] || continue
  "$BUILD/engine" audit.lua "$RUNS/models/$name" 2>&1 | tail -4 | tee -a "$OUT/retrain.txt"
  tar -cf "$OUT/$name.tar" -C "$RUNS/models" "$name"
done
