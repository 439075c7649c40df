-- pretrain.lua at toy scale on the CPU: the export loads and samples, a killed run resumes
-- from its last checkpoint to the same model, and existing runs and models are not
-- overwritten by mistake. model_check.lua's figures on hand-made results.
local t = require "engine.test"
local engine_exe = assert(os.getenv("ENGINE_TEST_EXE"), "ENGINE_TEST_EXE is not set")
local pretrain = dofile(engine.scripts[1] .. "/pretrain.lua")
local model_check = dofile(engine.scripts[1] .. "/model_check.lua")

-- On the CPU, where training is bitwise repeatable; CUDA's embedding backward adds with
-- atomics, so two runs there differ in the last bits.
local toy = {"--device=cpu", "--examples=48", "--vocab_size=320", "--tokenizer_examples=16",
             "--hidden=32", "--layers=1", "--heads=2", "--kv_heads=1", "--intermediate=64", "--batch=4",
             "--micro_batch=4", "--max_len=4096", "--warmup=2", "--log_every=100"}

local function command(extra)
  local parts = {string.format("%q", engine_exe), "pretrain.lua"}
  for _, a in ipairs(toy) do parts[#parts + 1] = a end
  for _, a in ipairs(extra) do parts[#parts + 1] = string.format("%q", a) end
  return table.concat(parts, " ")
end

local function run(extra)
  local pipe = io.popen(command(extra) .. " 2>&1")
  local out = pipe:read("a")
  local ok = pipe:close()
  return ok, out
end

-- run(extra), which must succeed; returns its output.
local function run_ok(extra)
  local ok, out = run(extra)
  t.ok(ok, out)
  return out
end

t.test("the learning rate warms up, then decays to its floor", function()
  local o = {lr = 1e-3, warmup = 10, steps = 110, min_lr = 0.1}
  t.near(pretrain.lr_at(5, o), 5e-4, 1e-12)
  t.near(pretrain.lr_at(10, o), 1e-3, 1e-12)
  t.near(pretrain.lr_at(60, o), 0.55e-3, 1e-12)
  t.near(pretrain.lr_at(110, o), 1e-4, 1e-12)
end)

t.test("--task_share puts the suite's other training tasks in the corpus, spread evenly", function()
  local a, b = {}, {}
  for i = 1, 7 do a[i] = "a" .. i end
  for i = 1, 3 do b[i] = "b" .. i end
  t.eq(table.concat(pretrain.interleave(a, b), " "), "b1 a1 a2 b2 a3 a4 b3 a5 a6 a7")
  local corpus = pretrain.build_corpus({examples = 40, task_share = 0.25, seed = 1, isa = {"avx512", "avx2"},
                                        defect_rate = 0.15})
  t.eq(#corpus, 40)
  local others, first_half = 0, 0
  for i, ex in ipairs(corpus) do
    if not ex.prompt:find("matmul_optimized", 1, true) then
      others = others + 1
      if i <= 20 then first_half = first_half + 1 end
    end
  end
  t.eq(others, 10)
  t.eq(first_half, 5, "spread through the corpus")
  t.eq(#pretrain.build_corpus({examples = 12, seed = 1, isa = "avx2", defect_rate = 0}), 12)
end)

t.test("--kernel_names=fixed: one name a role in the matmul and suite kernels, and a model of its own", function()
  local settings = {examples = 40, task_share = 0.5, seed = 1, isa = {"avx512", "avx2"}, defect_rate = 0.15}
  local drawn = pretrain.build_corpus(settings)
  settings.kernel_names = "fixed"
  local fixed = pretrain.build_corpus(settings)
  local function others(corpus)  -- names only the drawn kernels use
    local n = 0
    for _, ex in ipairs(corpus) do
      for _, name in ipairs({"hadd", "lanes", "NPART", "BLOCK_M", "TILE_I", "imax", "i_end", "nthreads"}) do
        if ex.completion:find("%f[%w_]" .. name .. "%f[^%w_]") then n = n + 1 end
      end
    end
    return n
  end
  t.eq(others(fixed), 0)
  t.ok(others(drawn) > 0)
  -- the setting is the model's (a run resumes only with it); drawn, the default, leaves
  -- the identity of the runs made before it as it was
  t.eq(pretrain.identity(settings).kernel_names, "fixed")
  settings.kernel_names = "drawn"
  t.eq(pretrain.identity(settings).kernel_names, nil)
end)

t.test("a toy model trains, exports in bf16 and samples", function()
  local dir = t.tmpdir()
  run_ok{"--steps=6", "--save_every=3", "--out=" .. dir .. "/run", "--export=" .. dir .. "/model"}
  for _, f in ipairs{"config.json", "model.safetensors", "tokenizer.json", "README.md",
                     "pretrain.json"} do
    t.ok(sys.exists(dir .. "/model/" .. f), f)
  end
  t.eq(json.read(dir .. "/model/config.json").torch_dtype, "bfloat16")
  local info = json.read(dir .. "/model/pretrain.json")
  t.eq(info.settings.steps, 6)
  t.ok(info.figures.final_loss > 0)
  t.contains(t.read(dir .. "/model/README.md"), "--hidden=32")
  t.contains(t.read(dir .. "/model/README.md"), "matmul kernels (`scripts/pretraining/kernelgen.lua`)")
  -- a corpus with the suite's tasks says so, and what share
  local opts = {}
  for k, v in pairs(info.settings) do opts[k] = v end
  opts.task_share, opts.device = 0.3, "cpu"
  local text = pretrain.model_readme(opts, info.figures)
  t.contains(text, "70% matmul")
  t.contains(text, "30% the task suite's other training tasks")
  t.contains(text, "nothing but these tasks.")
  t.contains(text, "its pieces are whole lines")
  opts.pattern = ""  -- the tokenizer's default: Qwen2's pieces
  t.contains(pretrain.model_readme(opts, info.figures), "its pieces are Qwen2's")
  -- varied prompts are said, and only where the corpus had them
  t.ok(not text:find("drawn"), "no drawn words or names in a corpus without them")
  opts.wording_share, opts.rename_share = 0.5, 0.25
  local varied = pretrain.model_readme(opts, info.figures)
  t.contains(varied, "50% of the prompts are in drawn words")
  t.contains(varied, "25% of the matmul and suite-task examples ask for their function under a drawn name")
  local pol = policy.load(dir .. "/model")
  local prompts = require "method.prompts"
  local got = pol:sample({prompts.render(prompts.write(6, {}))}, {n = 2, max_tokens = 8, seed = 1})
  t.eq(#got[1], 2)

  -- the same run and model are not overwritten by mistake
  local ok, out = run{"--steps=6", "--out=" .. dir .. "/run", "--export=" .. dir .. "/other"}
  t.ok(not ok)
  t.contains(out, "already holds a run")
  ok, out = run{"--steps=6", "--out=" .. dir .. "/run2", "--export=" .. dir .. "/model"}
  t.ok(not ok)
  t.contains(out, "--overwrite")
end)

t.test("a resumed run ends with the model of an uninterrupted one", function()
  local dir = t.tmpdir()
  run_ok{"--steps=6", "--save_every=2", "--out=" .. dir .. "/whole", "--export=" .. dir .. "/whole_model"}
  run_ok{"--steps=6", "--save_every=5", "--stop_after=3", "--out=" .. dir .. "/cut",
         "--export=" .. dir .. "/cut_model"}
  t.ok(not sys.exists(dir .. "/cut_model/config.json"), "no export before the last step")
  local out = run_ok{"--steps=6", "--save_every=5", "--resume", "--out=" .. dir .. "/cut",
                     "--export=" .. dir .. "/cut_model"}
  t.contains(out, "resumed")
  t.contains(out, "read=true", "the corpus the run started with, read back")
  t.eq(t.read(dir .. "/cut_model/model.safetensors"), t.read(dir .. "/whole_model/model.safetensors"))
  -- --corpus_only: the corpus alone, built on one machine; the run trains from it elsewhere
  out = run_ok{"--steps=6", "--save_every=5", "--corpus_only", "--out=" .. dir .. "/corpus_first",
               "--export=" .. dir .. "/corpus_first_model"}
  t.ok(sys.exists(dir .. "/corpus_first/corpus.jsonl"), out)
  t.ok(not sys.exists(dir .. "/corpus_first/init/config.json"), "no tokenizer or weights yet")
  t.ok(not sys.exists(dir .. "/corpus_first_model/config.json"), "no model")
  local other = run{"--steps=6", "--save_every=5", "--hidden=64", "--resume", "--out=" .. dir .. "/corpus_first",
                    "--export=" .. dir .. "/corpus_first_model"}
  t.ok(not other, "a corpus built for other settings is refused")
  out = run_ok{"--steps=6", "--save_every=5", "--resume", "--out=" .. dir .. "/corpus_first",
               "--export=" .. dir .. "/corpus_first_model"}
  t.contains(out, "read=true")
  t.eq(t.read(dir .. "/corpus_first_model/model.safetensors"), t.read(dir .. "/whole_model/model.safetensors"))
  -- out of time: a checkpoint at the step that passed the limit, then the same model
  out = run_ok{"--steps=6", "--save_every=5", "--time_limit=1e-9", "--out=" .. dir .. "/timed",
               "--export=" .. dir .. "/timed_model"}
  t.contains(out, "stopped")
  t.contains(out, "step=1")
  t.ok(not sys.exists(dir .. "/timed_model/config.json"), "no export when out of time")
  run_ok{"--steps=6", "--save_every=5", "--resume", "--out=" .. dir .. "/timed",
         "--export=" .. dir .. "/timed_model"}
  t.eq(t.read(dir .. "/timed_model/model.safetensors"), t.read(dir .. "/whole_model/model.safetensors"))
  -- the loss it reports is the run's, not that of the steps this process happened to make
  local whole = json.read(dir .. "/whole_model/pretrain.json").figures
  local cut = json.read(dir .. "/cut_model/pretrain.json").figures
  t.eq(cut.loss_window, whole.loss_window)
  t.near(cut.final_loss, whole.final_loss, 1e-6)
  -- a run resumed after its last step exports again with the same figures
  run_ok{"--steps=6", "--save_every=5", "--resume", "--out=" .. dir .. "/cut",
         "--export=" .. dir .. "/again", "--overwrite"}
  t.near(json.read(dir .. "/again/pretrain.json").figures.final_loss, whole.final_loss, 1e-6)
end)

t.test("model_check's figures", function()
  local k = "```c\nvoid matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {}\n```"
  local results = {
    {status = "ok", gflops = 2, completion = k, code = "#pragma omp parallel for\nx;"},
    {status = "ok", gflops = 5, completion = k .. " ", code = "_mm512_fmadd_pd(a, b, c);"},
    {status = "verification_error", completion = k, code = "int x;"},
    {status = "compile_error", completion = "other", code = "int y"},
    {status = "format_violation", completion = "no code"},
  }
  local f = model_check.figures(results)
  -- kernels wider than the ISA the prompt named: none for AVX-512, the _mm512 one for AVX2
  t.eq({f.isa, f.beyond_isa}, {"avx512", 0})
  local f2 = model_check.figures(results, "avx2")
  t.eq({f2.isa, f2.beyond_isa}, {"avx2", 1})
  t.eq(f.samples, 5)
  t.eq(f.compiled, 3)
  t.eq(f.verified, 2)
  t.eq(f.best_gflops, 5)
  t.eq(f.verified_combinations, 2)
  t.eq(f.combinations, 3)  -- omp, simd, plain
  t.near(f.top_text_share, 0.4, 1e-12)
end)

t.test("the corpus pairs prompts naming AVX-512 or AVX2 with kernels of that ISA", function()
  local args = require "engine.args"
  local opts = args.parse({[0] = "pretrain.lua", "--examples=200"}, pretrain.spec)
  t.eq(opts.isa, {"avx512", "avx2"}, "both ISAs by default")
  local corpus = pretrain.build_corpus(opts)
  local stages = require "method.stages"
  local count = {}
  for _, ex in ipairs(corpus) do
    count[ex.isa] = (count[ex.isa] or 0) + 1
    local simd = stages.detect(ex.completion).simd
    local bits = stages.vector_bits(simd)
    if ex.isa == "avx2" then
      t.contains(ex.prompt, "AVX2/FMA")
      t.ok(bits <= 256, "an AVX2 prompt answered with " .. bits .. "-bit vectors")
    else
      t.ok(not ex.prompt:find("AVX2"), "an AVX-512 prompt is the paper's")
      t.ok(bits == 0 or bits == 512, "an AVX-512 prompt answered with " .. bits .. "-bit vectors")
    end
  end
  t.ok(count.avx512 > 70 and count.avx2 > 70, string.format("avx512 %d, avx2 %d",
       count.avx512 or 0, count.avx2 or 0))
  -- one ISA on request
  opts = args.parse({[0] = "pretrain.lua", "--examples=20", "--isa=avx2"}, pretrain.spec)
  for _, ex in ipairs(pretrain.build_corpus(opts)) do t.eq(ex.isa, "avx2") end
end)

t.run()
