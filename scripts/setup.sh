#!/usr/bin/env bash
# From a fresh Debian 12 machine to a finished run: installs the packages, builds the
# engine, and runs the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
# Experiment 1 on the default model (its small profile), the protocol's held-out
# comparison of its learned policies with the base model, then its report.
build/engine experiment1.lua --out=runs/experiment1 "$@"
# heldout.lua audits the model first: the shipped one's corpus holds no held-out item.
build/engine heldout.lua runs/experiment1 --out=runs/experiment1/heldout.json
exec build/engine report.lua runs/experiment1
