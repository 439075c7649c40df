// The confinement of a CUDA request's child (cuda_child.cpp): a seccomp filter installed
// before the driver is loaded. The model writes device code only, so nothing it writes
// runs on the host; the filter is the second wall around the harness's own process, as
// the CPU kernel's allow-list is the first around a kernel: what the driver needs stays
// (files, ioctl, memory, threads, its own signals, local sockets), what no driver needs
// is refused with EPERM (new processes, programs, network sockets, signals or tracing of
// other processes, namespaces, kernel modules, BPF, perf events).
#pragma once

#include <nlohmann/json.hpp>

namespace bench::detail {

// Installs the filter in the calling process (and the threads it creates later); false
// where the kernel refuses it.
bool confine_cuda_child();

// What the confined process gets when it tries each refused call: {"fork": "EPERM", ...}
// ("allowed" where a call went through). For tests of the filter. It also prints a line on
// stdout (through stdio) and one on stderr, then `print_bytes` more on stdout, as a
// kernel's printf would: for tests that the evaluation process keeps them in the record
// (kernel_output) and passes none of them on. It answers after `spin_ms` of work, as a
// kernel that runs long would: for tests of a request's timeout.
nlohmann::json cuda_sandbox_probe(size_t print_bytes = 0, double spin_ms = 0);

}  // namespace bench::detail
