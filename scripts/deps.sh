#!/usr/bin/env bash
# Installs the Debian 12 packages the engine needs to build, test and run. Run as root
# (or with sudo available); packages already installed are left alone.
set -euo pipefail

PACKAGES=(
  cmake g++ make pkg-config git ca-certificates
  liblua5.4-dev          # the scripting host
  libtorch-dev           # policy and training (CPU build)
  libopenblas-dev        # the reference for verification, and a yardstick
  libblis-dev liblapacke-dev libfftw3-dev libxsmm-dev  # the tasks' other yardsticks (docs/tasks.md)
  libgccjit-12-dev       # in-memory kernel compilation
  clang libclang-rt-14-dev  # libFuzzer, for the kernelc fuzz target
  libspdlog-dev libfmt-dev
  catch2                 # C++ tests
  nlohmann-json3-dev     # JSON in C++: configs, safetensors headers, tokenizer.json
  libsqlite3-dev         # the run store
  libreadline-dev        # the REPL
  libseccomp-dev         # the kernel sandbox
  libopenmpi-dev openmpi-bin  # benchmark workers as MPI ranks (mpirun)
  libgloo-dev            # data-parallel training ranks (libtorch's gloo process group)
  libpcre2-dev           # the tokenizer's pre-tokenizer pattern
  libicu-dev             # the tokenizer's NFC normaliser
  gnuplot-nox            # report plots
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "deps: run as root to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
