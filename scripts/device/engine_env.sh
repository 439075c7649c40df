# What the job scripts share after gpu_build_and_test.sh's build step: where it unpacked
# the Debian packages and built the engine, the libraries the engine loads from there, and
# `engine` to run it. Sourced from the repository root.
PREFIX=/tmp/engine-deps
BUILD=${BUILD:-/tmp/engine-build}
export LD_LIBRARY_PATH=$PREFIX/usr/lib/x86_64-linux-gnu:$PREFIX/usr/lib/x86_64-linux-gnu/openblas-pthread
engine() { "$BUILD/engine" "$@"; }
