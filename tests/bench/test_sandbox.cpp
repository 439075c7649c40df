// bench_test_sandbox: engine-sandbox with the test back ends besides the real ones.
#include <cstdlib>
#include <memory>
#include <string>

#include "compile/compiler.hpp"
#include "evaluator/zygote.hpp"
#include "test_backends.hpp"
#ifdef BENCH_TEST_KERNELC
#include "kernelc/backend.hpp"
#endif

int main(int argc, char** argv) {
  if (argc != 4 || std::string(argv[1]) != "--serve") return 2;
#ifdef BENCH_TEST_KERNELC
  bench::register_backend(std::make_unique<kernelc::GccJitBackend>());
#endif
  bench_test::register_test_backends();
  bench::serve(std::atoi(argv[2]), std::atoi(argv[3]));
}
