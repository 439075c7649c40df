// The evaluation process (the engine-sandbox program, main.cpp): one zygote serving the
// engine's requests (wire/frames.hpp), forking a child per kernel (engine/kernel_child)
// and timing its calls from outside (calls.cpp).
#pragma once

#include <sys/types.h>

namespace bench {

// engine-sandbox's body: serves requests on `fd` for the process `engine` until the
// socket closes or the engine dies; never returns. Back ends must be registered first.
[[noreturn]] void serve(int fd, pid_t engine);

}  // namespace bench
