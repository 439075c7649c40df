#!/usr/bin/env python3
"""Reference token ids and chat prompts from Hugging Face `tokenizers`/`transformers`.

Encodes every text of a corpus (a JSON list of strings) with a tokenizer directory
(tokenizer.json + tokenizer_config.json) and renders chat conversations with its chat
template, writing the results as one JSON fixture the engine's tests compare against.

  python3 tokenizer_reference.py --dir TOKDIR --corpus corpus.json --chat chats.json \
      --out ref.json

The fixtures in tests/tokenizer/ came from it on the GPU machine (tokenizers 0.23.2,
transformers 5.17.0), with this script, tests/tokenizer/tokenizer_corpus.json,
tests/tokenizer/tokenizer_chats.json and the tokenizer directories copied to a carried
folder:
  --dir qwen3   (build/data/tokenizers/qwen3, unpacked from tests/data) -> tokenizer_qwen3_ref.json
  --dir trained (tests/tokenizer/tokenizer_trained)  -> tokenizer_trained_ref.json
"""
import argparse
import json
import time

import tokenizers
import transformers
from tokenizers import Tokenizer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--chat")
    ap.add_argument("--out", required=True)
    ap.add_argument("--bench-repeat", type=int, default=0,
                    help="also time encode_batch over the corpus repeated N times")
    args = ap.parse_args()

    tok = Tokenizer.from_file(f"{args.dir}/tokenizer.json")
    texts = json.load(open(args.corpus, encoding="utf-8"))
    cases = []
    for text in texts:
        enc = tok.encode(text, add_special_tokens=True)
        cases.append({
            "text": text,
            "ids": enc.ids,
            "decoded": tok.decode(enc.ids, skip_special_tokens=False),
            "decoded_skip_special": tok.decode(enc.ids, skip_special_tokens=True),
        })
    whole = "".join(texts)
    out = {
        "tokenizers_version": tokenizers.__version__,
        "transformers_version": transformers.__version__,
        "vocab_size": tok.get_vocab_size(with_added_tokens=True),
        "cases": cases,
        "whole_ids": tok.encode(whole).ids,
    }

    if args.chat:
        hf = transformers.AutoTokenizer.from_pretrained(args.dir)
        chats = []
        for conv in json.load(open(args.chat, encoding="utf-8")):
            kwargs = {}
            if "enable_thinking" in conv:
                kwargs["enable_thinking"] = conv["enable_thinking"]
            text = hf.apply_chat_template(conv["messages"], tokenize=False,
                                          add_generation_prompt=conv["add_generation_prompt"],
                                          **kwargs)
            chats.append(dict(conv, text=text))
        out["chat"] = chats
        out["eos_token"] = hf.eos_token
        out["eos_token_id"] = hf.eos_token_id

    if args.bench_repeat:
        batch = texts * args.bench_repeat
        t0 = time.perf_counter()
        n = sum(len(e.ids) for e in tok.encode_batch(batch))
        dt = time.perf_counter() - t0
        t0 = time.perf_counter()
        n1 = sum(len(tok.encode(t).ids) for t in batch)
        dt1 = time.perf_counter() - t0
        out["bench"] = {"tokens": n, "encode_batch_tokens_per_s": n / dt,
                        "encode_serial_tokens_per_s": n1 / dt1}

    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=True)
    print("cases", len(cases), "chat", len(out.get("chat", [])), "bench", out.get("bench"))


if __name__ == "__main__":
    main()
