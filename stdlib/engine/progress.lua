-- A progress display for long loops: steps done, rate, ETA and a few live figures.
-- On a terminal one line is redrawn in place; otherwise a plain line is printed at most
-- every `interval` seconds (and at the end), so logs stay readable.
--
--   local bar = progress.new{total = 200, label = "exp1"}
--   for step = 1, 200 do ...; bar:update(step, {reward = r, gflops = g}) end
--   bar:finish()

local sys = require "engine.sys"

local progress = {}
progress.__index = progress

local function clock(seconds)
  if seconds ~= seconds or seconds == math.huge or seconds < 0 then return "--:--" end
  seconds = math.floor(seconds + 0.5)
  local h, m, s = seconds // 3600, (seconds % 3600) // 60, seconds % 60
  if h > 0 then return string.format("%d:%02d:%02d", h, m, s) end
  return string.format("%02d:%02d", m, s)
end
progress.clock = clock

local function figure(v)
  if math.type(v) == "float" then return string.format("%.4g", v) end
  return tostring(v)
end

-- opts: total (nil: unknown), label, interval (seconds between plain lines, default 10),
-- stream (default io.stdout), tty (default: whether stdout is a terminal), width of the bar.
function progress.new(opts)
  opts = opts or {}
  local self = setmetatable({
    total = opts.total, label = opts.label or "", interval = opts.interval or 10,
    stream = opts.stream or io.stdout, width = opts.width or 24,
    started = sys.now(), last_print = -math.huge, done = 0, figures = {}, keys = {},
  }, progress)
  if opts.tty == nil then self.tty = (self.stream == io.stdout) and sys.isatty("stdout")
  else self.tty = opts.tty end
  return self
end

function progress:line()
  local elapsed = sys.now() - self.started
  local rate = elapsed > 0 and self.done / elapsed or 0
  local parts = {}
  if self.label ~= "" then parts[#parts + 1] = self.label end
  if self.total then
    if self.tty then
      local filled = math.floor(self.width * math.min(1, self.done / math.max(self.total, 1)))
      parts[#parts + 1] = "[" .. ("#"):rep(filled) .. ("."):rep(self.width - filled) .. "]"
    end
    parts[#parts + 1] = string.format("%d/%d", self.done, self.total)
  else
    parts[#parts + 1] = tostring(self.done)
  end
  parts[#parts + 1] = string.format("%.3g/s", rate)
  if self.total then
    local left = self.total - self.done
    parts[#parts + 1] = "ETA " .. clock(rate > 0 and left / rate or math.huge)
  end
  parts[#parts + 1] = "elapsed " .. clock(elapsed)
  for _, k in ipairs(self.keys) do parts[#parts + 1] = k .. "=" .. figure(self.figures[k]) end
  return table.concat(parts, " ")
end

-- done: steps completed so far; figures: a table of live values (kept until replaced).
function progress:update(done, figures)
  self.done = done or (self.done + 1)
  for k, v in pairs(figures or {}) do
    if self.figures[k] == nil then
      self.keys[#self.keys + 1] = k
      table.sort(self.keys)
    end
    self.figures[k] = v
  end
  local now = sys.now()
  if self.tty then
    self.stream:write("\r", self:line(), "\27[K")
    self.stream:flush()
  elseif now - self.last_print >= self.interval or (self.total and self.done >= self.total) then
    self.stream:write(self:line(), "\n")
    self.stream:flush()
    self.last_print = now
  end
end

function progress:finish()
  if self.tty then
    self.stream:write("\r", self:line(), "\27[K\n")
  elseif self.last_print < sys.now() - 1e-9 and not (self.total and self.done >= self.total) then
    self.stream:write(self:line(), "\n")
  end
  self.stream:flush()
end

return progress
