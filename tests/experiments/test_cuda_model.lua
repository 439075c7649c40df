-- The shipped CUDA-capable model (models/small-cuda) on this machine's CPU: for every
-- training CUDA task's prompt it answers with device code defining the task's entry, and it
-- still writes the CPU matmul kernel. Whether that code verifies needs a GPU: on the GPU
-- node Experiment 1 judges it (docs/tasks.md, "CUDA kernels").
local t = require "engine.test"
local cuda_tasks = require "engine.cuda_tasks"
local extract = require "method.extract"
local prompts = require "method.prompts"

local dir = require("method.wiring").default_cuda_model
local pol = policy.load(dir, {device = "cpu"})

local function sample(messages, n)
  return pol:sample({prompts.render(messages)}, {n = n, temperature = 1.0, max_tokens = 768, seed = 1})[1]
end

t.test("it answers every training CUDA task's prompt with its entry, in device code", function()
  for _, spec in ipairs(cuda_tasks.list()) do
    if spec.split == "train" then
      local out = sample(prompts.cuda_write(spec, cuda_tasks.resolve(spec, "train"), "NVIDIA H100 80GB HBM3"), 8)
      local defined = 0
      for _, c in ipairs(out) do
        local code = extract.cuda_kernel(c.text, spec.entry)
        if code and code:find("__global__", 1, true) then defined = defined + 1 end
      end
      t.ok(defined >= 6, string.format("%s: %d of 8 answers define %s", spec.name, defined, spec.entry))
    end
  end
end)

t.test("it still writes the CPU matmul kernel", function()
  local out = sample(prompts.fixed({M = 128, N = 128, K = 128, opt = "O3", isa = "avx2"})[1], 8)
  local written = 0
  for _, c in ipairs(out) do if extract.kernel(c.text) then written = written + 1 end end
  t.ok(written >= 6, written .. " of 8 answers hold matmul_optimized")
end)

t.run()
