#!/usr/bin/env bash
# Builds the engine on the GPU machine (Ubuntu 24.04, CUDA libtorch of its PyTorch) from a
# clean copy and runs the tests, the policy parity checks and the decode benchmark.
#
#   bash scripts/device/fetch_debs.sh .device/debs      # here, once: Debian packages
#   (on the GPU machine) bash scripts/device/gpu_build_and_test.sh DEBS OUT [steps]
#
# steps (default "build test parity bench"): build, test (ctest), timing (the evaluation's
# integrity tests that need free cores and its timing benchmarks), node (the whole method on
# this node: the main job at 256^3 on all cores with the policy on CUDA, a short SQD run,
# both reports, OpenBLAS measured fairly; NODE_STEPS and NODE_ITERATIONS size it), train (the GRPO step
# benchmark), yardstick (perf/bench/yardstick_bench.lua and the suite's table measured here),
# export (exports loaded by transformers/peft), pretrain (the default model:
# scripts/experiments/pretrain.lua on CUDA with PRETRAIN_ARGS, exported to OUT/small.tar),
# model_tasks (model_check.lua on every task of the suite for MODEL, default OUT/small.tar),
# cuda (tests/bench/test_cuda.lua and test_cuda_tasks.lua, which must find the GPU, its driver
# and NVRTC here, then perf/bench/cuda_tasks_bench.lua at the tasks' training sizes and
# perf/bench/cuda_judge_phases_bench.lua on two tasks),
# parity (transformers reference models of the Qwen2.5-Coder-0.5B/1.5B and Llama-3.2-1B configs), bench
# (Qwen2.5-Coder-14B config, batch 64, engine and transformers). Results go to OUT.
# QUICK=1 skips the runs without CUDA graphs; TARGETS="engine policy_bench ..." builds only
# those; CMAKE_ARGS is added to the configure command (-DBUILD_TESTING=OFF: no tests, which
# the machine cannot build anyway without clang for the fuzz target).
set -uo pipefail
DEBS=$(realpath "$1")
OUT=$(realpath "$2")
STEPS=${3:-"build test parity bench"}
cd "$(dirname "$0")/../.."
ROOT=$PWD
PREFIX=/tmp/engine-deps
BUILD=${BUILD:-/tmp/engine-build}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1

has() { [[ " $STEPS " == *" $1 "* ]]; }

if has build; then
  rm -rf "$PREFIX"
  mkdir -p "$PREFIX"
  for d in "$DEBS"/*.deb; do dpkg -x "$d" "$PREFIX"; done
  # What Debian's alternatives would link: -lblis and libblis.so.4 for the yardsticks.
  for so in libblis.so libblis.so.4; do
    [ -e "$PREFIX/usr/lib/x86_64-linux-gnu/blis-openmp/$so" ] && ln -sf "blis-openmp/$so" "$PREFIX/usr/lib/x86_64-linux-gnu/$so"
  done
fi
export PKG_CONFIG_PATH=$PREFIX/usr/lib/x86_64-linux-gnu/pkgconfig:$PREFIX/usr/share/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$PREFIX
# Only the engine's processes see the Debian libraries (python keeps the system's).
ENGINE_LIBS=$PREFIX/usr/lib/x86_64-linux-gnu:$PREFIX/usr/lib/x86_64-linux-gnu/openblas-pthread
export CPATH=$PREFIX/usr/include:$PREFIX/usr/include/x86_64-linux-gnu
export LIBRARY_PATH=$PREFIX/usr/lib/x86_64-linux-gnu
TORCH_PREFIX=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')

if has build; then
  export TORCH_CUDA_ARCH_LIST=9.0
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_RPATH_USE_LINK_PATH=ON \
    -DCMAKE_PREFIX_PATH="$PREFIX/usr;$TORCH_PREFIX" \
    -DGCCJIT="$PREFIX/usr/lib/gcc/x86_64-linux-gnu/12/libgccjit.so" \
    -DGCCJIT_INCLUDE="$PREFIX/usr/lib/gcc/x86_64-linux-gnu/12/include" -DENGINE_FUZZ=OFF ${CMAKE_ARGS:-} 2>&1 | tee "$OUT/configure.log" | tail -5
  LD_LIBRARY_PATH=$ENGINE_LIBS cmake --build "$BUILD" -j"$(nproc)" ${TARGETS:+--target $TARGETS} 2>&1 | tee "$OUT/build.log" | grep -E "error|FAILED" | head -30
  grep -q "FAILED" "$OUT/build.log" && { echo "build failed"; tail -40 "$OUT/build.log"; exit 1; }
  [ -n "${TARGETS:-}" ] || [ -x "$BUILD/engine" ] || { echo "build failed"; tail -40 "$OUT/build.log"; exit 1; }
  echo "build: ok"
fi

if has test; then
  (cd "$BUILD" && LD_LIBRARY_PATH=$ENGINE_LIBS ctest -j8 --timeout 600 --output-on-failure 2>&1 | tee "$OUT/ctest.log" | tail -8)
fi

# The whole method on this node, as a user runs it: sampling on the GPU, evaluation on
# all cores at the paper's 256^3, GRPO updates, reports (report.md without gnuplot, which
# the machine lacks), and OpenBLAS measured fairly against a plain C program.
if has node; then
  engine() { LD_LIBRARY_PATH=$ENGINE_LIBS "$BUILD/engine" "$@"; }
  RUNS=/tmp/node-runs && rm -rf $RUNS
  engine experiment1.lua --device=cuda --size=256 --steps=${NODE_STEPS:-30} --out=$RUNS/experiment1 2>&1 |
    tee "$OUT/experiment1.log" | grep -vE "^\s*$" | tail -6
  engine report.lua $RUNS/experiment1 2>&1 | tail -3
  engine experiment2.lua --device=cuda --size=256 --iterations=${NODE_ITERATIONS:-3} --out=$RUNS/experiment2 2>&1 |
    tee "$OUT/experiment2.log" | tail -4
  engine report.lua $RUNS/experiment2 2>&1 | tail -3
  for e in experiment1 experiment2; do
    cp $RUNS/$e/report/report.md "$OUT/$e-report.md"
    cat $RUNS/$e/*/metrics.jsonl > "$OUT/$e-metrics.jsonl"
  done
  engine perf/bench/reference_bench.lua 2>&1 | tee "$OUT/reference.txt"
