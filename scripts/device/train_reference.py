"""Reference values for the trainer's objectives, computed with PyTorch and transformers.

Builds a tiny random Qwen2 model with transformers, a batch of prompts and completions,
and for each objective variant computes the loss and the gradients of a few weights,
written out as a fixture that the CPU tests compare the engine against:

    python3 scripts/device/train_reference.py OUTDIR

The formulas follow the GRPO objective (per-token clipped ratio times advantage, k3 KL to
a reference model) with the loss normalisations grpo / bnpo / dr_grpo / dapo.
"""
import json
import math
import os
import sys

import torch
from safetensors.torch import save_file
from transformers import Qwen2Config, Qwen2ForCausalLM

torch.manual_seed(1234)
out = sys.argv[1]
os.makedirs(os.path.join(out, "base"), exist_ok=True)

config = Qwen2Config(
    vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
    rope_theta=10000.0, rms_norm_eps=1e-6, tie_word_embeddings=False,
    bos_token_id=1, eos_token_id=2)
model = Qwen2ForCausalLM(config).to(torch.float64)
model.eval()
model.save_pretrained(os.path.join(out, "base"), safe_serialization=True)
# Float32 weights on disk: the engine's fp32 model starts from exactly these values.
state = {k: v.to(torch.float32).contiguous() for k, v in model.state_dict().items()}
save_file(state, os.path.join(out, "base", "model.safetensors"), metadata={"format": "pt"})
with open(os.path.join(out, "base", "config.json")) as f:
    cfg = json.load(f)
cfg["torch_dtype"] = "float32"
with open(os.path.join(out, "base", "config.json"), "w") as f:
    json.dump(cfg, f, indent=2)

reference = Qwen2ForCausalLM(config).to(torch.float64)
reference.load_state_dict({k: v.to(torch.float64) for k, v in state.items()})
reference.eval()

# The live policy is the reference moved a little, so the KL term is not zero.
gen = torch.Generator().manual_seed(99)
perturbed = {k: (v.to(torch.float64) + 0.02 * torch.randn(v.shape, generator=gen, dtype=torch.float64))
             for k, v in state.items()}
live = Qwen2ForCausalLM(config).to(torch.float64)
live.load_state_dict(perturbed)
live.eval()
save_file({k: v.to(torch.float32).contiguous() for k, v in perturbed.items()},
          os.path.join(out, "perturbed.safetensors"), metadata={"format": "pt"})
live = Qwen2ForCausalLM(config).to(torch.float64)
live.load_state_dict({k: v.to(torch.float32).to(torch.float64) for k, v in perturbed.items()})
live.eval()

# Two groups of three completions with different lengths (padding) and rewards.
g = torch.Generator().manual_seed(7)
def ids(n):
    return [int(x) for x in torch.randint(3, 96, (n,), generator=g)]
groups = [
    {"prompt": ids(5), "completions": [ids(4), ids(6), ids(3)], "rewards": [1.0, -10.0, 30.0],
     "finish": ["stop", "length", "stop"]},
    {"prompt": ids(3), "completions": [ids(5), ids(2), ids(6)], "rewards": [5.0, 5.0, 12.0],
     "finish": ["stop", "stop", "length"]},
]
rows = [(grp["prompt"], c, grp["finish"][j]) for grp in groups for j, c in enumerate(grp["completions"])]
B, T = len(rows), max(len(c) for _, c, _ in rows)
L = max(len(p) + len(c) for p, c, _ in rows)

def batch():
    input_ids = torch.zeros(B, L, dtype=torch.long)
    attn = torch.zeros(B, L, dtype=torch.long)
    pos = torch.zeros(B, T, dtype=torch.long)
    tgt = torch.zeros(B, T, dtype=torch.long)
    mask = torch.zeros(B, T, dtype=torch.float64)
    for b, (p, c, _) in enumerate(rows):
        seq = p + c
        input_ids[b, :len(seq)] = torch.tensor(seq)
        attn[b, :len(seq)] = 1
        for t in range(len(c)):
            pos[b, t] = len(p) + t - 1
            tgt[b, t] = c[t]
            mask[b, t] = 1
    return input_ids, attn, pos, tgt, mask

input_ids, attn, pos, tgt, mask = batch()

def logprobs(m, temperature):
    logits = m(input_ids=input_ids, attention_mask=attn).logits
    picked = logits.gather(1, pos.unsqueeze(-1).expand(-1, -1, logits.size(-1)))
    lp = torch.log_softmax(picked / temperature, dim=-1)
    return lp.gather(-1, tgt.unsqueeze(-1)).squeeze(-1)

# Sampling-time log-probs: the live policy's, shifted so that ratios leave the clip band.
with torch.no_grad():
    base_lp = logprobs(live, 1.0)
