// engine-sandbox: the evaluation process. The engine starts it as a program image of its
// own (bench::start_zygote), so no kernel ever shares an address space with libtorch,
// OpenBLAS, model weights or anything else the engine holds; it serves the engine's
// requests (wire/frames.hpp) until the engine closes its socket or dies. Kernels run in
// children of it (engine/kernel_child), timed from here (calls.cpp).
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "compile/compiler.hpp"
#include "evaluator/zygote.hpp"
#include "kernelc/backend.hpp"

int main(int argc, char** argv) {
  if (argc != 4 || std::string(argv[1]) != "--serve") {
    std::fprintf(stderr,
                 "usage: engine-sandbox --serve FD ENGINE_PID\n"
                 "The engine starts this program to compile, run, verify and time kernels;\n"
                 "it is not meant to be run by hand.\n");
    return 2;
  }
  bench::register_backend(std::make_unique<kernelc::GccJitBackend>());
  bench::serve(std::atoi(argv[2]), std::atoi(argv[3]));
}
