// The command line of policy_bench and train_bench after the command: --flag value pairs,
// and a flag's value or its default.
#pragma once

#include <map>
#include <stdexcept>
#include <string>

namespace policy_bench {

using Flags = std::map<std::string, std::string>;

// argv[from..] as --flag value pairs; a word that is not a --flag is an error naming it.
inline Flags flags(int argc, char** argv, int from) {
  Flags f;
  for (int i = from; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k.rfind("--", 0) != 0) throw std::invalid_argument("expected --flag value, got " + k);
    f[k.substr(2)] = argv[i + 1];
  }
  return f;
}

inline std::string get(const Flags& f, const std::string& k, const std::string& dflt) {
  auto it = f.find(k);
  return it == f.end() ? dflt : it->second;
}

}  // namespace policy_bench
