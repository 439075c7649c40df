#include "evaluator/counters.hpp"

#include <cpuid.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

namespace bench::detail {

namespace {

struct Event {
  const char* name;
  uint32_t type;
  uint64_t config;
  double scale;  // to the unit the record reports
};

constexpr uint64_t cache_event(uint64_t cache, uint64_t op, uint64_t result) {
  return cache | (op << 8) | (result << 16);
}

const Event kHardware[] = {
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1},
    {"l1d_read_misses", PERF_TYPE_HW_CACHE,
     cache_event(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS), 1},
    {"llc_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 1},
};

// Intel's FP_ARITH_INST_RETIRED (event 0xC7), double precision by vector width (Skylake
// and later): instructions, each of 1, 2, 4 or 8 operations (an FMA counts twice).
const Event kIntelFp[] = {
    {"fp_scalar_double", PERF_TYPE_RAW, 0x01c7, 1},
    {"fp_128b_double", PERF_TYPE_RAW, 0x04c7, 1},
    {"fp_256b_double", PERF_TYPE_RAW, 0x10c7, 1},
    {"fp_512b_double", PERF_TYPE_RAW, 0x40c7, 1},
};

const Event kSoftware[] = {
    {"task_clock_ms", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 1e-6},
    {"page_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 1},
    {"context_switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 1},
    {"cpu_migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 1},
};

bool intel_cpu() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return false;
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  return std::strcmp(vendor, "GenuineIntel") == 0;
}

bool has_cpu_pmu() {
  return access("/sys/bus/event_source/devices/cpu", F_OK) == 0 ||
         access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0;
}

std::string paranoid_level() {
  std::ifstream f("/proc/sys/kernel/perf_event_paranoid");
  std::string level;
  return f >> level ? level : "unknown";
}

std::string why_not(int err, uint32_t type) {
  const bool hardware = type != PERF_TYPE_SOFTWARE;
  if (err == ENOENT || err == EOPNOTSUPP || err == EINVAL) {
    if (hardware && !has_cpu_pmu()) return "no hardware PMU (no 'cpu' event source: a VM without a virtual PMU)";
    return "the CPU or its PMU has no such event";
  }
  if (err == EACCES || err == EPERM) return "not permitted (kernel.perf_event_paranoid = " + paranoid_level() + ")";
  if (err == EMFILE || err == ENFILE) return "too many open files";
  if (err == ESRCH) return "the kernel's process had ended";
  return std::strerror(err);
}

int open_event(const Event& e, pid_t pid, bool exclude_kernel) {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = e.type;
  a.config = e.config;
  a.inherit = 1;  // threads the process starts later
  a.exclude_kernel = exclude_kernel;
  a.exclude_hv = 1;
  a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  return static_cast<int>(syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

}  // namespace

Counters::Counters(pid_t pid) {
  std::vector<Event> wanted(std::begin(kHardware), std::end(kHardware));
  if (intel_cpu()) {
    wanted.insert(wanted.end(), std::begin(kIntelFp), std::end(kIntelFp));
  } else {
    for (const Event& e : kIntelFp)
      unavailable_[e.name] = "no floating-point events by vector width known for this CPU (Intel's only)";
  }
  wanted.insert(wanted.end(), std::begin(kSoftware), std::end(kSoftware));
  for (const Event& e : wanted) {
    // The kernel's own instructions, not the system calls it makes; software events count
    // in the kernel, and fall back to user time where the kernel is not to be counted.
    const bool hardware = e.type != PERF_TYPE_SOFTWARE;
    int fd = open_event(e, pid, hardware);
    if (fd < 0 && !hardware && (errno == EACCES || errno == EPERM)) fd = open_event(e, pid, true);
    if (fd < 0) {
      unavailable_[e.name] = why_not(errno, e.type);
      continue;
    }
    names_.push_back(e.name);
    fds_.push_back(fd);
    scale_.push_back(e.scale);
  }
  mark_start();
}

Counters::~Counters() {
  for (int fd : fds_) close(fd);
}

std::vector<double> Counters::read() const {
  std::vector<double> out;
  for (int fd : fds_) {
    uint64_t v[3] = {};  // value, time enabled, time running
    if (::read(fd, v, sizeof v) != static_cast<ssize_t>(sizeof v) || v[2] == 0) {
      out.push_back(NAN);  // never on the PMU: more events than counters at once
    } else {
      out.push_back(static_cast<double>(v[0]) * static_cast<double>(v[1]) / static_cast<double>(v[2]));
    }
  }
  return out;
}

nlohmann::json Counters::record(int calls) const {
  nlohmann::json counters = nlohmann::json::object(), missing = unavailable_;
  const std::vector<double> end = read();
  for (size_t i = 0; i < names_.size(); ++i) {
    const double d = end[i] - (i < start_.size() ? start_[i] : NAN);
    if (calls > 0 && std::isfinite(d)) {
      counters[names_[i]] = d * scale_[i] / calls;
    } else {
      missing[names_[i]] = calls > 0 ? "never scheduled on the PMU (more events than counters at once)"
                                     : "no timed call";
    }
  }
  return {{"counters", counters}, {"counters_unavailable", missing}};
}

}  // namespace bench::detail
