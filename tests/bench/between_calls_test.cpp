// The loads and checks between calls, split over threads, give what one thread gives.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

#include "task/between_calls.hpp"
#include "task/task.hpp"

using namespace bench;

namespace {

// C = A B from the inputs a load put in the stage.
void multiply(Stage& s, int m, int n, int k) {
  const double* a = s.inputs[0].data();
  const double* b = s.inputs[1].data();
  double* c = s.outputs[0].data();
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int p = 0; p < k; ++p) sum += a[i * k + p] * b[p * n + j];
      c[i * n + j] = sum;
    }
}

struct Verdicts {
  Check right, wrong, nan;
  std::vector<double> inputs;
};

Verdicts judge(Task& task, int threads, int m, int n, int k) {
  set_between_call_workers(threads);
  Stage s = task.make_stage();
  task.load_call(s, 1);
  Verdicts v;
  v.inputs.assign(s.inputs[0].data(), s.inputs[0].data() + size_t(m) * k);
  v.inputs.insert(v.inputs.end(), s.inputs[1].data(), s.inputs[1].data() + size_t(k) * n);
  CHECK(std::isnan(s.outputs[0].data()[size_t(m) * n - 1]));  // the output starts as NaN
  multiply(s, m, n, k);
  v.right = task.verify(s, 1, "fp64", 0);
  double* c = s.outputs[0].data();
  c[size_t(m - 2) * n + 5] += 1;  // in the last part
  c[size_t(3) * n + 7] += 1;      // in the first: the one to name
  v.wrong = task.verify(s, 1, "fp64", 0);
  c[size_t(3) * n + 7] -= 1;
  c[size_t(m / 2) * n] = std::numeric_limits<double>::quiet_NaN();
  v.nan = task.verify(s, 1, "fp64", 0);
  return v;
}

}  // namespace

TEST_CASE("a matmul's load and check in parts give what one thread gives") {
  const int m = 301, n = 57, k = 40;  // 17,157 outputs: three parts with four threads
  nlohmann::json problem = {{"M", m}, {"N", n}, {"K", k}, {"seed", 5}, {"c_init", "nan"}};
  auto task = make_task(problem);
  task->prepare(2, 1);
  REQUIRE(parts_of(size_t(m) * n, kGrain) == 1);  // before any workers
  Verdicts one = judge(*task, 1, m, n, k);
  set_between_call_workers(4);
  CHECK(parts_of(size_t(m) * n, kGrain) == 3);
  Verdicts four = judge(*task, 4, m, n, k);
  set_between_call_workers(1);

  CHECK(one.inputs == four.inputs);
  CHECK(one.right.passed);
  CHECK(four.right.passed);
  CHECK(one.right.max_rel_error == four.right.max_rel_error);
  CHECK_FALSE(four.wrong.passed);
  CHECK_THAT(four.wrong.message, Catch::StartsWith("C[3][7] = "));
  CHECK(four.wrong.message == one.wrong.message);
  CHECK(four.wrong.max_rel_error == one.wrong.max_rel_error);
  CHECK_FALSE(four.nan.passed);
  CHECK_THAT(four.nan.message, Catch::StartsWith("C[150][0] = nan"));
  CHECK(four.nan.message == one.nan.message);
  CHECK(std::isinf(four.nan.max_rel_error));
}

TEST_CASE("for_parts covers every element once, in parts fixed by the sizes") {
  set_between_call_workers(3);
  std::vector<int> seen(100000, 0);
  std::vector<size_t> starts(parts_of(seen.size(), 1000), 0);
  CHECK(starts.size() == 3);
  for_parts(seen.size(), 1000, [&](size_t part, size_t from, size_t to) {
    starts[part] = from;
    for (size_t i = from; i < to; ++i) ++seen[i];
  });
  for (int x : seen) REQUIRE(x == 1);
  CHECK(starts == std::vector<size_t>{0, 33333, 66666});
  CHECK(parts_of(500, 1000) == 1);  // small arrays stay on the calling thread
  set_between_call_workers(1);
}

namespace {

constexpr double kMark = 0x1.5a5a5a5a5a5a5p-7;  // stands for a reference value a check held
constexpr size_t kMarks = 2048;

// Values a frame leaves where it was, as a check's do; returns their address.
__attribute__((noinline)) uintptr_t leave_marks() {
  volatile double marks[kMarks];
  for (auto& d : marks) d = kMark;
  return reinterpret_cast<uintptr_t>(&marks[0]);
}

// The marks left in the lower half of that frame (the upper half is where the next call's
// own frame, return address and all, goes).
__attribute__((noinline)) size_t marks_at(uintptr_t where) {
  auto* p = reinterpret_cast<const volatile double*>(where);
  size_t n = 0;
  for (size_t i = 0; i < kMarks / 2; ++i) n += p[i] == kMark;
  return n;
}

}  // namespace

TEST_CASE("a worker between calls clears its stack after a part") {
  set_between_call_workers(2);
  const auto caller = std::this_thread::get_id();
  std::atomic<uintptr_t> where{0};
  std::atomic<size_t> left{0};
  for (int round = 0; round < 200 && where == 0; ++round)  // until a worker took a part
    for_parts(2 * kGrain, kGrain, [&](size_t, size_t, size_t) {
      if (std::this_thread::get_id() == caller) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        return;
      }
      const uintptr_t at = leave_marks();
      left = marks_at(at);
      where = at;
    });
  REQUIRE(where != 0);
  CHECK(left == kMarks / 2);     // the worker's returned frame held them
  CHECK(marks_at(where) == 0);  // and they are gone once the part is done: no fork copies them
  set_between_call_workers(1);
}

TEST_CASE("a kernel's process clears the stack below it before anything else") {
  const uintptr_t where = leave_marks();
  const size_t left = marks_at(where);
  REQUIRE(leave_marks() == where);  // the same frame again, at the same depth
  clear_stack_below(256 << 10);
  const size_t after = marks_at(where);
  CHECK(left == kMarks / 2);  // a returned frame's values stay where they were
  CHECK(after == 0);
}
