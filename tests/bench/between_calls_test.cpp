// The loads and checks between calls, split over threads, give what one thread gives.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
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
