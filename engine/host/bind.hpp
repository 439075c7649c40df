// The binding layer: how plain C++ modules become Lua modules.
//
// Errors travel one way. Bound functions throw C++ exceptions (host::Error for bad
// arguments, anything derived from std::exception from the modules); the wrapper
// catches them at the boundary, lets every C++ frame unwind, and only then raises the
// Lua error. Never call luaL_error or luaL_check* from bound code: they longjmp past
// destructors.
#pragma once

#include <lua.hpp>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace host {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Pushes the message of the exception being handled; call only inside a catch block.
void push_current_exception(lua_State* L);

template <int (*F)(lua_State*)>
int guarded(lua_State* L) {
  try {
    return F(L);
  } catch (...) {
    push_current_exception(L);
  }
  return lua_error(L);  // the exception and every C++ frame above are gone by now
}

struct Function {
  const char* name;
  lua_CFunction fn;
};
#define HOST_FN(name, fn) host::Function{name, host::guarded<fn>}

// Sets each function as a field of the table on top of the stack.
void set_functions(lua_State* L, std::initializer_list<Function> fns);

// ---- arguments ------------------------------------------------------------
// `where` names the function for messages, e.g. "store.open".
std::string check_string(lua_State* L, int idx, const char* where, const char* what);
double check_number(lua_State* L, int idx, const char* where, const char* what);
int64_t check_integer(lua_State* L, int idx, const char* where, const char* what);
bool check_boolean(lua_State* L, int idx, const char* where, const char* what);
void check_table(lua_State* L, int idx, const char* where, const char* what);
std::optional<std::string> opt_string(lua_State* L, int idx, const char* where, const char* what);
std::optional<double> opt_number(lua_State* L, int idx, const char* where, const char* what);
std::optional<int64_t> opt_integer(lua_State* L, int idx, const char* where, const char* what);
std::vector<std::string> check_string_list(lua_State* L, int idx, const char* where, const char* what);

// Reads an options table into C++ values; done() rejects keys nobody asked for, so a
// misspelt option is an error that names it instead of a silently ignored setting.
class Options {
 public:
  // idx may hold nil or nothing: then every option keeps its default.
  Options(lua_State* L, int idx, const char* where);
  Options(const Options&) = delete;
  Options& operator=(const Options&) = delete;

  bool has(const char* key);
  void get(const char* key, std::string& out, std::initializer_list<const char*> choices = {});
  void get(const char* key, double& out);
  void get(const char* key, int& out);
  void get(const char* key, int64_t& out);
  void get(const char* key, bool& out);
  void get(const char* key, std::optional<std::string>& out);
  void get(const char* key, std::optional<double>& out);
  void get(const char* key, std::optional<int64_t>& out);
  void get(const char* key, std::vector<std::string>& out);
  // Pushes the raw value (nil if absent) and marks the key as known.
  void push(const char* key);
  void done();

 private:
  bool fetch(const char* key);  // pushes the value if present (non-nil)
  lua_State* L_;
  int idx_;
  const char* where_;
  std::vector<std::string> known_;
};

// ---- results --------------------------------------------------------------
// Fields of the table on top of the stack.
void set_number(lua_State* L, const char* key, double v);
void set_string(lua_State* L, const char* key, const std::string& v);

// Pushes `items` as a Lua array, push_item(item) pushing each element.
template <class Items, class PushItem>
void push_array(lua_State* L, const Items& items, PushItem push_item) {
  lua_createtable(L, static_cast<int>(items.size()), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    push_item(items[i]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}
void push_strings(lua_State* L, const std::vector<std::string>& v);

// ---- userdata -------------------------------------------------------------
// A C++ object owned by Lua through a shared_ptr, so other C++ objects can keep it alive
// (a trainer holds its policy even after the script drops the policy). Class<T>::name
// must be specialised per type (the metatable's registry key and the type name in
// messages).
template <class T>
struct Class {
  static const char* name;
};

template <class T>
std::shared_ptr<T>* object_box(lua_State* L, int idx) {
  return static_cast<std::shared_ptr<T>*>(luaL_testudata(L, idx, Class<T>::name));
}

// Drops Lua's reference (close, __close, __gc); the object dies with its last owner.
template <class T>
int release_object(lua_State* L) {
  if (auto* box = object_box<T>(L, 1)) box->reset();
  return 0;
}

// Creates the metatable of T: methods reachable by obj:method(), __gc and __close
// release the object, __name for tostring and error messages.
template <class T>
void define_class(lua_State* L, std::initializer_list<Function> methods,
                  std::initializer_list<Function> metamethods = {}) {
  luaL_newmetatable(L, Class<T>::name);
  lua_newtable(L);
  set_functions(L, methods);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, release_object<T>);
  lua_setfield(L, -2, "__gc");
  lua_pushcfunction(L, release_object<T>);
  lua_setfield(L, -2, "__close");
  set_functions(L, metamethods);
  lua_pop(L, 1);
}

// Pushes a new userdata owning obj; the metatable must already exist.
template <class T>
T& push_object(lua_State* L, std::shared_ptr<T> obj) {
  void* mem = lua_newuserdatauv(L, sizeof(std::shared_ptr<T>), 1);
  auto* box = new (mem) std::shared_ptr<T>(std::move(obj));
  luaL_setmetatable(L, Class<T>::name);
  return **box;
}

template <class T>
T& push_object(lua_State* L, T* obj) {
  return push_object(L, std::shared_ptr<T>(obj));
}

template <class T>
const std::shared_ptr<T>& check_shared(lua_State* L, int idx, const char* where) {
  auto* box = object_box<T>(L, idx);
  if (!box)
    throw Error(std::string(where) + ": argument " + std::to_string(idx) + " must be a " +
                Class<T>::name + ", got " + luaL_typename(L, idx));
  if (!*box) throw Error(std::string(where) + ": the " + Class<T>::name + " was closed");
  return *box;
}

template <class T>
T& check_object(lua_State* L, int idx, const char* where) {
  return *check_shared<T>(L, idx, where);
}

// The object, or nullptr when idx holds no open T (for __tostring and the like).
template <class T>
T* test_object(lua_State* L, int idx) {
  auto* box = object_box<T>(L, idx);
  return box ? box->get() : nullptr;
}

}  // namespace host
