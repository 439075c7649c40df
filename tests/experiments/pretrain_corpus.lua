-- pretrain.lua's corpus as the tests build it, and a model directory that records one for
-- audit.lua to rebuild.
--
--   local settings, corpus, check_zero = pretrain_corpus.share_option(pretrain, "rename_share")
--     settings(share): a small corpus's settings (300 examples: matmul, the suite's tasks and
--       the universe, both ISAs, defects) with the option at that share (nil: without it);
--     corpus(share): pretrain.build_corpus(settings(share)), built once a share (the tests
--       compare several shares with the corpus without the option);
--     check_zero(): asserts what every such option promises at share 0 (the corpus without
--       it, byte for byte; 0 left out of the run's identity, so older runs resume, a share
--       in it) and returns corpus(nil);
--   pretrain_corpus.recorded(settings): the settings with the universe's and the corpus's
--     versions of today, as pretrain.lua records them (changes and returns the table);
--   pretrain_corpus.model_with(settings[, dir]): dir (default a new temporary one) with its
--     pretrain.json holding only these settings.
local t = require "engine.test"

local M = {}

-- `pretrain` is pretrain.lua's module as the test loaded it; `option` the setting that
-- draws the change for a share of the examples.
function M.share_option(pretrain, option)
  local function settings(share)
    return {examples = 300, task_share = 0.3, universe_share = 0.4, seed = 1, isa = {"avx512", "avx2"},
            defect_rate = 0.15, [option] = share}
  end
  local built = {}
  local function corpus(share)
    built[share or "none"] = built[share or "none"] or pretrain.build_corpus(settings(share))
    return built[share or "none"]
  end
  local function check_zero()
    local plain = corpus(nil)
    t.eq(pretrain.build_corpus(settings(0)), plain)
    t.eq(pretrain.identity(settings(0))[option], nil)
    t.eq(pretrain.identity(settings(0.5))[option], 0.5)
    return plain
  end
  return settings, corpus, check_zero
end

function M.recorded(settings)
  settings.universe_version, settings.corpus_version = require("universe").version, require("kernelgen").corpus_version
  return settings
end

function M.model_with(settings, dir)
  dir = dir or t.tmpdir()
  json.write(dir .. "/pretrain.json", {settings = settings})
  return dir
end

return M
