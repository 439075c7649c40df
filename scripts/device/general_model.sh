#!/usr/bin/env bash
# A model pretrained on the generated universe of tasks with a tokenizer that splits code
# below the line (Qwen2's pre-tokenizer pattern: words, numbers, punctuation runs), then
# asked for every task of the suite by split (model_check.lua --split=all: training tasks,
# held-out tasks, held-out wordings) and, with TASK_DIR, a user's own tasks. Resumable like
# retrain_models.sh: the same command on a warm machine continues from the checkpoints
# (STOP_AFTER=N stops at step N, TIME_LIMIT=S after S seconds of training, with a checkpoint,
# for a call that cannot finish).
#
#   (after gpu_build_and_test.sh's build step, TARGETS="engine engine-sandbox")
#   STEPS=4000 HIDDEN=384 LAYERS=6 bash scripts/device/general_model.sh OUT
#   env: EXAMPLES UNIVERSE TASKS KERNEL_NAMES (drawn, fixed) WORDINGS (share of prompts in drawn words) WORDING_VERSION (their framings' version; default the current) RENAMES (share of suite tasks under drawn names) VOCAB HIDDEN LAYERS HEADS INTERMEDIATE STEPS MICRO MICRO_TOKENS
#        TF32 LEAST_PADDING BATCH WARMUP SAVE LR TIME_LIMIT (seconds of training in this call)
#        STOP_AFTER AUDIT=0 N SPLIT TASK_DIR PROBE_DIR CHECKS BENCH=1 CORPUS_ONLY=1 PT (below) (the SFT step benchmark first)
set -uo pipefail
OUT=$(realpath "$1")
cd "$(dirname "$0")/../.."
. scripts/device/engine_env.sh
RUNS=${RUNS:-/tmp/general}
mkdir -p "$RUNS"

# BENCH=1: first the SFT step's three ways in one run (perf/train/sft_step_bench.sh) at this
# model's size: rows, a token budget, the budget with TF32.
if [ "${BENCH:-0}" = 1 ]; then
  perf/train/sft_step_bench.sh "$BUILD/engine" cuda 40 --hidden="${HIDDEN:-384}" --layers="${LAYERS:-6}" \
    --heads="${HEADS:-6}" --kv_heads=2 --intermediate="${INTERMEDIATE:-1152}" 2>&1 | tee "$OUT/sft_bench.txt"
fi

# CORPUS_ONLY=1 (on any machine with the engine built, e.g. BUILD=$PWD/build DEVICE=cpu here): the
# run's corpus alone, packed as OUT/pt.tar.xz (60,000 examples: 4 MB, two minutes the GPU
# machine then does not spend); PT=that file starts the run from it there. A run resumes
# only with its own settings, so a corpus built with other ones is refused, not trained on.
if [ -n "${PT:-}" ] && [ ! -d "$RUNS/pt" ]; then tar -xJf "$PT" -C "$RUNS"; fi
resume=()
[ -d "$RUNS/pt" ] && resume=(--resume)
corpus_only=()
[ "${CORPUS_ONLY:-0}" = 1 ] && corpus_only=(--corpus_only)
engine pretrain.lua --device="${DEVICE:-cuda}" --examples="${EXAMPLES:-60000}" --universe_share="${UNIVERSE:-0.5}" \
  --task_share="${TASKS:-0.2}" --kernel_names="${KERNEL_NAMES:-drawn}" --wording_share="${WORDINGS:-0}" ${WORDING_VERSION:+--wording_version=$WORDING_VERSION} --rename_share="${RENAMES:-0}" --pattern= --vocab_size="${VOCAB:-2048}" --max_len=2048 \
  --hidden="${HIDDEN:-384}" --layers="${LAYERS:-6}" --heads="${HEADS:-6}" --kv_heads=2 \
  --intermediate="${INTERMEDIATE:-1152}" --steps="${STEPS:-4000}" --micro_batch="${MICRO:-32}" \
  --micro_tokens="${MICRO_TOKENS:-0}" --least_padding="${LEAST_PADDING:-false}" --tf32="${TF32:-false}" --batch="${BATCH:-64}" --warmup="${WARMUP:-100}" \
  --save_every="${SAVE:-100}" --log_every=50 --lr="${LR:-1e-3}" --out="$RUNS/pt" --export="$RUNS/models/general" --overwrite --stop_after="${STOP_AFTER:-0}" --time_limit="${TIME_LIMIT:-0}" "${resume[@]}" "${corpus_only[@]}" \
  2>&1 | tee -a "$OUT/pretrain.log" | grep -E "corpus|fitted|step=|exported|error" | tail -4
