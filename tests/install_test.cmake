# Installs the engine into a fresh prefix and checks that it finds its Lua library and
# scripts from there, with no environment variable and from an unrelated directory.
file(REMOVE_RECURSE "${WORK}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD}" --prefix "${WORK}/prefix"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed")
endif()
file(MAKE_DIRECTORY "${WORK}/elsewhere")
execute_process(
  COMMAND "${WORK}/prefix/bin/engine" -e "local a = require 'engine.args' print(engine.root, a ~= nil)"
  WORKING_DIRECTORY "${WORK}/elsewhere" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "prefix/share/engine\ttrue")
  message(FATAL_ERROR "installed engine did not find its library: ${out} ${err}")
endif()
execute_process(
  COMMAND "${WORK}/prefix/bin/engine" host_check.lua --steps=1 --out=${WORK}/elsewhere/run
  WORKING_DIRECTORY "${WORK}/elsewhere" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "host check: 4 samples")
  message(FATAL_ERROR "installed engine did not find host_check.lua: ${out} ${err}")
endif()
message(STATUS "installed engine works: ${out}")
