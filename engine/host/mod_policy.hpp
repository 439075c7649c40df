// What other bindings (engine.train, engine.tokenizer) share with engine.policy's.
#pragma once

#include <string>
#include <vector>

#include "host/bind.hpp"
#include "policy/policy.hpp"

namespace host {

template <>
const char* Class<policy::Policy>::name;  // defined in mod_policy.cpp

// A list of token ids at idx; `what` names it in errors.
std::vector<int> check_ids(lua_State* L, int idx, const char* where, const std::string& what);
// A string (encoded with the policy's tokenizer) or a list of token ids.
std::vector<int> check_text_or_ids(lua_State* L, int idx, policy::Policy& pol, const char* where,
                                   const std::string& what);

}  // namespace host
