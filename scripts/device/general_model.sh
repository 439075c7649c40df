#!/usr/bin/env bash
# A model pretrained on the generated universe of tasks with a tokenizer that splits code
# below the line (Qwen2's pre-tokenizer pattern: words, numbers, punctuation runs), then
# asked for every held-out task of the suite and for tasks of the universe it never saw:
# what share of its kernels compile and verify (model_check.lua). Resumable like
# retrain_models.sh: the same command on a warm machine continues from the checkpoints.
#
#   (after gpu_build_and_test.sh's build step, TARGETS="engine engine-sandbox")
#   STEPS=4000 HIDDEN=384 LAYERS=6 bash scripts/device/general_model.sh OUT
set -uo pipefail
OUT=$(realpath "$1")
cd "$(dirname "$0")/../.."
PREFIX=/tmp/engine-deps
BUILD=${BUILD:-/tmp/engine-build}
RUNS=${RUNS:-/tmp/general}
export LD_LIBRARY_PATH=$PREFIX/usr/lib/x86_64-linux-gnu:$PREFIX/usr/lib/x86_64-linux-gnu/openblas-pthread
engine() { "$BUILD/engine" "$@"; }
mkdir -p "$RUNS"

resume=()
[ -d "$RUNS/pt" ] && resume=(--resume)
engine pretrain.lua --device=cuda --examples="${EXAMPLES:-60000}" --universe_share="${UNIVERSE:-0.5}" \
  --task_share="${TASKS:-0.2}" --pattern= --vocab_size="${VOCAB:-2048}" --max_len=2048 \
  --hidden="${HIDDEN:-384}" --layers="${LAYERS:-6}" --heads="${HEADS:-6}" --kv_heads=2 \
  --intermediate="${INTERMEDIATE:-1152}" --steps="${STEPS:-4000}" --micro_batch="${MICRO:-32}" \
  --save_every="${SAVE:-100}" --log_every=50 --lr="${LR:-1e-3}" --out="$RUNS/pt" --export="$RUNS/models/general" --overwrite "${resume[@]}" \
  2>&1 | tee -a "$OUT/pretrain.log" | grep -E "corpus|fitted|step=|exported|error" | tail -4
[ -f "$RUNS/models/general/model.safetensors" ] || { echo "not trained to the end yet: run again"; exit 0; }
[ "${AUDIT:-1}" = 0 ] || engine audit.lua "$RUNS/models/general" 2>&1 | tail -5 | tee "$OUT/audit.txt"

# What it writes for the held-out tasks (never in its corpus) and for matmul, on the GPU.
for task in ${CHECK_TASKS:-cholesky conv1d conv2d_3x3 fft lu_nopiv axpy matmul}; do
  engine model_check.lua --model="$RUNS/models/general" --device=cuda --task=$task ${TASK_DIR:+--task_dir=$TASK_DIR} --prompt=fixed \
    --n="${N:-16}" --max_tokens=1536 2>&1 | tail -3 | sed "s/^/$task: /" | tee -a "$OUT/model_check.txt"
done
tar -cf "$OUT/general.tar" -C "$RUNS/models" general
