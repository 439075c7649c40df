local t = require "engine.test"
local pretty = require "engine.pretty"

t.test("json round-trips nested values", function()
  local v = {name = "k04", times = {0.25, 0.5}, ok = true, nested = {deep = {1}}}
  t.eq(json.decode(json.encode(v)), v)
end)

t.test("json keeps empty arrays and null", function()
  t.eq(json.encode(json.decode('{"a":[],"b":null}')), '{"a":[],"b":null}')
  t.eq(json.encode({}), "{}")
  t.eq(json.encode(json.array()), "[]")
end)

t.test("json integers and floats stay apart", function()
  local v = json.decode('[1, 1.5, 1e3]')
  t.eq(math.type(v[1]), "integer")
  t.eq(math.type(v[2]), "float")
  t.eq(json.encode({0.1}), "[0.1]")
end)

t.test("json read and write files", function()
  local dir = t.tmpdir()
  json.write(dir .. "/x.json", {a = 1})
  t.eq(json.read(dir .. "/x.json"), {a = 1})
  t.raises(function() json.read(dir .. "/missing.json") end, "cannot open")
  local f = io.open(dir .. "/bad.json", "w") f:write("{oops") f:close()
  t.raises(function() json.read(dir .. "/bad.json") end, "bad.json")
end)

t.test("pretty prints nested tables with a depth limit", function()
  t.eq(pretty.format({1, 2, {x = 1}}), "{ 1, 2, { x = 1 } }")
  t.eq(pretty.format({a = {b = {c = {d = {}}}}}, {depth = 2}), "{ a = { b = {...} } }")
  t.eq(pretty.format("a\nb"), '"a\\nb"')
  t.eq(pretty.format(1.0), "1.0")
  local c = {} c.me = c
  t.eq(pretty.format(c), "{ me = <cycle> }")
  local long = {}
  for i = 1, 30 do long["key" .. i] = i end
  t.ok(pretty.format(long):find("\n  key1 = 1,\n"), "long tables break into lines")
end)

t.run()
