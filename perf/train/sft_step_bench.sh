#!/usr/bin/env bash
# The SFT step of pretrain.lua five ways on one corpus, in one run: micro-batches of a fixed
# row count (the baseline), micro-batches cut by a token budget over length-sorted rows,
# that with TensorFloat-32 products, that cut where the least padding is computed
# (--least_padding), and that with WIDE examples a step instead of BATCH
# (what a wider step gains: a cost paid once a step, or padding, shared out). Prints each one's
# completion tokens a second over steps past the first STEPS/4 (start-up and allocator
# warm-up left out) and its ratio to the baseline, and the last loss (the first three must
# train alike).
#
#   perf/train/sft_step_bench.sh ENGINE [DEVICE] [STEPS] [extra pretrain.lua options...]
#   perf/train/sft_step_bench.sh build/engine cuda 40 --hidden=384 --layers=6 --heads=6
#   MICRO=8 BUDGET=8192 BATCH=32 WIDE=128 perf/train/sft_step_bench.sh build/engine cpu 8 ...
# BATCH (default 64) examples a step, WIDE (default 256) those of the last way;
# MICRO (default 32) rows a micro-batch in the baseline, BUDGET (default 65536) the tokens a
# micro-batch may hold with its padding in the other two: compare where the baseline cuts
# a step into several micro-batches, or both measure one and the same pass.
set -euo pipefail
ENGINE=$(realpath "$1"); DEVICE=${2:-cuda}; STEPS=${3:-40}; shift $(( $# < 3 ? $# : 3 ))
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$(dirname "$0")/../.."
common=(--device="$DEVICE" --examples=4000 --universe_share=0.6 --task_share=0.2 --pattern= --vocab_size=2048
        --max_len=2048 --steps="$STEPS" --warmup=5 --save_every=100000 --log_every=100000 "$@")
run() {  # name, options...
  local name=$1; shift
  "$ENGINE" scripts/experiments/pretrain.lua "${common[@]}" "$@" --out="$WORK/$name" \
    --export="$WORK/$name-model" >"$WORK/$name.log" 2>&1 || { cat "$WORK/$name.log"; exit 1; }
}
MICRO=${MICRO:-32}; BUDGET=${BUDGET:-65536}; BATCH=${BATCH:-64}; WIDE=${WIDE:-256}
run rows --batch="$BATCH" --micro_batch="$MICRO"
run budget --batch="$BATCH" --micro_batch="$MICRO" --micro_tokens="$BUDGET"
run budget_tf32 --batch="$BATCH" --micro_batch="$MICRO" --micro_tokens="$BUDGET" --tf32
run budget_tf32_wide --batch="$WIDE" --micro_batch="$MICRO" --micro_tokens="$BUDGET" --tf32
run budget_tf32_least --batch="$BATCH" --micro_batch="$MICRO" --micro_tokens="$BUDGET" --tf32 --least_padding
BENCH_DIR="$WORK" BENCH_STEPS="$STEPS" "$ENGINE" -e '
local json = require "engine.json"
local dir, steps = os.getenv("BENCH_DIR"), tonumber(os.getenv("BENCH_STEPS"))
local function figures(name)
  local tokens, seconds, last = 0, 0, nil
  for line in io.lines(dir .. "/" .. name .. "/metrics.jsonl") do
    local r = json.decode(line)
    if r.step and r.step > steps // 4 then tokens, seconds = tokens + r.tokens, seconds + r.seconds end
    if r.loss then last = r.loss end
  end
  return tokens / seconds, last
end
local base = figures("rows")
print(string.format("%-28s %14s %8s %10s", "SFT step", "tokens/s", "ratio", "last loss"))
for _, name in ipairs{"rows", "budget", "budget_tf32", "budget_tf32_wide", "budget_tf32_least"} do
  local rate, loss = figures(name)
  print(string.format("%-28s %14.0f %7.2fx %10.4f", name, rate, rate / base, loss))
end'
