#!/usr/bin/env bash
# From a fresh Debian 12 machine to a finished run: installs the packages, builds the
# engine, and runs the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
exec build/engine host_check.lua --out=runs/host-check "$@"
