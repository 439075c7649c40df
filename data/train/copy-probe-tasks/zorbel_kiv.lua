-- axpy under the name zorbel_kiv (README.md).
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
return dofile(here .. "/lib/axpy_as.lua")("zorbel_kiv", _ENV)