fi

# The measurement itself on this node: the integrity tests that need cores of their own
# (CPU time counted from outside), then the timing benchmarks (discrimination of kernels
# 5/10/20% apart, control kernels' spread, the plain C floor; the clocks of the same calls
# and the per-call round trip; whether one CPU is noisier than the others). Needs TARGETS to include bench_tests and bench_test_sandbox.
if has timing; then
  (cd "$BUILD/tests/bench" && LD_LIBRARY_PATH=$ENGINE_LIBS ./bench_tests "[serial],no call is timed*,run-time CPU*,a kernel that knows*" 2>&1 \
    | tee "$OUT/timing-tests.txt" | grep -E -A6 "FAILED|^assertions|^All tests" | head -60)
  perf/bench/placement_floor.sh 2>&1 | tee "$OUT/placement.txt"
  LD_LIBRARY_PATH=$ENGINE_LIBS "$BUILD/engine" perf/bench/timing_bench.lua ${TIMING_ARGS:-} 2>&1 | tee "$OUT/timing.txt"
  LD_LIBRARY_PATH=$ENGINE_LIBS "$BUILD/engine" perf/bench/cpu_bound_bench.lua ${CPU_BOUND_ARGS:-} 2>&1 | tee "$OUT/cpu-bound.txt"
  [ -n "${SKIP_EVAL_BENCH:-}" ] || LD_LIBRARY_PATH=$ENGINE_LIBS "$BUILD/engine" perf/bench/eval_bench.lua --batch=32 2>&1 | tee "$OUT/eval.txt"
fi

# CUDA kernels on this node: the GPU, its driver and NVRTC found, kernels compiled in
# memory for it (the test asserts availability here instead of accepting its absence).
if has cuda; then
  ENGINE_EXPECT_CUDA=1 TEST_PROGRESS=1 LD_LIBRARY_PATH=$ENGINE_LIBS "$BUILD/engine" tests/bench/test_cuda.lua 2>&1 |
    tee "$OUT/cuda.txt"
  ENGINE_EXPECT_CUDA=1 TEST_PROGRESS=1 LD_LIBRARY_PATH=$ENGINE_LIBS "$BUILD/engine" tests/bench/test_cuda_tasks.lua 2>&1 |
    tee "$OUT/cuda-tasks.txt"
  LD_LIBRARY_PATH=$ENGINE_LIBS "$BUILD/engine" perf/bench/cuda_tasks_bench.lua --size=train 2>&1 |
    tee "$OUT/cuda-tasks-bench.txt"
  # where a judgement's second goes: Experiment 1's task and calls, and a task of small buffers
  for task in softmax_rows conv2d_3x3; do
    LD_LIBRARY_PATH=$ENGINE_LIBS "$BUILD/engine" perf/bench/cuda_judge_phases_bench.lua --task=$task --kernels=12 2>&1
  done | tee "$OUT/cuda-judge-phases.txt"
fi

# The tasks' yardsticks on this node: the DGEMM yardstick against a plain C program calling
# the fastest library, alternately; x reference between two configurations; the suite's table.
if has yardstick; then
  LD_LIBRARY_PATH=$ENGINE_LIBS "$BUILD/engine" perf/bench/yardstick_bench.lua ${YARDSTICK_ARGS:-} 2>&1 | tee "$OUT/yardstick.txt"
  LD_LIBRARY_PATH=$ENGINE_LIBS "$BUILD/engine" scripts/experiments/tasks.lua --measure 2>&1 | tee "$OUT/tasks.md"
fi

