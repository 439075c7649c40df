-- Hyperparameter sweeps: the cartesian product of named parameter lists, a stable name
-- per configuration, selection of a subset from the command line, and a runner.
--
--   local configs = sweep.product{{"opt", {"O0", "O3"}}, {"lr", {2e-7, 5e-7}}}
--   --> {opt="O0", lr=2e-7}, {opt="O0", lr=5e-7}, {opt="O3", lr=2e-7}, {opt="O3", lr=5e-7}
--   sweep.run(configs, function(config, i) ... end)

local sweep = {}

-- The parameters of a spec in order: a list of {name, values} keeps its order; a map
-- {name = values} is taken in sorted name order.
local function parameters(spec)
  local params = {}
  if spec[1] ~= nil then
    for _, p in ipairs(spec) do
      assert(type(p[1]) == "string" and type(p[2]) == "table",
             "sweep: each parameter is {name, {values...}}")
      params[#params + 1] = {name = p[1], values = p[2]}
    end
  else
    local names = {}
    for k in pairs(spec) do names[#names + 1] = k end
    table.sort(names)
    for _, k in ipairs(names) do params[#params + 1] = {name = k, values = spec[k]} end
  end
  for _, p in ipairs(params) do
    assert(#p.values > 0, "sweep: parameter '" .. p.name .. "' has no values")
  end
  return params
end

-- The first parameter varies slowest, as nested loops written in the same order would.
function sweep.product(spec)
  local params = parameters(spec)
  local out = {}
  local function fill(i, config)
    if i > #params then
      local copy = {}
      for k, v in pairs(config) do copy[k] = v end
      out[#out + 1] = copy
      return
    end
    for _, v in ipairs(params[i].values) do
      config[params[i].name] = v
      fill(i + 1, config)
    end
    config[params[i].name] = nil
  end
  fill(1, {})
  return out
end

local function value_text(v)
  if math.type(v) == "float" then return string.format("%g", v) end
  return tostring(v)
end

-- A stable, filesystem-safe name: "lr=5e-07,opt=O3" (keys sorted unless given).
function sweep.name(config, keys)
  if not keys then
    keys = {}
    for k in pairs(config) do keys[#keys + 1] = k end
    table.sort(keys)
  end
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. value_text(config[k]) end
  return (table.concat(parts, ","):gsub("[^%w%.,=%-_+]", "_"))
end

-- Keeps the configurations a selector names. A selector is nil or "" (all), a list of
-- 1-based indices "1,4,7", or conditions "opt=O3,lr=5e-7" that must all hold.
function sweep.select(configs, selector)
  if selector == nil or selector == "" then return configs end
  local out = {}
  if selector:match("^[%d,%s]+$") then
    for idx in selector:gmatch("%d+") do
      local i = tonumber(idx)
      if not configs[i] then
        error(string.format("sweep: no configuration %d (there are %d)", i, #configs), 2)
      end
      out[#out + 1] = configs[i]
    end
    return out
  end
  local conditions = {}
  for key, value in selector:gmatch("([%w_]+)=([^,]+)") do conditions[key] = value end
  if next(conditions) == nil then error("sweep: cannot read selector '" .. selector .. "'", 2) end
  for _, c in ipairs(configs) do
    local keep = true
    for k, v in pairs(conditions) do
      if c[k] == nil then error("sweep: selector names unknown parameter '" .. k .. "'", 2) end
      local cv = c[k]
      if type(cv) == "number" then keep = keep and tonumber(v) == cv
      else keep = keep and tostring(cv) == v end
    end
    if keep then out[#out + 1] = c end
  end
  if #out == 0 then error("sweep: selector '" .. selector .. "' matches no configuration", 2) end
  return out
end

-- Calls fn(config, index) for each configuration; returns {config =, result =} per call.
-- opts.on_error = "continue" records a failing configuration's error and goes on.
function sweep.run(configs, fn, opts)
  opts = opts or {}
  local results = {}
  for i, config in ipairs(configs) do
    if opts.on_error == "continue" then
      local ok, res = pcall(fn, config, i)
      results[i] = ok and {config = config, result = res} or {config = config, error = res}
    else
      results[i] = {config = config, result = fn(config, i)}
    end
  end
  return results
end

return sweep
