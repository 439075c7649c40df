// Inside engine/host only: engine.bench's CUDA functions (mod_bench_cuda.cpp), set in the
// bench table by open_bench.
#pragma once

struct lua_State;

namespace host {

// Sets bench.cuda, cuda_sandbox, cuda_compile, cuda_run, cuda_batch, cuda_judge,
// cuda_judge_batch, cuda_release, cuda_reference, cuda_check and cuda_yardstick in the
// table on top of the stack.
void set_bench_cuda(lua_State* L);

}  // namespace host