bench() { LD_LIBRARY_PATH=$ENGINE_LIBS "$BUILD/perf/policy/policy_bench" "$@"; }
if has parity; then
  MODELS=/tmp/parity-models
  bench attention 2>&1 | tee "$OUT/attention.jsonl"  # the fused decode kernel vs float64
  for m in tests/policy/fixtures/tiny_qwen2 tests/policy/fixtures/tiny_llama; do
    for dt in fp32 bf16; do bench parity "$m" --device cuda --dtype "$dt"; done
  done 2>&1 | tee "$OUT/parity.jsonl"
  python3 scripts/device/make_reference.py parity "$MODELS" 2>&1 | grep -v -E "it/s|Loading|Writing"
  for m in "$MODELS"/*; do
    for dt in fp32 bf16; do
      bench parity "$m" --device cuda --dtype "$dt"
    done
    [ -n "${QUICK:-}" ] || bench parity "$m" --device cuda --dtype bf16 --graphs 0
  done 2>&1 | tee -a "$OUT/parity.jsonl"
fi

if has bench; then
  CFG=perf/policy/configs/qwen2.5-coder-14b.json
  TMPCFG=/tmp/qwen14b && mkdir -p $TMPCFG && cp $CFG $TMPCFG/config.json
  python3 scripts/device/hf_decode_bench.py $TMPCFG 64 128 256 2>&1 | grep -v Warning | tee "$OUT/bench.jsonl"
  bench decode $CFG --batch 64 --prompt 128 --tokens 256 --device cuda --dtype bf16 2>&1 | tee -a "$OUT/bench.jsonl"
  [ -n "${QUICK:-}" ] || bench decode $CFG --batch 64 --prompt 128 --tokens 256 --device cuda --dtype bf16 --graphs 0 2>&1 | tee -a "$OUT/bench.jsonl"
fi

# Training: one GRPO step at the 14B scale (bf16, LoRA r 32), the engine (every block
# recomputed at micro-batch 8; none at 2 and 3) against the same step in plain and tuned
# PyTorch (data/train/README.md); the engine's exports loaded by transformers and peft.
if has train; then
  CFG=perf/policy/configs/qwen2.5-coder-14b.json
  for a in "--micro 8" "--micro 2 --checkpoint 0" "--micro 3 --checkpoint 0"; do
    LD_LIBRARY_PATH=$ENGINE_LIBS "$BUILD/perf/train/train_bench" $CFG --device cuda --dtype bf16 \
      --completions 64 --tokens 1024 --prompt 128 --lora 32 --steps 2 $a 2>&1 | tee -a "$OUT/train.jsonl"
  done
  for a in "--micro 8" "--micro 2 --tuned --checkpoint none" "--micro 3 --tuned --checkpoint none"; do
    python3 scripts/device/grpo_step_bench.py $CFG --steps 2 $a 2>&1 | grep -v Warning | tee -a "$OUT/train.jsonl"
  done
fi
if has export; then
  WORK=/tmp/export-check && rm -rf $WORK && mkdir -p $WORK
  LD_LIBRARY_PATH=$ENGINE_LIBS "$BUILD/engine" tests/train/export_roundtrip.lua $WORK 2>&1 | tail -2
  python3 scripts/device/check_export.py $WORK 2>&1 | grep -v Warning | tee "$OUT/export.json"
fi

# The default model: corpus, tokenizer and SFT from scratch on the GPU; the export and the
# loss curve come back in OUT (the checkpoints stay behind: the export is the product).
if has pretrain; then
  LD_LIBRARY_PATH=$ENGINE_LIBS "$BUILD/engine" scripts/experiments/pretrain.lua --device=cuda \
    --out=/tmp/pretrain --export="$OUT/small" --overwrite ${PRETRAIN_ARGS:-} 2>&1 | tee "$OUT/pretrain.log"
  cp /tmp/pretrain/metrics.jsonl "$OUT/pretrain-metrics.jsonl" 2>/dev/null
  # at most 8 files come back from the machine: the model travels as one archive
  tar -C "$OUT" -cf "$OUT/small.tar" small && rm -rf "$OUT/small"
fi

# What a model writes for every task of the suite (the training tasks and the held-out
# ones): model_check.lua's first fixed prompt, 16 samples each, the policy on CUDA and the
# kernels on all cores. MODEL: a directory, or the archive the pretrain step wrote.
if has model_tasks; then
  MODEL=${MODEL:-$OUT/small.tar}
  if [[ $MODEL == *.tar ]]; then mkdir -p /tmp/model-tasks && tar -C /tmp/model-tasks -xf "$MODEL" && MODEL=/tmp/model-tasks/small; fi
  names=$(LD_LIBRARY_PATH=$ENGINE_LIBS "$BUILD/engine" -e 'for _, t in ipairs(bench.tasks()) do print(t.name) end')
  for name in $names; do
    LD_LIBRARY_PATH=$ENGINE_LIBS "$BUILD/engine" scripts/experiments/model_check.lua --model="$MODEL" --device=cuda \
      --task="$name" --prompt=fixed --n=16 --max_tokens=768 2>&1 | grep -vE "^\["
  done 2>&1 | tee "$OUT/model-tasks.txt"
fi
