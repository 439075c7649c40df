#include "host/repl.hpp"

#include <readline/history.h>
#include <readline/readline.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace host {

static lua_State* completion_state = nullptr;
static volatile sig_atomic_t prompt_interrupted = 0;

// ---- completion -----------------------------------------------------------

// Pushes the value the dotted path names ("string", "store.open"), or nil.
static void push_path(lua_State* L, const std::string& path) {
  lua_pushglobaltable(L);
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find_first_of(".:", start);
    std::string key = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!lua_istable(L, -1) && !lua_isuserdata(L, -1) && !lua_isstring(L, -1)) {
      lua_pop(L, 1);
      lua_pushnil(L);
      return;
    }
    // Indexing may run metamethods; never let them raise here.
    lua_pushcfunction(L, [](lua_State* S) -> int {
      lua_gettable(S, 1);
      return 1;
    });
    lua_insert(L, -2);
    lua_pushstring(L, key.c_str());
    if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
      lua_pop(L, 1);
      lua_pushnil(L);
      return;
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
}

// Adds the string keys of the table at the top (and, through __index, of its
// metatable's method tables) that start with prefix.
static void collect_keys(lua_State* L, const std::string& prefix, bool methods_only,
                         std::set<std::string>& out, int depth = 0) {
  if (depth > 4) return;
  if (lua_istable(L, -1)) {
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      if (lua_type(L, -2) == LUA_TSTRING && (!methods_only || lua_isfunction(L, -1))) {
        std::string k = lua_tostring(L, -2);
        if (k.compare(0, prefix.size(), prefix) == 0) out.insert(k);
      }
      lua_pop(L, 1);
    }
  }
  if (lua_getmetatable(L, -1)) {
    lua_getfield(L, -1, "__index");
    if (lua_istable(L, -1)) collect_keys(L, prefix, methods_only, out, depth + 1);
    lua_pop(L, 2);
  }
}

static const char* kKeywords[] = {"and", "break", "do", "else", "elseif", "end", "false",
                                  "for", "function", "goto", "if", "in", "local", "nil",
                                  "not", "or", "repeat", "return", "then", "true", "until",
                                  "while"};

static std::vector<std::string> completions_for(const std::string& word) {
  lua_State* L = completion_state;
  std::vector<std::string> result;
  if (!L) return result;
  size_t sep = word.find_last_of(".:");
  std::set<std::string> keys;
  int top = lua_gettop(L);
  if (sep == std::string::npos) {
    lua_pushglobaltable(L);
    collect_keys(L, word, false, keys);
    for (const char* kw : kKeywords)
      if (std::strncmp(kw, word.c_str(), word.size()) == 0) keys.insert(kw);
    for (const auto& k : keys) result.push_back(k);
  } else {
    std::string base = word.substr(0, sep);
    push_path(L, base);
    if (lua_isstring(L, -1) && !lua_isnumber(L, -1)) {  // "s:" completes string methods
      lua_pop(L, 1);
      lua_getglobal(L, "string");
    }
    collect_keys(L, word.substr(sep + 1), word[sep] == ':', keys);
    for (const auto& k : keys) result.push_back(word.substr(0, sep + 1) + k);
  }
  lua_settop(L, top);
  return result;
}

static char* completion_generator(const char* text, int state) {
  static std::vector<std::string> matches;
  static size_t next;
  if (state == 0) {
    matches = completions_for(text);
    next = 0;
  }
  if (next >= matches.size()) return nullptr;
  return strdup(matches[next++].c_str());
}

static char** complete(const char* text, int, int) {
  rl_attempted_completion_over = 1;  // never fall back to file names
  rl_completion_append_character = '\0';
  return rl_completion_matches(text, completion_generator);
}

// ---- reading chunks -------------------------------------------------------

static void on_sigint_at_prompt(int) {
  prompt_interrupted = 1;
  (void)!write(STDOUT_FILENO, "\n", 1);
  rl_replace_line("", 0);
  rl_set_prompt("> ");
  rl_on_new_line();
  rl_redisplay();
}

