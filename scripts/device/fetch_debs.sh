#!/usr/bin/env bash
# Downloads (here, on Debian 12) the packages the GPU machine lacks to build the engine,
# into DEST (default .device/debs, git-ignored), without the static libraries of the
# -dev packages; gpu_build_and_test.sh unpacks them there.
set -euo pipefail
DEST=${1:-.device/debs}
mkdir -p "$DEST"
cd "$DEST"
PKGS=(
  liblua5.4-0 liblua5.4-dev          # the scripting host
  libsqlite3-0 libsqlite3-dev        # the run store
  libreadline8 libreadline-dev       # the REPL
  catch2                             # C++ tests (v2; the machine has v3)
  libpcre2-8-0 libpcre2-dev libpcre2-16-0 libpcre2-32-0 libpcre2-posix3  # tokenizer
  libicu72 libicu-dev                # the tokenizer's NFC normaliser
  libseccomp2 libseccomp-dev         # the kernel sandbox
  libgccjit0 libgccjit-12-dev        # in-memory kernel compilation
  libopenblas-dev libopenblas0 libopenblas0-pthread libopenblas-pthread-dev  # verification
  libblis4-openmp libblis-openmp-dev # a yardstick (BLIS)
  libgloo-dev                        # gloo's headers (PyTorch's libtorch carries gloo itself)
)
apt-get download "${PKGS[@]}" >/dev/null
# The engine links the shared libraries: without the -dev packages' static ones the
# packages and the tree fit what one device call may carry (64 MiB).
for d in *-dev_*.deb; do
  x=$(mktemp -d)
  dpkg-deb -R "$d" "$x/pkg"
  if [ -n "$(find "$x/pkg" -name '*.a' -print -quit)" ]; then
    find "$x/pkg" -name '*.a' -delete
    dpkg-deb -Zxz -b "$x/pkg" "$d" >/dev/null
  fi
  rm -rf "$x"
done
ls -1 "$PWD"