shift = torch.tensor([0.5, -0.4, 0.05, -0.6, 0.3, -0.02])[:B].unsqueeze(-1) * torch.linspace(1, 0.5, T)
old_lp = (base_lp - shift.to(torch.float64)) * mask
old_lp_list = [[float(old_lp[b, t]) for t in range(len(rows[b][1]))] for b in range(B)]

def advantages(scale):
    rewards = [grp["rewards"] for grp in groups]
    flat = torch.tensor([r for rs in rewards for r in rs], dtype=torch.float64)
    out = []
    for rs in rewards:
        r = torch.tensor(rs, dtype=torch.float64)
        if scale == "group":
            s = r.std() + 1e-4
        elif scale == "batch":
            s = flat.std() + 1e-4
        else:
            s = 1.0
        a = (r - r.mean()) / s
        if bool((r == r[0]).all()):
            a = torch.zeros_like(r)
        out.extend(a.tolist())
    return torch.tensor(out, dtype=torch.float64)

def grpo_loss(case):
    lp = logprobs(live, case["temperature"])
    m = mask.clone()
    if case["mask_truncated"]:
        for b, (_, _, fin) in enumerate(rows):
            if fin == "length":
                m[b] = 0
    log_ratio = lp - old_lp
    if case["importance"] == "sequence":
        w = ((log_ratio * m).sum(-1) / m.sum(-1).clamp(min=1.0)).unsqueeze(-1)
    else:
        w = log_ratio
    ratio = torch.exp(w)
    high = case["clip_high"] if case["clip_high"] is not None else case["clip"]
    clipped = torch.clamp(ratio, 1 - case["clip"], 1 + high)
    adv = advantages(case["scale_rewards"]).unsqueeze(-1)
    per_token = -torch.min(ratio * adv, clipped * adv)
    kl = torch.zeros(())
    if case["beta"] != 0:
        with torch.no_grad():
            ref = logprobs(reference, case["temperature"])
        d = ref - lp
        k3 = torch.exp(d) - d - 1
        per_token = per_token + case["beta"] * k3
        kl = (k3 * m).sum() / m.sum().clamp(min=1.0)
    if case["loss"] == "grpo":
        loss = ((per_token * m).sum(-1) / m.sum(-1).clamp(min=1.0)).mean()
    elif case["loss"] in ("bnpo", "dapo"):
        loss = (per_token * m).sum() / m.sum().clamp(min=1.0)
    elif case["loss"] == "dr_grpo":
        loss = (per_token * m).sum() / (B * T)
    return loss, kl

def sft_loss():
    lp = logprobs(live, 1.0)
    return -(lp * mask).sum() / mask.sum()

WATCH = ["model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.q_proj.bias",
         "model.layers.1.mlp.down_proj.weight", "model.norm.weight"]
params = dict(live.named_parameters())

def short(xs):
    return [float(f"{x:.9g}") for x in xs]

def grads_of(loss):
    live.zero_grad()
    loss.backward()
    norm = math.sqrt(sum(float(p.grad.pow(2).sum()) for p in live.parameters() if p.grad is not None))
    return {k: short(params[k].grad.detach().reshape(-1).tolist()) for k in WATCH}, norm

base_case = {"beta": 0.0, "clip": 0.2, "clip_high": None, "loss": "grpo", "scale_rewards": "group",
             "importance": "token", "mask_truncated": False, "temperature": 1.0}
variants = {
    "grpo": {},
    "grpo_kl": {"beta": 0.04},
    "bnpo": {"loss": "bnpo"},
    "dr_grpo_batch": {"loss": "dr_grpo", "scale_rewards": "batch"},
    "dapo_high_clip": {"loss": "dapo", "clip_high": 0.28, "beta": 0.01},
    "gspo": {"importance": "sequence", "scale_rewards": "none"},
    "masked_temperature": {"mask_truncated": True, "temperature": 0.7, "beta": 0.02},
}
cases = {}
for name, v in variants.items():
    case = dict(base_case, **v)
    loss, kl = grpo_loss(case)
    grads, norm = grads_of(loss)
    cases[name] = {"options": case, "loss": float(loss), "kl": float(kl), "grads": grads,
                   "grad_norm": norm}
loss = sft_loss()
grads, norm = grads_of(loss)
cases["sft"] = {"options": {}, "loss": float(loss), "kl": 0.0, "grads": grads, "grad_norm": norm}

fixture = {
    "groups": [{"prompt": grp["prompt"],
                "completions": [{"tokens": c, "finish_reason": grp["finish"][j],
                                 "logprobs": old_lp_list[sum(len(x["completions"]) for x in groups[:gi]) + j]}
                                for j, c in enumerate(grp["completions"])],
                "rewards": grp["rewards"]} for gi, grp in enumerate(groups)],
    "max_completion_length": T,
    "watch": WATCH,
    "cases": cases,
    "torch": torch.__version__,
}
with open(os.path.join(out, "reference.json"), "w") as f:
    json.dump(fixture, f)
print("wrote", out, "cases:", ", ".join(f"{k}={v['loss']:.6f}" for k, v in cases.items()))
