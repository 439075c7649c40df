#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (C++, Lua and end to end).
# The last lines printed are CTest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 1200
