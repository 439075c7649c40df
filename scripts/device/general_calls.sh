#!/usr/bin/env bash
# general_model.sh in the device's calls of at most 600 s each, on one machine kept warm
# between them, its files packed under the 8 a call brings back:
#
#   (here) bash scripts/device/fetch_debs.sh .device/debs
#   (here) . SETTINGS; BUILD=$PWD/build DEVICE=cpu RUNS=/tmp/gm CORPUS_ONLY=1 bash scripts/device/general_model.sh .device
#   (device) . SETTINGS; PT=.device/pt.tar.xz bash scripts/device/general_calls.sh train   # build, train to the call's limit
#   (device) . SETTINGS; bash scripts/device/general_calls.sh rest    # the rest of the training, the model, the first checks
#   (device) . SETTINGS; bash scripts/device/general_calls.sh more    # the other readings
#
# SETTINGS: a file exporting general_model.sh's variables (docs/models.md gives each model's).
# train: the build, and the training until about 40 s before the call's limit (TIME_LIMIT);
# rest: the training to its end, the model in 15 MB parts (general.tgz.part-*) and
# CHECKS="suite user probe" packed in checks-rest.tgz; more: CHECKS="renamed prefill fresh" in
# checks-more.tgz. A call cut short leaves the run to resume: the same phase again.
set -uo pipefail
PHASE=${1:?train, rest or more}
cd "$(dirname "$0")/../.."
OUT=${OUT:?the folder whose files come back}
LIMIT=${CALL_LIMIT:-600}
pack() {  # pack NAME: every file of OUT but the model's parts and earlier packs, in one
  local files
  files=$(cd "$OUT" && ls | grep -v -e "^general.tgz" -e "^checks-")
  [ -z "$files" ] || (cd "$OUT" && tar -czf "checks-$1.tgz" --remove-files $files)
}
case "$PHASE" in
  train)
    [ -x "${BUILD:-/tmp/engine-build}/engine" ] ||
      TARGETS="engine engine-sandbox" CMAKE_ARGS=-DBUILD_TESTING=OFF \
        bash scripts/device/gpu_build_and_test.sh .device/debs "$OUT" build 2>&1 | tail -3
    rm -f "$OUT/build.log" "$OUT/configure.log"
    # the corpus (unless PT brings it) and the tokenizer come before the first step
    before=200
    [ -n "${PT:-}" ] && before=60
    TIME_LIMIT=$((LIMIT - SECONDS - before)) CHECKS=none bash scripts/device/general_model.sh "$OUT" ;;
  rest)
    TIME_LIMIT=0 CHECKS="suite user probe" timeout $((LIMIT - 40)) bash scripts/device/general_model.sh "$OUT"
    pack rest ;;
  more)
    TIME_LIMIT=0 CHECKS="renamed prefill fresh" timeout $((LIMIT - 40)) bash scripts/device/general_model.sh "$OUT"
    rm -f "$OUT"/general.tgz.part-*  # brought back by rest
    pack more ;;
  *) echo "general_calls.sh: no phase '$PHASE' (train, rest or more)" >&2; exit 2 ;;
esac
ls -la "$OUT"
