"""Loads the engine's exports with transformers and peft and compares log-probabilities
with the ones the engine computed for the same prompt and completion.

    python3 check_export.py WORKDIR   (WORKDIR written by tests/train/export_roundtrip.lua)
"""
import json
import sys

import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM

work = sys.argv[1]
with open(f"{work}/engine_logprobs.json") as f:
    ref = json.load(f)
prompt, completion = ref["prompt"], ref["completion"]
ids = torch.tensor([prompt + completion])


def logprobs(model):
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0].float()
    lp = torch.log_softmax(logits, -1)
    return [float(lp[len(prompt) + t - 1, tok]) for t, tok in enumerate(completion)]


full = AutoModelForCausalLM.from_pretrained(f"{work}/full", torch_dtype=torch.float32)
base = AutoModelForCausalLM.from_pretrained(ref["base"], torch_dtype=torch.float32)
adapted = PeftModel.from_pretrained(base, f"{work}/adapter")
out = {}
for name, model in (("full", full), ("adapter", adapted)):
    got = logprobs(model.eval())
    diff = max(abs(a - b) for a, b in zip(got, ref["logprobs"]))
    out[name] = {"max_abs_diff": diff, "ok": diff < 1e-4}
print(json.dumps(out))
sys.exit(0 if all(v["ok"] for v in out.values()) else 1)
