-- Command-line options for scripts: --key=value (or --key value), flags, defaults,
-- choices, named profiles of defaults, and --help generated from the declarations.
--
--   local opts = args.parse(arg, {
--     description = "Experiment 1: fixed prompts, GRPO",
--     options = {
--       {"steps", 200, "GRPO steps"},
--       {"opt", "O3", "compiler level", choices = {"O0", "O1", "O2", "O3"}},
--       {"lrs", {2e-7, 5e-7}, "learning rates (comma-separated)"},
--       {"resume", false, "continue a killed run"},
--       {"model", nil, "checkpoint directory", type = "string"},
--     },
--     profiles = {small = {steps = 20}},   -- --profile=small changes these defaults
--   })
--   opts.steps, opts._ (positional arguments)
--
-- Values can be checked before a script does anything with them: `min`/`max` (bounds,
-- inclusive), `above` (an exclusive lower bound) and `check` (a function of the value
-- that returns true, or nil and the reason) on an option; for a list each item is
-- checked. `spec.check(opts)` returns nil or a message for rules across options. A value
-- that fails is refused like a malformed one: one line naming the option.
--
--   {"steps", 200, "GRPO steps", min = 1}
--   {"timeout", 8.0, "seconds per kernel", above = 0}
--   {"device", "auto", "cpu, cuda, cuda:N", check = function(v) ... end}

local args = {}

local function kind_of(decl)
  if decl.type then return decl.type end
  local d = decl[2]
  if type(d) == "table" then
    return "list", (d[1] ~= nil and math.type(d[1]) or type(d[1] or ""))
  end
  if math.type(d) == "integer" then return "integer" end
  if type(d) == "number" then return "number" end
  if type(d) == "boolean" then return "boolean" end
  return "string"
end

local function convert(text, kind, name)
  if kind == "string" then return text end
  if kind == "integer" then
    local v = math.tointeger(tonumber(text))
    if not v then return nil, string.format("--%s expects an integer, got '%s'", name, text) end
    return v
  end
  if kind == "number" or kind == "float" then
    local v = tonumber(text)
    if not v then return nil, string.format("--%s expects a number, got '%s'", name, text) end
    return v
  end
  if kind == "boolean" then
    if text == "true" or text == "1" or text == "yes" then return true end
    if text == "false" or text == "0" or text == "no" then return false end
    return nil, string.format("--%s expects true or false, got '%s'", name, text)
  end
  error("unknown option type " .. tostring(kind))
end