static std::string history_path() {
  if (const char* p = std::getenv("ENGINE_HISTORY")) return p;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/.engine_history";
}

static void remember(const std::string& entry) {
  add_history(entry.c_str());
  std::string path = history_path();
  if (access(path.c_str(), F_OK) != 0) write_history(path.c_str());  // append needs the file
  else append_history(1, path.c_str());
}

static bool incomplete(lua_State* L, int status) {
  if (status != LUA_ERRSYNTAX) return false;
  size_t n;
  const char* msg = lua_tolstring(L, -1, &n);
  const char eof[] = "<eof>";
  return n >= sizeof(eof) - 1 && std::strcmp(msg + n - (sizeof(eof) - 1), eof) == 0;
}

// Loads the next complete chunk, reading more lines while it is incomplete. Returns false
// at end of input. On success the compiled function (or the syntax error) is on the stack
// and *status says which.
static bool read_chunk(lua_State* L, int* status) {
  std::string buffer;
  const char* prompt = "> ";
  for (;;) {
    prompt_interrupted = 0;
    char* line = readline(prompt);
    if (!line) return false;
    if (prompt_interrupted) buffer.clear();
    std::string text = line;
    std::free(line);
    if (buffer.empty()) {
      if (text.empty()) continue;
      // An expression first, so "1 + 1" prints 2, as in the lua REPL.
      std::string ret = "return " + text + ";";
      if (luaL_loadbuffer(L, ret.data(), ret.size(), "=stdin") == LUA_OK) {
        remember(text);
        *status = LUA_OK;
        return true;
      }
      lua_pop(L, 1);
      buffer = text;
    } else {
      buffer += "\n" + text;
    }
    *status = luaL_loadbuffer(L, buffer.data(), buffer.size(), "=stdin");
    if (incomplete(L, *status)) {
      lua_pop(L, 1);
      prompt = ">> ";
      continue;
    }
    remember(buffer);
    return true;
  }
}

static void print_results(Runtime& rt, int n) {
  lua_State* L = rt.L();
  if (n == 0) return;
  lua_getglobal(L, "require");
  lua_pushliteral(L, "engine.pretty");
  if (rt.call(1, 1) != LUA_OK) {
    report_error(L, "engine");
    lua_pop(L, n);
    return;
  }
  lua_getfield(L, -1, "print");
  lua_remove(L, -2);
  lua_insert(L, -(n + 1));
  if (rt.call(n, 0) != LUA_OK) report_error(L, "engine");
}

void run_repl(Runtime& rt) {
  lua_State* L = rt.L();
  completion_state = L;
  rl_readline_name = "engine";
  rl_attempted_completion_function = complete;
  rl_basic_word_break_characters = const_cast<char*>(" \t\n\"\\'`@$><=;|&{(,[+-*/%^~#");
  rl_catch_signals = 0;
  using_history();
  std::string hist = history_path();
  read_history(hist.c_str());
  stifle_history(5000);

  struct sigaction sa {};
  sa.sa_handler = on_sigint_at_prompt;
  sigemptyset(&sa.sa_mask);
  struct sigaction previous {};
  sigaction(SIGINT, &sa, &previous);

  std::printf("engine %s (%s) -- Ctrl-D to leave\n", ENGINE_VERSION, LUA_RELEASE);
  std::fflush(stdout);
  int status = LUA_OK;
  while (read_chunk(L, &status)) {
    if (status == LUA_OK) {
      int base = lua_gettop(L) - 1;
      status = rt.call(0, LUA_MULTRET);
      if (status == LUA_OK) print_results(rt, lua_gettop(L) - base);
    }
    if (status != LUA_OK) report_error(L, "engine");
    lua_settop(L, 0);
  }
  std::printf("\n");
  sigaction(SIGINT, &previous, nullptr);
  completion_state = nullptr;
}

}  // namespace host
