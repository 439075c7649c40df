#!/usr/bin/env bash
# Configures and builds the engine into build/ (the one build directory every command uses).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
