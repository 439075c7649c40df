#include "bench/machine.hpp"
#include "files/cores.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "compile/run_command.hpp"

namespace bench {

namespace {

// The flags cc1 receives for `gcc -march=X`: gcc's own resolution of a target.
std::vector<std::string> driver_flags(const std::string& march, std::string* cpu) {
  auto r = run_process({"gcc", "-march=" + march, "-E", "-v", "-x", "c", "/dev/null", "-o", "/dev/null"},
                       {"LC_ALL=C"});
  if (r.status != 0) throw std::runtime_error("gcc -march=" + march + " failed: " + r.output);
  std::istringstream lines(r.output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find("cc1") == std::string::npos || line.find(" -march=") == std::string::npos) continue;
    std::istringstream words(line);
    std::vector<std::string> flags;
    std::string w;
    bool param = false;
    while (words >> w) {
      if (param) {  // --param NAME=VALUE (cache sizes) belongs with the target
        flags.push_back("--param=" + w);
        param = false;
      } else if (w == "--param") {
        param = true;
      } else if (w.rfind("-march=", 0) == 0) {
        if (cpu) *cpu = w.substr(7);
        flags.push_back(w);
      } else if (w.rfind("-m", 0) == 0) {
        flags.push_back(w);
      }
    }
    return flags;
  }
  throw std::runtime_error("cannot read the target flags from gcc -v");
}

// gcc's boolean target options (-mavx512f [enabled]) for `-march=X`.
std::map<std::string, bool> target_switches(const std::string& march) {
  auto r = run_process({"gcc", "-march=" + march, "-Q", "--help=target"}, {"LC_ALL=C"});
  if (r.status != 0) throw std::runtime_error("gcc -march=" + march + " -Q --help=target failed: " + r.output);
  std::map<std::string, bool> out;
  std::istringstream lines(r.output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name, state;
    if (!(words >> name >> state) || name.rfind("-m", 0) != 0 || name.rfind("-mno-", 0) == 0) continue;
    if (state == "[enabled]") out[name.substr(2)] = true;
    else if (state == "[disabled]") out[name.substr(2)] = false;
  }
  return out;
}

std::vector<std::string> detect_march(std::string& cpu) {
  auto native = driver_flags("native", &cpu);
  // The CPU name plus what the host adds to or removes from that name's defaults:
  // short, explicit, and accepted by libgccjit (which rejects -march=native).
  std::vector<std::string> out = {"-march=" + cpu};
  auto host = target_switches("native"), base = target_switches(cpu);
  for (const auto& [name, on] : host) {
    auto it = base.find(name);
    if (it != base.end() && it->second != on) out.push_back((on ? "-m" : "-mno-") + name);
  }
  for (const auto& f : native)
    if (f.rfind("--param=", 0) == 0) out.push_back(f);  // cache sizes for the tuning
  return out;
}

// The extensions reported, by their /proc/cpuinfo names.
const char* const kVectorFlags[] = {"sse2", "sse3", "ssse3", "sse4_1", "sse4_2", "avx", "avx2", "fma",
                                    "avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl",
                                    "avx512ifma", "avx512vbmi", "avx512_vnni", "avx512_bf16",
                                    "avx512_fp16", "amx_tile", "amx_bf16"};

// cpuinfo's flag names for gcc's target switches where the two differ.
std::string switch_name(const std::string& flag) {
  if (flag == "sse4_1") return "sse4.1";
  if (flag == "sse4_2") return "sse4.2";
  if (flag.rfind("avx512_", 0) == 0) return "avx512" + flag.substr(7);
  if (flag.rfind("amx_", 0) == 0) return "amx-" + flag.substr(4);
  return flag;
}

// Narrows the host's extensions to those `target` enables, after checking that the host
// has every one of them (a forced target must still run here).
void force_target(Machine& m, const std::string& target, const std::set<std::string>& host_flags) {
  for (char c : target)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      throw std::runtime_error("ENGINE_TARGET: '" + target + "' is not a CPU name");
  std::map<std::string, bool> on;
  try {
    on = target_switches(target);
  } catch (const std::exception&) {
    throw std::runtime_error("ENGINE_TARGET: gcc does not know the target '" + target + "'");
  }
  for (const char* f : kVectorFlags)
    if (on[switch_name(f)] && !host_flags.count(f))
      throw std::runtime_error("ENGINE_TARGET=" + target + " enables " + f + ", which this CPU (" + m.model +
                               ") lacks");
  std::vector<std::string> kept;
  for (const auto& f : m.isa)
    if (on[switch_name(f)]) kept.push_back(f);
  m.isa = kept;
  m.target = m.cpu = target;
  m.march = {"-march=" + target};
}

Machine detect() {
  Machine m;
  m.cores = files::usable_cores();
  std::ifstream info("/proc/cpuinfo");
  std::string line, flags;
  double mhz = 0;
  while (std::getline(info, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && m.model.empty()) m.model = value;
    if (key == "flags" && flags.empty()) flags = value;
    if (key == "cpu MHz" && mhz == 0) mhz = std::atof(value.c_str());
  }
  // The maximum clock when the kernel exposes it; else the clock /proc/cpuinfo reports.
  std::ifstream maxf("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  double khz = 0;
  if (maxf >> khz && khz > 0) mhz = khz / 1000;
  m.ghz = mhz / 1000;
  std::set<std::string> have;
  std::istringstream fl(flags);
  for (std::string f; fl >> f;) have.insert(f == "pni" ? "sse3" : f);
  for (const char* f : kVectorFlags)
    if (have.count(f)) m.isa.push_back(f);
  const char* forced = std::getenv("ENGINE_TARGET");
  if (forced && *forced && std::string(forced) != "native") {
    force_target(m, forced, have);
  } else {
    m.march = detect_march(m.cpu);
  }
  auto uses = [&](const char* f) { return std::find(m.isa.begin(), m.isa.end(), f) != m.isa.end(); };
  m.simd = uses("avx512f") ? "avx512" : uses("avx2") ? "avx2" : uses("avx") ? "avx" : "sse2";
  m.vector_doubles = uses("avx512f") ? 8 : uses("avx") ? 4 : 2;
  m.fma_units = 2;
  int flops_per_fma = uses("fma") || uses("avx512f") ? 2 : 1;
  m.peak_gflops = m.cores * m.ghz * m.vector_doubles * flops_per_fma * m.fma_units;
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "%d cores x %.3f GHz x %d doubles/vector (%s) x %d flops/FMA x %d FMA units/core "
                "= %.1f GFLOPS (clock from %s; 2 FMA units per core assumed)",
                m.cores, m.ghz, m.vector_doubles,
                m.vector_doubles == 8 ? "AVX-512" : m.vector_doubles == 4 ? "AVX" : "SSE2",
                flops_per_fma, m.fma_units, m.peak_gflops,
                khz > 0 ? "cpuinfo_max_freq" : "/proc/cpuinfo, nominal");
  m.peak_formula = buf;
  const int bytes_per_cycle = 3 * m.vector_doubles * 8;
  m.peak_gbps = m.cores * m.ghz * bytes_per_cycle;
  std::snprintf(buf, sizeof buf, "%d cores x %.3f GHz x %d bytes/cycle (2 loads and 1 store of %d doubles) = %.1f GB/s",
                m.cores, m.ghz, bytes_per_cycle, m.vector_doubles, m.peak_gbps);
  m.peak_gbps_formula = buf;
  return m;
}

}  // namespace

const Machine& machine() {
  static std::once_flag once;
  static Machine m;
  std::call_once(once, [] { m = detect(); });
  return m;
}

std::vector<std::string> resolve_march(const std::string& march) {
  if (march.empty() || march == "native") return machine().march;
  if (march[0] == '-') {
    std::istringstream words(march);
    std::vector<std::string> flags;
    for (std::string w; words >> w;) {
      if (w.rfind("-m", 0) != 0 && w.rfind("--param=", 0) != 0)
        throw std::invalid_argument("march: '" + w + "' is not a target flag (-m... or --param=...)");
      if (w == "-march=native" || w == "-mtune=native")
        throw std::invalid_argument("march: give 'native' alone, not " + w);
      flags.push_back(w);
    }
    return flags;
  }
  for (char c : march)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      throw std::invalid_argument("march: '" + march + "' is not a CPU name");
  return {"-march=" + march};
}

std::string join_flags(const std::vector<std::string>& flags) {
  std::string s;
  for (const auto& f : flags) s += (s.empty() ? "" : " ") + f;
  return s;
}

}  // namespace bench
