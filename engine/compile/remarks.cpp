#include <fstream>
#include <set>
#include <sstream>

#include "compile/compiler.hpp"

namespace bench {

std::string remarks_flag(const std::string& file) { return "-fopt-info-vec-optimized-missed=" + file; }

std::string read_remarks(const std::string& file, size_t max_chars) {
  std::ifstream in(file);
  std::vector<std::string> vectorised, missed;
  std::set<std::string> seen;
  for (std::string line; std::getline(in, line);) {
    bool is_optimised = line.find(": optimized: ") != std::string::npos;
    if (!is_optimised && line.find(": missed: ") == std::string::npos) continue;
    if (!seen.insert(line).second) continue;  // one loop is reported for each vector size tried
    (is_optimised ? vectorised : missed).push_back(line);
  }
  std::string out;
  size_t left = vectorised.size() + missed.size();
  for (const auto* group : {&vectorised, &missed})
    for (const std::string& line : *group) {
      if (out.size() + line.size() + 1 > max_chars) {
        out += "... (" + std::to_string(left) + " more)\n";
        return out;
      }
      out += line + "\n";
      --left;
    }
  return out;
}

}  // namespace bench
