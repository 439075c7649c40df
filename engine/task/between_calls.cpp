#include "task/between_calls.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace bench {
namespace {

// Far deeper than a part's frames reach (a check, a copy, a fill).
constexpr size_t kWorkerFramesCleared = 64 << 10;

// One round at a time: the calling thread posts a job, then it and the workers take parts
// by an index until none is left, and it waits for the count of parts done. Workers
// block on the condition variable between rounds, so none runs beside a timed call, and
// none holds a lock when the evaluation process forks a kernel's child (it forks only
// between rounds, from the thread that posts them).
struct Pool {
  std::mutex m;
  std::condition_variable wake, finished;
  std::vector<std::thread> threads;
  const std::function<void(size_t, size_t, size_t)>* fn = nullptr;
  size_t n = 0, parts = 0, next = 0, done = 0;
  size_t active = 1;  // the calling thread and the workers in use
  unsigned long round = 0;

  void work(size_t part) {
    const size_t begin = n * part / parts, end = n * (part + 1) / parts;
    (*fn)(part, begin, end);
  }

  void loop() {
    unsigned long seen = 0;
    std::unique_lock<std::mutex> lock(m);
    for (;;) {
      wake.wait(lock, [&] { return round != seen; });
      seen = round;
      while (next < parts) {
        const size_t part = next++;
        lock.unlock();
        work(part);
        clear_stack_below(kWorkerFramesCleared);
        lock.lock();
        if (++done == parts) finished.notify_one();
      }
    }
  }
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: its threads wait until the process ends
  return *p;
}

}  // namespace

__attribute__((noinline)) void clear_stack_below(size_t bytes) {
  void* below = __builtin_alloca(bytes);
  explicit_bzero(below, bytes);
  asm volatile("" : : "r"(below) : "memory");
}

void set_between_call_workers(int n) {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.m);
  p.active = static_cast<size_t>(std::max(1, n));
  while (p.threads.size() + 1 < p.active) {
    p.threads.emplace_back([&p] { p.loop(); });
    p.threads.back().detach();
  }
}

size_t parts_of(size_t n, size_t grain) {
  const size_t most = pool().active;
  const size_t wanted = grain == 0 ? 1 : (n + grain - 1) / grain;
  return std::max<size_t>(1, std::min(most, wanted));
}

void for_parts(size_t n, size_t grain, const std::function<void(size_t, size_t, size_t)>& fn) {
  Pool& p = pool();
  const size_t parts = parts_of(n, grain);
  if (parts == 1) {
    fn(0, 0, n);
    return;
  }
  std::unique_lock<std::mutex> lock(p.m);
  p.fn = &fn;
  p.n = n;
  p.parts = parts;
  p.next = p.done = 0;
  ++p.round;
  for (size_t k = 1; k < parts; ++k) p.wake.notify_one();  // as many as there are parts
  while (p.next < p.parts) {  // the calling thread takes parts too, the first among them
    const size_t part = p.next++;
    lock.unlock();
    p.work(part);
    lock.lock();
    ++p.done;
  }
  p.finished.wait(lock, [&] { return p.done == p.parts; });
}

Check check_in_parts(size_t n, size_t grain, const std::function<Check(size_t, size_t)>& range) {
  std::vector<Check> parts(parts_of(n, grain));
  for_parts(n, grain, [&](size_t part, size_t from, size_t to) { parts[part] = range(from, to); });
  Check c;
  c.passed = true;
  for (const Check& part : parts) {
    c.max_rel_error = std::max(c.max_rel_error, part.max_rel_error);
    if (!part.passed && c.passed) c.passed = false, c.message = part.message;
  }
  return c;
}

void copy_in_parts(void* to, const void* from, size_t bytes) {
  auto* t = static_cast<char*>(to);
  auto* f = static_cast<const char*>(from);
  for_parts(bytes, kGrain * sizeof(double), [&](size_t, size_t b, size_t e) { std::memcpy(t + b, f + b, e - b); });
}

void fill_in_parts(double* to, size_t n, double value) {
  for_parts(n, kGrain, [&](size_t, size_t b, size_t e) { std::fill(to + b, to + e, value); });
}

}  // namespace bench
