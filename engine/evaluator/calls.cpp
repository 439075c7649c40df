// Where a kernel's time is measured: the zygote's side of one call. Round trips first
// (pings), then for every call: the CPU clock read while the child is stopped, the
// command (written while it is still stopped, then continued), the answer, the stop, the
// CPU-time bound, the thread count, the check of every output element, the record
// against the zygote's own clock; the child then waits, stopped, for its next turn.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "evaluator/proc_status.hpp"
#include "evaluator/verdict.hpp"
#include "evaluator/zygote_class.hpp"

namespace bench::detail {

// A call's CPU time may not exceed its threads times its span: no honest process gets more
// than one CPU-second per thread per second. Honest kernels read at most 0.985 of it over
// about 7,000 calls on 16 cores and 0.989 over 1,766 on 2 (perf/bench/cpu_bound_bench.lua);
// the slack is for the accounting's own error. One node (a KVM guest) once read an honest
// one-thread call at 1.32 of it: a call over the bound is never timed, and a second such
// call refuses the kernel (extra threads in one call buy it nothing; in every call, a
// refusal).
constexpr double kCpuSlack = 1.02, kCpuGrace = 1e-4;
constexpr double kMinCallSeconds = 1e-9;

void Zygote::read_from(Job& job, const ResolvedOptions& opts) {
  char buf[65536];
  ssize_t n = read(job.from, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    job.eof = true;
    return;
  }
  job.inbuf.append(buf, static_cast<size_t>(n));
  while (job.inbuf.size() >= sizeof(RecordHeader) && !job.eof) {
    RecordHeader h;
    std::memcpy(&h, job.inbuf.data(), sizeof h);
    if (h.len > (64u << 20)) {
      job.protocol_error = "wrote an oversized record on the evaluation's result channel";
      job.eof = true;
      return;
    }
    if (job.inbuf.size() < sizeof h + h.len) return;
    std::string body = job.inbuf.substr(sizeof h, h.len);
    job.inbuf.erase(0, sizeof h + h.len);
    if (h.type == kFault && h.len == sizeof(FaultRecord)) {
      if (!job.fault) {
        FaultRecord f;
        std::memcpy(&f, body.data(), sizeof f);
        job.fault = f;
      }
    } else if (h.type == kCompiled && !job.compiled && job.state == Job::compiling) {
      try {
        job.compiled = json::from_cbor(body);
        job.compile_end = monotonic_seconds();
        if (job.compiled->value("status", "") == "ok") job.state = Job::ready;
      } catch (const std::exception&) {
        job.protocol_error = "sent a malformed compile report";
        job.eof = true;
      }
    } else if (h.type == kPong && h.len == 0 && job.awaiting == kPing) {
      job.rtt = std::min(job.rtt, monotonic_seconds() - job.sent_at);
      if (++job.pings < kPings) {
        send(job, kPing);
      } else {
        mark_cpu(job);  // it waits for a command, and no kernel code has run yet
        // A library's untimed call first; a kernel gets none (it would be answered at once).
        send(job, job.reference ? kWake : kCall);
      }
    } else if (h.type == kPong && h.len == 0 && job.awaiting == kWake) {
      send(job, kCall);
    } else if (h.type == kDone && h.len == sizeof(DoneRecord) && job.awaiting == kCall) {
      DoneRecord rec;
      std::memcpy(&rec, body.data(), sizeof rec);
      call_returned(job, rec, opts);
    } else {
      // Only a kernel writing to the channel itself gets here.
      job.protocol_error = "wrote to the evaluation's result channel";
      job.eof = true;
      return;
    }
  }
}

void Zygote::send(Job& job, char cmd) {
  job.awaiting = cmd;
  job.sent_at = monotonic_seconds();
  if (write(job.to, &cmd, 1) != 1) job.eof = true;
}

// The CPU time of the whole process, its ended threads included, by a clock of the
// kernel's (the operating system's accounting, which the process cannot write).
static double process_cpu_seconds(const Job& job) {
  timespec ts{};
  if (!job.has_cpu_clock || clock_gettime(job.cpu_clock, &ts) != 0) return -1;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Where a call's CPU window opens: read while the process is stopped or no thread of it
// runs. (A running thread's time is accounted only at its next tick or switch: read then,
// a pool of 16 spinning threads read up to 20 CPUs' worth over a call.) The window holds
// the call (and a library's untimed call before it); honest threads never fill more than it.
void Zygote::mark_cpu(Job& job) {
  job.cpu_at_start = process_cpu_seconds(job);
  job.wall_at_start = monotonic_seconds();
}

// Stops every thread of the kernel's process; false when it ended instead.
bool Zygote::stop_child(Job& job) {
  kill(job.pid, SIGSTOP);
  for (;;) {
    int st = 0;
    rusage ru{};
    pid_t p = wait4(job.pid, &st, WUNTRACED, &ru);
    if (p < 0 && errno == EINTR) continue;
    if (p == job.pid && WIFSTOPPED(st)) return true;
    if (p == job.pid) {
      job.exited = true;
      job.wstatus = st;
      job.ru = ru;
    }
    job.eof = true;
    return false;
  }
}

// A call returned: stop the process, check that nothing of the kernel's still runs and
// that the output is right, take the time, then load the next call or end.
void Zygote::call_returned(Job& job, const DoneRecord& rec, const ResolvedOptions& opts) {
  const double returned = monotonic_seconds(), elapsed = returned - job.sent_at;
  job.awaiting = 0;
  if (rec.call != static_cast<uint32_t>(job.call)) {
    job.protocol_error = "wrote to the evaluation's result channel";
    job.eof = true;
    return;
  }
  if (!stop_child(job)) return;
  const int warmup = opts.warmup, threads = opts.threads;
  const std::string what = "call " + std::to_string(job.call + 1) + " (" +
                           (job.call < warmup ? "warm-up" : "timed") + ")";
  // CPU time from outside: threads ended before the count below still used theirs.
  bool over_cpu_bound = false;
  if (!job.reference) {
    const double cpu = process_cpu_seconds(job) - job.cpu_at_start, window = monotonic_seconds() - job.wall_at_start;
    job.busy.push_back(window > 0 ? cpu / window : 0);
    over_cpu_bound = job.cpu_at_start < 0 || !(cpu <= kCpuSlack * threads * window + kCpuGrace);
    if (over_cpu_bound && (job.cpu_at_start < 0 || ++job.calls_over_cpu_bound >= kCallsOverCpuBound)) {
      job.rejected = "the kernel's process used " + fmt("%.3g", cpu * 1e3) + " ms of CPU time in " + what +
                     ", more than its " + std::to_string(threads) + " thread" + (threads == 1 ? "" : "s") +
                     " could in the " + fmt("%.3g", window * 1e3) + " ms it took" +
                     (job.calls_over_cpu_bound > 1 ? " (and in an earlier call)" : "") +
                     ": it ran more threads than allowed";
      job.eof = true;
      return;
    }
  }
  const int running = thread_count(job.pid);
  if (running > threads) {
    job.rejected = "the kernel left " + std::to_string(running) + " threads in its process after " + what +
                   " returned, more than the " + std::to_string(threads) +
                   " of the OpenMP pool it may use (work after returning is not measured)";
    job.eof = true;
    return;
  }
  Check chk = task_->verify(*job.stage, job.call, opts.verify, job.secret);
  job.max_rel_error = std::max(job.max_rel_error, chk.max_rel_error);
  job.checked = true;
  if (!chk.passed) {
    job.wrong = "wrong result in " + what + ": " + chk.message;
    job.eof = true;
    return;
  }
  // The child's own clock is the kernel's to forge or freeze, so the time is bounded below
  // by the zygote's: command to answer, less the fastest round trip of a command that does
  // nothing. A record claiming more than that span is a forgery.
  if (!(rec.seconds >= 0) || rec.seconds > elapsed + 1e-6) {
    job.rejected = "the timing record of " + what + " (" + fmt("%.3g", rec.seconds) +
                   " s) is longer than the call took (" + fmt("%.3g", elapsed) + " s): not a measurement";
    job.eof = true;
    return;
  }
  if (job.call >= warmup && !over_cpu_bound) {
    // The child's own figure can only lengthen it: a loaded machine's slow pings would
    // otherwise leave an honest call next to nothing.
    job.times.push_back(std::max({elapsed - job.rtt, rec.seconds, kMinCallSeconds}));
    job.elapsed.push_back(elapsed);
    job.call_starts.push_back(job.sent_at);
    job.own_times.push_back(rec.seconds);
  }
  ++job.call;
  if (job.counters && job.call == warmup) job.counters->mark_start();  // the timed calls start
  if (another_call(job, opts)) {
    job.check_s += monotonic_seconds() - returned;
    job.state = Job::paused;  // stopped until its next turn
    job.paused_at = monotonic_seconds();
    return;
  }
  std::string handlers = foreign_handlers(job.pid);
  if (!handlers.empty()) {
    job.rejected = "the kernel installed signal handlers (" + handlers + ")";
    job.eof = true;
    return;
  }
  job.check_s += monotonic_seconds() - returned;
  if (job.counters) job.counted = job.counters->record(job.call - warmup);  // read while stopped
  job.done = true;
  job.eof = true;  // the zygote ends the process
}

// The timed calls asked for, then more while their spread is above the bound and the
// budget (calls, and the time left for them) allows.
bool Zygote::another_call(const Job& job, const ResolvedOptions& opts) const {
  const int warmup = opts.warmup, runs = opts.runs, max_runs = opts.max_runs;
  const int timed = static_cast<int>(job.times.size());
  if (job.call >= warmup + max_runs + kSpareCalls) return false;  // the inputs prepared
  if (timed < runs) return true;
  if (timed >= max_runs) return false;
  if (coefficient_of_variation(job.times) <= opts.cov_target) return false;
  const double slowest = *std::max_element(job.elapsed.begin(), job.elapsed.end());
  return job.deadline - monotonic_seconds() > 4 * slowest;
}

// A kernel's turn: its first (the round trips, then its first call) or the next call of
// a paused one, with inputs written now so that every call starts from the same state
// whatever ran before it.
void Zygote::take_turn(Job& job, double timeout) {
  if (job.state == Job::ready) {
    if (job.held_at > 0) release(job);  // its report came as it was held: nothing left to compile
    // Before its first call: the OpenMP threads it starts then are counted too.
    if (!job.reference) job.counters = std::make_unique<Counters>(job.pid);
    job.state = Job::running;
    job.deadline = job.run_start = monotonic_seconds();
    job.deadline += timeout;
    send(job, kPing);
    return;
  }
  const double t0 = monotonic_seconds();
  task_->load_call(*job.stage, job.call);
  job.check_s += monotonic_seconds() - t0;
  job.deadline += monotonic_seconds() - job.paused_at;  // waiting and checking are not the kernel's time
  job.state = Job::running;
  mark_cpu(job);  // stopped
  if (job.reference) {
    // A library (trusted code) as in a user's loop: its untimed call on this call's
    // inputs, then the timed command.
    kill(job.pid, SIGCONT);
    send(job, kWake);
    return;
  }
  // A kernel: nothing of its process runs between its inputs becoming visible and the
  // start of the timed window. The command is written while every thread of it is
  // stopped, the window opens with it (sent_at), and only then does the process continue:
  // a thread left running across calls to watch the inputs sees this call's only inside
  // the timed call, and whatever it computes is the call's time and CPU time.
  send(job, kCall);
  kill(job.pid, SIGCONT);
}

}  // namespace bench::detail
