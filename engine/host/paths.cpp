#include "host/paths.hpp"

#include <unistd.h>

#include <cstdlib>

namespace fs = std::filesystem;

namespace host {

static fs::path executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

static bool is_root(const fs::path& dir) {
  std::error_code ec;
  return !dir.empty() && fs::is_directory(dir / "stdlib" / "engine", ec);
}

static fs::path find_root() {
  if (const char* home = std::getenv("ENGINE_HOME"); home && *home) return home;
  fs::path installed = executable_dir() / ".." / ENGINE_DATA_SUBDIR;
  if (is_root(installed)) return fs::weakly_canonical(installed);
  return ENGINE_SOURCE_ROOT;
}

Paths find_paths() {
  Paths p;
  p.root = find_root();
  p.script_dirs = {p.root / "scripts" / "experiments", p.root / "scripts"};
  p.models = p.root / "models";
  const fs::path& r = p.root;
  // the shipped library, the paper's building blocks, the pretraining tools (kernelgen, tiny_model)
  p.lua_dirs = {r / "stdlib", r / "scripts" / "lib", r / "scripts" / "pretraining"};
  for (const fs::path& dir : p.lua_dirs) {
    if (!p.lua_path.empty()) p.lua_path += ";";
    p.lua_path += (dir / "?.lua").string() + ";" + (dir / "?" / "init.lua").string();
  }
  return p;
}

std::optional<fs::path> find_script(const Paths& paths, const std::string& name) {
  std::error_code ec;
  if (fs::is_regular_file(name, ec)) return fs::path(name);
  if (fs::path(name).has_parent_path()) return std::nullopt;  // a path, not a bare name
  for (const auto& dir : paths.script_dirs)
    if (fs::is_regular_file(dir / name, ec)) return dir / name;
  return std::nullopt;
}

}  // namespace host