local function convert_list(text, item_kind, name)
  local out = {}
  if text == "" then return out end
  for item in (text .. ","):gmatch("([^,]*),") do
    local v, err = convert(item, item_kind == "" and "string" or item_kind, name)
    if v == nil then return nil, err end
    out[#out + 1] = v
  end
  return out
end

local function show_default(v)
  if type(v) == "table" then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = tostring(x) end
    return table.concat(parts, ",")
  end
  return tostring(v)
end

local function declarations(spec)
  local decls, by_name = {}, {}
  for _, d in ipairs(spec.options or {}) do
    assert(type(d[1]) == "string", "args: each option needs a name")
    local kind, item = kind_of(d)
    local decl = {name = d[1], default = d[2], help = d[3] or "", kind = kind, item = item,
                  choices = d.choices, min = d.min, max = d.max, above = d.above,
                  check = d.check}
    decls[#decls + 1] = decl
    by_name[decl.name] = decl
  end
  if spec.profiles and not by_name.profile then
    local names = {}
    for k in pairs(spec.profiles) do names[#names + 1] = k end
    table.sort(names)
    local decl = {name = "profile", default = spec.default_profile, kind = "string",
                  help = "a named set of defaults", choices = names}
    table.insert(decls, 1, decl)
    by_name.profile = decl
  end
  return decls, by_name
end

-- The --help text.
function args.help(spec, program)
  local decls = declarations(spec)
  local lines = {}
  lines[#lines + 1] = "usage: " .. (program or spec.program or "script") .. " [options]" ..
    (spec.positional and (" " .. spec.positional) or "")
  if spec.description then lines[#lines + 1] = "\n" .. spec.description end
  lines[#lines + 1] = "\noptions:"
  for _, d in ipairs(decls) do
    local left = "  --" .. d.name .. (d.kind == "boolean" and "" or ("=" .. d.kind:upper()))
    local right = d.help
    if d.choices then right = right .. " (one of: " .. table.concat(d.choices, ", ") .. ")" end
    local range = {}
    if d.above ~= nil then range[#range + 1] = "> " .. tostring(d.above) end
    if d.min ~= nil then range[#range + 1] = ">= " .. tostring(d.min) end
    if d.max ~= nil then range[#range + 1] = "<= " .. tostring(d.max) end
    if #range > 0 then right = right .. " (" .. table.concat(range, ", ") .. ")" end
    if d.default ~= nil then right = right .. " [default: " .. show_default(d.default) .. "]" end
    lines[#lines + 1] = string.format("%-28s %s", left, right)
  end
  if spec.profiles then
    lines[#lines + 1] = "\nprofiles (--profile=NAME sets these defaults; explicit options win):"
    local names = {}
    for k in pairs(spec.profiles) do names[#names + 1] = k end
    table.sort(names)
    for _, name in ipairs(names) do
      local keys = {}
      for k in pairs(spec.profiles[name]) do keys[#keys + 1] = k end
      table.sort(keys)
      local parts = {}
      for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. show_default(spec.profiles[name][k]) end
      lines[#lines + 1] = "  " .. name .. ": " .. table.concat(parts, " ")
    end
  end
  lines[#lines + 1] = "  --help                       print this help"
  return table.concat(lines, "\n") .. "\n"
end

local function check_choice(d, v)
  if not d.choices then return true end
  local values = d.kind == "list" and v or {v}
  for _, x in ipairs(values) do
    local ok = false
    for _, c in ipairs(d.choices) do if c == x then ok = true end end
    if not ok then
      return nil, string.format("--%s: '%s' is not one of: %s", d.name, tostring(x),
                                table.concat(d.choices, ", "))
    end
  end
  return true
end

-- The bounds and the check function of an option, for one value.
local function check_value(d, v, prefix)
  local function fail(what)
    return nil, string.format("%s must be %s, got %s", prefix, what, tostring(v))
  end
  if type(v) == "number" then
    if d.above ~= nil and not (v > d.above) then return fail("greater than " .. tostring(d.above)) end
    if d.min ~= nil and not (v >= d.min) then return fail("at least " .. tostring(d.min)) end
    if d.max ~= nil and not (v <= d.max) then return fail("at most " .. tostring(d.max)) end
  end
  if d.check then
    local ok, why = d.check(v)
    if not ok then
      return nil, string.format("%s: %s", prefix, why or ("'" .. tostring(v) .. "' is not allowed"))
    end
  end
  return true
end

local function check_bounds(d, v)
  if v == nil then return true end
  if d.kind == "list" and type(v) == "table" then
    for _, x in ipairs(v) do
      local ok, err = check_value(d, x, "--" .. d.name .. ": each value")
      if not ok then return nil, err end
    end
    return true
  end
  return check_value(d, v, "--" .. d.name)
end

-- Returns opts, or nil and an error message, or nil, nil and the help text for --help.
function args.try_parse(argv, spec)
  local decls, by_name = declarations(spec)
  local given, positional = {}, {}
  local i = 1
  while argv[i] ~= nil do
    local a = argv[i]
    if a == "--" then
      for j = i + 1, #argv do positional[#positional + 1] = argv[j] end
      break
    elseif a == "--help" or a == "-h" then
      return nil, nil, args.help(spec, argv[0])
    elseif a:sub(1, 2) == "--" then
      local name, value = a:match("^%-%-([^=]+)=(.*)$")
      name = name or a:sub(3)
      local negated = false
      if not by_name[name] and name:sub(1, 3) == "no-" and by_name[name:sub(4)]
         and by_name[name:sub(4)].kind == "boolean" and value == nil then
        name, negated = name:sub(4), true
      end
      local d = by_name[name]
      if not d then
        return nil, string.format("unknown option --%s (see --help)", name)
      end
      if value == nil then
        if d.kind == "boolean" then
          value = negated and "false" or "true"
        else
          i = i + 1
          value = argv[i]
          if value == nil then return nil, string.format("--%s needs a value", name) end
        end
      end
      local v, err
      if d.kind == "list" then v, err = convert_list(value, d.item, name)
      else v, err = convert(value, d.kind, name) end
      if v == nil then return nil, err end
      local ok, cerr = check_choice(d, v)
      if not ok then return nil, cerr end
      given[name] = v
    else
      positional[#positional + 1] = a
    end
    i = i + 1
  end

  local opts = {_ = positional}
  local profile = given.profile or (by_name.profile and by_name.profile.default)
  local defaults = {}
  if profile then
    if not (spec.profiles and spec.profiles[profile]) then
      return nil, "unknown profile '" .. tostring(profile) .. "'"
    end
    for k, v in pairs(spec.profiles[profile]) do
      if not by_name[k] then return nil, "profile " .. profile .. " sets unknown option " .. k end
      defaults[k] = v
    end
  end
  for _, d in ipairs(decls) do
    local v = given[d.name]
    if v == nil then v = defaults[d.name] end
    if v == nil then v = d.default end
    local ok, err = check_bounds(d, v)
    if not ok then return nil, err end
    opts[d.name] = v
  end
  opts.profile = profile
  opts._given = given  -- what the command line set, for scripts that record it
  if spec.check then
    local err = spec.check(opts)
    if err then return nil, err end
  end
  return opts
end

-- Parses or leaves: --help prints the help and exits 0, a bad option prints why and exits 2.
function args.parse(argv, spec)
  local opts, err, help = args.try_parse(argv, spec)
  if help then
    io.stdout:write(help)
    os.exit(0)
  end
  if not opts then
    io.stderr:write((argv[0] or "script") .. ": " .. err .. "\n")
    os.exit(2)
  end
  return opts
end

return args
