#include "evaluator/cuda_sandbox.hpp"

#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "files/clock.hpp"

namespace bench::detail {

bool confine_cuda_child() {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return false;
  const uint32_t refuse = SCMP_ACT_ERRNO(EPERM);
  seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  // Threads only: a clone without CLONE_THREAD would be a new process; clone3 passes its
  // flags in memory a filter cannot read, so glibc is made to fall back to clone.
  seccomp_rule_add(ctx, refuse, SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  // Signals to this process only (the driver's threads signal each other).
  const pid_t self = getpid();
  seccomp_rule_add(ctx, refuse, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_NE, static_cast<scmp_datum_t>(self)));
  seccomp_rule_add(ctx, refuse, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_NE, static_cast<scmp_datum_t>(self)));
  // Sockets on this machine's filesystem only: no network.
  seccomp_rule_add(ctx, refuse, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX));
  for (int nr : {SCMP_SYS(fork), SCMP_SYS(vfork), SCMP_SYS(execve), SCMP_SYS(execveat), SCMP_SYS(tkill),
                 SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev),
                 SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_getfd), SCMP_SYS(pidfd_send_signal),
                 SCMP_SYS(socketpair), SCMP_SYS(mount), SCMP_SYS(umount2), SCMP_SYS(chroot),
                 SCMP_SYS(pivot_root), SCMP_SYS(unshare), SCMP_SYS(setns), SCMP_SYS(bpf),
                 SCMP_SYS(perf_event_open), SCMP_SYS(init_module), SCMP_SYS(finit_module),
                 SCMP_SYS(delete_module), SCMP_SYS(kexec_load), SCMP_SYS(reboot), SCMP_SYS(swapon),
                 SCMP_SYS(swapoff), SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key),
                 SCMP_SYS(userfaultfd), SCMP_SYS(io_uring_setup), SCMP_SYS(personality)})
    seccomp_rule_add(ctx, refuse, nr, 0);
  const bool loaded = seccomp_load(ctx) == 0;
  seccomp_release(ctx);
  return loaded;
}

namespace {

// "allowed" when a call returned >= 0, else its errno's name.
std::string outcome(long rc) {
  if (rc >= 0) return "allowed";
  const char* name = strerrorname_np(errno);
  return name ? name : std::to_string(errno);
}

}  // namespace

nlohmann::json cuda_sandbox_probe(size_t print_bytes, double spin_ms) {
  for (const double until = files::monotonic_seconds() + spin_ms / 1000; files::monotonic_seconds() < until;) {
  }
  std::printf("cuda_sandbox: a line on the child's stdout\n");
  std::fprintf(stderr, "cuda_sandbox: a line on the child's stderr\n");
  std::string line(63, 'x');
  line += '\n';
  for (size_t left = print_bytes; left > 0;) {
    const size_t n = std::min(left, line.size());
    if (write(STDOUT_FILENO, line.data() + line.size() - n, n) <= 0) break;
    left -= n;
  }
  nlohmann::json out;
  long rc = fork();
  if (rc == 0) _exit(0);  // allowed: the copy ends at once
  if (rc > 0) waitpid(static_cast<pid_t>(rc), nullptr, 0);
  out["fork"] = outcome(rc);
  char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
  out["execve"] = outcome(execve("/bin/true", argv, environ));
  int s = socket(AF_INET, SOCK_STREAM, 0);
  out["socket_inet"] = outcome(s);
  if (s >= 0) close(s);
  s = socket(AF_UNIX, SOCK_STREAM, 0);
  out["socket_unix"] = outcome(s);
  if (s >= 0) close(s);
  out["kill_parent"] = outcome(kill(getppid(), 0));
  out["kill_self"] = outcome(kill(getpid(), 0));
  out["ptrace_parent"] = outcome(ptrace(PTRACE_ATTACH, getppid(), nullptr, nullptr));
  char byte = 0;
  iovec local{&byte, 1}, remote{&byte, 1};
  out["process_vm_readv"] = outcome(process_vm_readv(getppid(), &local, 1, &remote, 1, 0));
  out["unshare"] = outcome(unshare(CLONE_NEWUSER));
  return out;
}

}  // namespace bench::detail
