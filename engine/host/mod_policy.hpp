// What other bindings (engine.train, engine.tokenizer) share with engine.policy's.
#pragma once

#include <string>
#include <vector>

#include "host/bind.hpp"
#include "policy/policy.hpp"

namespace host {

template <>
const char* Class<policy::Policy>::name;  // defined in mod_policy.cpp

// A completion as pol:sample returns it: the tokens and log-probs stay here, in C++, with
// the prompt they answer; a script reads c.text and c.finish_reason, and gets c.tokens or
// c.logprobs as tables only when it asks. trainer:step takes it as it is.
struct SampledCompletion {
  policy::Completion completion;
  std::shared_ptr<const std::vector<int>> prompt;       // the ids it was sampled after
  bool has_text = false;                                // the policy had a tokenizer
};
template <>
const char* Class<SampledCompletion>::name;  // defined in mod_policy.cpp

// The completion at idx, or nullptr when idx holds something else.
const SampledCompletion* test_completion(lua_State* L, int idx);

// A list of token ids at idx; `what` names it in errors.
std::vector<int> check_ids(lua_State* L, int idx, const char* where, const std::string& what);
// A string (encoded with the policy's tokenizer) or a list of token ids.
std::vector<int> check_text_or_ids(lua_State* L, int idx, policy::Policy& pol, const char* where,
                                   const std::string& what);

}  // namespace host
