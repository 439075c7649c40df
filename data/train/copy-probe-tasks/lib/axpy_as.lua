-- The suite's axpy spec with its function renamed `name` wherever it is code (the prototype,
-- the reference, the yardsticks' wrappers); `env` is the spec file's, which lends the
-- yardstick helpers axpy.lua calls. Kept out of the task folder's own *.lua, which are specs.
return function(name, env)
  local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
  local spec = assert(loadfile(here .. "/../../../../stdlib/tasks/axpy.lua", "t", env))()
  local function renamed(code) return (code:gsub("%f[%w_]axpy%f[^%w_]", name)) end
  spec.name, spec.prototype, spec.reference = name, renamed(spec.prototype), renamed(spec.reference)
  for _, y in pairs(spec.yardsticks) do y.source = renamed(y.source) end
  return spec
end
