// Where the engine finds its Lua library, scripts and models, whether it runs from the
// build tree or was installed with `cmake --install`.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace host {

struct Paths {
  std::filesystem::path root;  // holds stdlib/, scripts/, models/
  std::vector<std::filesystem::path> script_dirs;  // searched for a bare script name
  std::filesystem::path models;
  std::vector<std::filesystem::path> lua_dirs;  // what require() searches, in order
  std::string lua_path;  // package.path from lua_dirs, without the standard entries
};

// ENGINE_HOME overrides the search; otherwise <exe>/../share/engine when installed, else
// the source tree the engine was built from.
Paths find_paths();

// A script given by bare name: the working directory first, then script_dirs.
std::optional<std::filesystem::path> find_script(const Paths& paths, const std::string& name);

}  // namespace host
