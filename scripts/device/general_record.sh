#!/usr/bin/env bash
# A universe model's node results kept in the tree the way docs/models.md cites them, and its
# readings on this machine, after general_calls.sh's train, rest and more calls:
#
#   bash scripts/device/general_record.sh NAME DATE TRAIN_LOGS PARTS... CHECKS_REST CHECKS_MORE
#   (TRAIN_LOGS: the train calls' pretrain.log in order, joined by ':' where training took several)
#   e.g. bash scripts/device/general_record.sh general10 2026-12-01 /work/.device/2/pretrain.log \
#          /work/.device/3/general.tgz.part-* /work/.device/3/checks-rest.tgz /work/.device/4/checks-more.tgz
#
# Writes data/train/h200-DATE-NAME-{pretrain.log, model-check.txt, check*.json,
# {train,heldout,wordings-each,heldout-renamed,heldout-prefill,probe,probe-prefill,user,user-prefill}-kernels.jsonl},
# unpacks the model into /tmp/NAME/general, then reads it here (LOCAL names this machine in
# the files, default epyc): the copy probe's and the held-out tasks' names scored
# (name_probe.lua) and the names written under each wording (framing_names.lua), in
# data/train/LOCAL-DATE-NAME-{name-probe,heldout-name-probe,framings}.txt.
set -euo pipefail
NAME=${1:?NAME}; DATE=${2:?DATE}; TRAIN_LOGS=${3:?the pretrain.log of each train call}; shift 3
[ $# -ge 3 ] || { echo "general_record.sh: give the model's parts, checks-rest.tgz and checks-more.tgz" >&2; exit 2; }
cd "$(dirname "$0")/../.."
ROOT=$PWD
WORK=/tmp/$NAME
LOCAL=${LOCAL:-epyc}
ENGINE=${ENGINE:-$ROOT/build/engine}
rm -rf "$WORK" && mkdir -p "$WORK"
parts=() packs=()
for f in "$@"; do case "$f" in *general.tgz.part-*) parts+=("$f") ;; *.tgz) packs+=("$f") ;; esac; done
cat "${parts[@]}" | tar -xzf - -C "$WORK"
# each pack holds its phase's model_check.txt and pretrain.log: kept in order, rest's then more's
for p in "${packs[@]}"; do
  rm -rf "$WORK/pack" && mkdir "$WORK/pack" && tar -xzf "$p" -C "$WORK/pack"
  for log in model_check.txt pretrain.log; do
    [ -f "$WORK/pack/$log" ] && cat "$WORK/pack/$log" >> "$WORK/$log" && rm "$WORK/pack/$log"
  done
  mv "$WORK/pack"/* "$WORK/" && rmdir "$WORK/pack"
done
[ -f "$WORK/general/model.safetensors" ] || { echo "general_record.sh: no model in the parts given" >&2; exit 1; }

D=$ROOT/data/train/h200-$DATE-$NAME
COMMIT=$(git rev-parse --short HEAD)
IFS=: read -ra train_logs <<< "$TRAIN_LOGS"
cat "${train_logs[@]}" "$WORK/pretrain.log" > "$D-pretrain.log"
for f in "$WORK"/check*.json; do cp "$f" "$D-$(basename "$f")"; done
python3 - "$WORK/kernels-suite.jsonl" "$D" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for split, name in (("train", "train-kernels"), ("heldout", "heldout-kernels"), ("wordings", "wordings-each-kernels")):
    with open(sys.argv[2] + "-" + name + ".jsonl", "w") as out:
        for r in rows:
            if r.get("split") == split:
                out.write(json.dumps(r) + "\n")
PY
for k in heldout-renamed heldout-prefill probe probe-prefill user user-prefill fresh near; do
  [ -f "$WORK/kernels-$k.jsonl" ] && cp "$WORK/kernels-$k.jsonl" "$D-$k-kernels.jsonl"
done
{ echo "# engine model_check.lua (general_model.sh's CHECKS \"suite user probe\", then \"renamed prefill fresh\") on the H200 node,"
  echo "# $DATE, the $NAME model of h200-$DATE-$NAME-*; the tree at commit $COMMIT when recorded"
  grep -v "^\[" "$WORK/model_check.txt"; } > "$D-model-check.txt"

L=$ROOT/data/train/$LOCAL-$DATE-$NAME
HO=$WORK/heldout-specs && mkdir -p "$HO"
for t in cholesky conv1d conv2d_3x3 fft lu_nopiv; do cp "$ROOT/stdlib/tasks/$t.lua" "$HO/"; done
{ echo "# engine name_probe.lua --model=DIR --also=axpy on this machine ($LOCAL), DIR the $NAME model (h200-$DATE-$NAME-*)"
  "$ENGINE" name_probe.lua --model="$WORK/general" --also=axpy 2>&1 | grep -v "^\["; } > "$L-name-probe.txt"
{ echo "# engine name_probe.lua --model=DIR --task_dir=HO, HO copies of stdlib/tasks/{cholesky,conv1d,conv2d_3x3,fft,lu_nopiv}.lua"
  echo "# (the held-out tasks' own names), on this machine ($LOCAL); DIR the $NAME model"
  "$ENGINE" name_probe.lua --model="$WORK/general" --task_dir="$HO" 2>&1 | grep -v "^\["; } > "$L-heldout-name-probe.txt"
{ echo "# engine framing_names.lua --model=DIR on this machine ($LOCAL), DIR the $NAME model: the name of the last function"
  echo "# the greedy answer defines, to the first fixed prompt and each held-out wording (framing i: wording i and i + 4)"
  "$ENGINE" framing_names.lua --model="$WORK/general" 2>&1 | grep -v "^\["; } > "$L-framings.txt"
ls -la "$D"-* "$L"-*
