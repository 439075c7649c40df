// Inside engine/evaluator only: a CUDA request ("cuda_probe", "cuda_compile", "cuda_run") served in a
// fresh child of the evaluation process, which itself never initialises CUDA (a context
// does not survive fork; the next kernel's child must start clean).
#pragma once

#include <nlohmann/json.hpp>

namespace bench::detail {

// req: {op, source, entries | launch, timeout}. Returns cuda::probe()'s, cuda::compile()'s
// or cuda::run()'s record, or one saying how the child failed (killed, past `timeout`
// seconds); a compile's or a run's with child_ms, the child's life from the fork to its end.
nlohmann::json cuda_in_child(const nlohmann::json& req);

// req: {op = "cuda_batch", items, timeout}, each item {op = "cuda_run", source, launch} or
// {op = "cuda_sandbox", print_bytes, spin_ms}: the items answered in turn by the warm CUDA
// child, a confined child that starts the driver and makes its context once and is kept
// between requests; each item answered as cuda_in_child answers it (inputs drawn here
// under a key drawn per item after the child's fork, every call's outputs kept, what the
// kernel printed read after its reply), `timeout` seconds each. A run that failed or timed
// out, or a child that broke the protocol, ends the warm child: the next item gets a fresh
// one (so does every 256th). Returns {results = [record, ...]}, each record with child_ms
// (the item's request to its reply) and cuda_child (which warm child answered: 1, 2, ...).
nlohmann::json cuda_batch_in_child(const nlohmann::json& req);
// The warm child asked to end (its requests' pipe closed), killed after 5 s.
void end_warm_cuda_child();

}  // namespace bench::detail