if [ "${CORPUS_ONLY:-0}" = 1 ]; then
  tar -cJf "$OUT/pt.tar.xz" -C "$RUNS" pt && ls -la "$OUT/pt.tar.xz"
  exit 0
fi
[ -f "$RUNS/models/general/model.safetensors" ] || { echo "not trained to the end yet: run again"; exit 0; }
# The model comes back in parts under the 16 MiB a file the device returns, before the
# checks, so a call cut short by its limit still brings it.
[ -f "$OUT/general.tgz.part-aa" ] || { tar -czf /tmp/general.tgz -C "$RUNS/models" general &&
                                       split -b 15M /tmp/general.tgz "$OUT/general.tgz.part-"; }
[ "${AUDIT:-1}" = 0 ] || engine audit.lua "$RUNS/models/general" 2>&1 | tail -5 | tee "$OUT/audit.txt"

# What it writes for every task of the suite by split (training tasks, held-out tasks, the
# training tasks in a held-out wording) and, with TASK_DIR, for a user's own tasks, on the GPU;
# every kernel's verdict and text in kernels-*.jsonl.
check() {  # check NAME [model_check.lua options]
  local name=$1; shift
  engine model_check.lua --model="$RUNS/models/general" --device="${DEVICE:-cuda}" --prompt=fixed --n="${N:-16}" \
    --max_tokens=1536 --kernels="$OUT/kernels-$name.jsonl" "$@" 2>&1 | grep -v "^\[" | tee -a "$OUT/model_check.txt"
}
# CHECKS picks which of them run (default "suite user probe renamed"), so that a later call on
# a warm machine can run the rest: suite (--split=all), user (TASK_DIR), probe (PROBE_DIR: a
# training task under other names, whether the model copies one), renamed (the held-out splits
# with the function's name set aside, --rename_entry: the one function a kernel defines judged
# under the task's name, what the model computes apart from whether it copies the name it is
# given), prefill (the held-out splits, TASK_DIR and PROBE_DIR with the answer begun with the
# prototype line, --prefill: a diagnostic), fresh (new draws of the universe, no corpus's seed,
# less those whose statement the corpus holds, and the held-out tasks' nearest families:
# whether the model writes new instances of the kinds of computation it was shown).
CHECKS=${CHECKS:-"suite user probe renamed"}
wants() { [[ " $CHECKS " == *" $1 "* ]]; }
wants suite && check suite --split="${SPLIT:-all}" --json="$OUT/check.json"
if wants user && [ -n "${TASK_DIR:-}" ]; then
  check user --split=user --task_dir="$TASK_DIR" --json="$OUT/check-user.json"
fi
if wants probe && [ -n "${PROBE_DIR:-}" ]; then
  check probe --split=user --task_dir="$PROBE_DIR" --json="$OUT/check-probe.json"
fi
if wants renamed; then
  check heldout-renamed --split=heldout --rename_entry --json="$OUT/check-heldout-renamed.json"
  check wordings-renamed --split=wordings --rename_entry --json="$OUT/check-wordings-renamed.json"
fi
if wants fresh; then
  engine universe_tasks.lua --out="$RUNS/fresh" --corpus="$RUNS/pt/corpus.jsonl" | tail -1
  engine universe_tasks.lua --out="$RUNS/near" --seed=78 --draws=600 --count=16 --per_family=4 \
    --families=window,filter2d,ldlt,dft_blocks --corpus="$RUNS/pt/corpus.jsonl" | tail -1
  N=8 check fresh --split=user --task_dir="$RUNS/fresh" --json="$OUT/check-fresh.json"
  N=8 check near --split=user --task_dir="$RUNS/near" --json="$OUT/check-near.json"
fi
if wants prefill; then
  check heldout-prefill --split=heldout --prefill --json="$OUT/check-heldout-prefill.json"
  check wordings-prefill --split=wordings --prefill --json="$OUT/check-wordings-prefill.json"
  [ -z "${TASK_DIR:-}" ] || check user-prefill --split=user --task_dir="$TASK_DIR" --prefill --json="$OUT/check-user-prefill.json"
  [ -z "${PROBE_DIR:-}" ] || check probe-prefill --split=user --task_dir="$PROBE_DIR" --prefill --json="$OUT/check-probe-prefill.json"
fi
