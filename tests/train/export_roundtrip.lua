-- Trains a LoRA adapter on the training fixture's model for a few SFT steps, exports it
-- both ways (merged full weights; PEFT adapter) into WORKDIR and records the engine's
-- log-probabilities of a fixed completion, for scripts/device/check_export.py.
--
--   engine tests/train/export_roundtrip.lua WORKDIR
local work = assert(arg[1], "usage: export_roundtrip.lua WORKDIR")
local base = engine.root .. "/tests/train/fixture/base"
local pol = policy.load(base)
local trainer = train.sft(pol, {lr = 5e-2, lora = {r = 4, alpha = 8, dropout = 0.0}})
for step = 1, 5 do
  trainer:step{{prompt = {5, 6, 7}, completion = {8, 9, 10, 2}},
               {prompt = {11, 12}, completion = {13, 14 + step, 2}}}
end
trainer:export(work .. "/full")
trainer:export(work .. "/adapter", {adapter = true})
local prompt, completion = {5, 6, 7}, {8, 9, 10, 2}
json.write(work .. "/engine_logprobs.json", {base = base, prompt = prompt, completion = completion,
                                             logprobs = pol:logprobs(prompt, completion)})
print("exported to " .. work)
