#!/usr/bin/env python3
"""Reference models and outputs from `transformers`, for the engine's parity checks.

  make_reference.py fixture OUT   tiny random Qwen2 and Llama models with reference logits
                                  and greedy ids (CPU, fp32 and bf16): tests/policy/fixtures
  make_reference.py parity OUT    random models with the configs of Qwen2.5-Coder-0.5B/1.5B
                                  and Llama-3.2-1B, saved in bf16, with reference logits
                                  (fp32 and bf16) and 64-token greedy ids on the GPU

Each model directory gets reference.safetensors: input_ids/attention_mask [B,T] (row 1 is
left-padded), logits_<dtype> [B,T,V] (fp32 values), greedy_<dtype> [64] from row 0's prompt.
"""
import json
import os
import sys

import torch
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM, LlamaConfig, Qwen2Config

QWEN_05B = dict(vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=32768,
                rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True,
                bos_token_id=151643, eos_token_id=151643)
QWEN_15B = dict(QWEN_05B, hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
                num_attention_heads=12, num_key_value_heads=2, tie_word_embeddings=True)
QWEN_14B = dict(QWEN_05B, vocab_size=152064, hidden_size=5120, intermediate_size=13824,
                num_hidden_layers=48, num_attention_heads=40, num_key_value_heads=8,
                tie_word_embeddings=False)
LLAMA_1B = dict(vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                num_attention_heads=32, num_key_value_heads=8, head_dim=64,
                max_position_embeddings=131072, rms_norm_eps=1e-5, rope_theta=500000.0,
                rope_scaling=dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0,
                                  high_freq_factor=4.0, original_max_position_embeddings=8192),
                tie_word_embeddings=True, bos_token_id=128000, eos_token_id=128001)


def build(kind, cfg, seed, dtype, path, shard=None):
    torch.manual_seed(seed)
    config = (Qwen2Config if kind == "qwen2" else LlamaConfig)(**cfg)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model = model.to(dtype)
    kw = {"max_shard_size": shard} if shard else {}
    model.save_pretrained(path, **kw)
    return model


def inputs(vocab, B, T, pad, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (B, T), generator=g)
    mask = torch.ones(B, T, dtype=torch.int64)
    mask[1, :pad] = 0
    ids[1, :pad] = 0
    return ids, mask


@torch.no_grad()
def reference(path, ids, mask, device, dtypes, greedy_len, prompt_len):
    out = {"input_ids": ids, "attention_mask": mask}
    pos = (mask.cumsum(1) - 1).clamp(min=0)
    for name, dt in dtypes.items():
        model = AutoModelForCausalLM.from_pretrained(path, dtype=dt).to(device).eval()
        logits = model(input_ids=ids.to(device), attention_mask=mask.to(device),
                       position_ids=pos.to(device)).logits
        out["logits_" + name] = logits.float().cpu().contiguous()
        model.generation_config.eos_token_id = None
        model.generation_config.pad_token_id = 0
        prompt = ids[:1, :prompt_len].to(device)
        gen = model.generate(prompt, attention_mask=torch.ones_like(prompt), do_sample=False,
                             max_new_tokens=greedy_len)
        out["greedy_" + name] = gen[0, prompt_len:].cpu().contiguous()
        del model
        if device == "cuda":
            torch.cuda.empty_cache()
    save_file(out, os.path.join(path, "reference.safetensors"),
              metadata={"prompt_len": str(prompt_len), "greedy_len": str(greedy_len),
                        "device": device, "torch": torch.__version__})


def fixture(out):
    tiny = dict(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                rope_theta=10000.0, rms_norm_eps=1e-6, initializer_range=0.1,
                bos_token_id=1, eos_token_id=2)
    models = [
        ("tiny_qwen2", "qwen2", dict(tiny, tie_word_embeddings=True), torch.bfloat16, "60KB"),
        ("tiny_llama", "llama", dict(tiny, num_key_value_heads=1, intermediate_size=96,
                                     tie_word_embeddings=False, rope_theta=500000.0,
                                     rope_scaling=dict(rope_type="llama3", factor=8.0,
                                                       low_freq_factor=1.0, high_freq_factor=4.0,
                                                       original_max_position_embeddings=32)),
         torch.float16, None),
    ]
    for i, (name, kind, cfg, dt, shard) in enumerate(models):
        path = os.path.join(out, name)
        build(kind, cfg, 1234 + i, dt, path, shard)
        ids, mask = inputs(cfg["vocab_size"], 2, 16, 5, 99 + i)
        reference(path, ids, mask, "cpu", {"fp32": torch.float32, "bf16": torch.bfloat16},
                  32, 8)


def parity(out):
    for name, kind, cfg in [("qwen2.5-coder-0.5b", "qwen2", QWEN_05B),
                            ("qwen2.5-coder-1.5b", "qwen2", QWEN_15B),
                            ("llama-3.2-1b", "llama", LLAMA_1B)]:
        path = os.path.join(out, name)
        build(kind, cfg, 7, torch.bfloat16, path, "2GB")
        ids, mask = inputs(cfg["vocab_size"], 2, 48, 11, 5)
        reference(path, ids, mask, "cuda", {"fp32": torch.float32, "bf16": torch.bfloat16},
                  64, 32)
        print("reference:", name, flush=True)


if __name__ == "__main__":
    {"fixture": fixture, "parity": parity}[sys.argv[1]](sys.argv[2])
