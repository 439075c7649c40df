// The interactive REPL: readline editing with a persistent history, completion of globals
// and module fields, multi-line chunks, results shown by engine.pretty, Ctrl-C that
// stops a running chunk but not the session.
#pragma once

#include "host/runtime.hpp"

namespace host {

void run_repl(Runtime& rt);

}  // namespace host
