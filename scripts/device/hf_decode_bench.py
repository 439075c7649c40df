#!/usr/bin/env python3
"""Decode tokens/s of `transformers` generate() for a config with random weights: the
baseline of `policy_bench decode` (same batch, prompt length, token count, sampling).

  hf_decode_bench.py CONFIG.json [batch] [prompt] [tokens]

Decode time is the time of generating `tokens` tokens minus that of generating one (the
prefill and first token), so it counts the same tokens as the engine's decode figure.
"""
import json
import sys
import time

import torch
from transformers import AutoConfig, AutoModelForCausalLM

path = sys.argv[1]
batch = int(sys.argv[2]) if len(sys.argv) > 2 else 64
prompt = int(sys.argv[3]) if len(sys.argv) > 3 else 128
tokens = int(sys.argv[4]) if len(sys.argv) > 4 else 256

config = AutoConfig.from_pretrained(path)
torch.manual_seed(0)
with torch.device("cuda"):
    model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16).eval()
model.generation_config.eos_token_id = None
model.generation_config.pad_token_id = 0
ids = torch.randint(0, config.vocab_size, (batch, prompt), device="cuda")
mask = torch.ones_like(ids)


def run(n):
    torch.cuda.synchronize()
    t = time.perf_counter()
    out = model.generate(ids, attention_mask=mask, do_sample=True, temperature=1.0, top_k=0,
                         top_p=1.0, max_new_tokens=n)
    torch.cuda.synchronize()
    assert out.shape[1] == prompt + n, out.shape
    return time.perf_counter() - t


with torch.inference_mode():
    run(8)  # warm-up
    first = min(run(1) for _ in range(2))
    full = run(tokens)
decode_s = full - first
print(json.dumps({"engine": "transformers", "version": __import__("transformers").__version__,
                  "torch": torch.__version__, "batch": batch, "prompt": prompt,
                  "tokens": tokens, "prefill_s": first, "decode_s": decode_s,
                  "decode_tok_s": batch * (tokens - 1) / decode_s,
                  "step_ms": 1e3 * decode_s / (tokens - 1),
                  "attn_implementation": model.config._attn_implementation}), flush=True)
