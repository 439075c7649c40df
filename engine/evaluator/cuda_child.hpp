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

}  // namespace bench::detail
