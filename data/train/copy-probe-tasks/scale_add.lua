-- axpy under the name scale_add (README.md).
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
return dofile(here .. "/lib/axpy_as.lua")("scale_add", _ENV)
