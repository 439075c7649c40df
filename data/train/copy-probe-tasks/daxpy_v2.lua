-- axpy under the name daxpy_v2 (README.md).
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
return dofile(here .. "/lib/axpy_as.lua")("daxpy_v2", _ENV)
