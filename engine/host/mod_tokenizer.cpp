// engine.tokenizer: byte-level BPE tokenizers (engine/tokenizer/tokenizer.hpp) for scripts.
//
//   local tok = tokenizer.load("models/qwen")
//   local ids = tok:encode("int main(void)")          -- token ids (0-based, as the model's)
//   tok:encode(user_text, {special = false})          -- "<|im_end|>" in it stays plain text
//   tok:decode(ids)                                   -- the exact bytes
//   tok:chat({{role = "user", content = "hi"}}, {add_generation_prompt = true})
//   local t = tokenizer.train({"text", ...}, {vocab_size = 4096}); t:save("models/tiny")
#include "host/bind.hpp"
#include "host/mod_policy.hpp"
#include "host/luajson.hpp"
#include "tokenizer/tokenizer.hpp"

namespace host {

template <>
const char* Class<tokenizer::Tokenizer>::name = "engine.tokenizer.Tokenizer";

static tokenizer::Tokenizer& self(lua_State* L, const char* where) {
  return check_object<tokenizer::Tokenizer>(L, 1, where);
}

static void push_ids(lua_State* L, const std::vector<int>& ids) {
  lua_createtable(L, int(ids.size()), 0);
  for (size_t i = 0; i < ids.size(); ++i) {
    lua_pushinteger(L, ids[i]);
    lua_rawseti(L, -2, lua_Integer(i + 1));
  }
  mark_array(L, -1);
}

static int tokenizer_load(lua_State* L) {
  std::string dir = check_string(L, 1, "tokenizer.load", "directory");
  push_object(L, new tokenizer::Tokenizer(tokenizer::Tokenizer::load(dir)));
  return 1;
}

static int tokenizer_train(lua_State* L) {
  const char* where = "tokenizer.train";
  check_table(L, 1, where, "texts");
  std::vector<std::string> texts;
  lua_getfield(L, 1, "files");
  bool by_key = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (by_key) {  // {files = {...}, texts = {...}}
    Options src(L, 1, where);
    std::vector<std::string> files;
    src.get("files", files);
    src.push("texts");
    if (!lua_isnil(L, -1)) texts = check_string_list(L, -1, where, "texts");
    lua_pop(L, 1);
    src.done();
    for (const auto& f : files) texts.push_back(tokenizer::read_text_file(f));
  } else {
    texts = check_string_list(L, 1, where, "texts");
  }
  tokenizer::TrainOptions o;
  int64_t vocab = 0;
  Options opt(L, 2, where);
  opt.get("vocab_size", vocab);
  if (opt.has("special_tokens")) opt.get("special_tokens", o.special_tokens);
  else o.special_tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  opt.get("min_frequency", o.min_frequency);
  opt.get("eos_token", o.eos_token);
  opt.get("pattern", o.pattern);
  opt.done();
  if (vocab <= 0) throw Error("tokenizer.train: the option vocab_size (a positive integer) is required");
  o.vocab_size = int(vocab);
  push_object(L, new tokenizer::Tokenizer(tokenizer::train_bpe(texts, o)));
  return 1;
}

static int tok_encode(lua_State* L) {
  auto& tok = self(L, "tok:encode");
  std::string text = check_string(L, 2, "tok:encode", "text");
  bool special = true;
  Options o(L, 3, "tok:encode");
  o.get("special", special);
  o.done();
  push_ids(L, special ? tok.encode(text) : tok.encode_ordinary(text));
  return 1;
}

static int tok_decode(lua_State* L) {
  auto& tok = self(L, "tok:decode");
  auto ids = check_ids(L, 2, "tok:decode", "ids");
  bool skip = false;
  Options o(L, 3, "tok:decode");
  o.get("skip_special", skip);
  o.done();
  std::string s = tok.decode(ids, skip);
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

static int tok_chat(lua_State* L) {
  const char* where = "tok:chat";
  auto& tok = self(L, where);
  check_table(L, 2, where, "messages");
  std::vector<tokenizer::ChatMessage> msgs;
  lua_Integer n = luaL_len(L, 2);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_geti(L, 2, i);
    std::string what = "messages[" + std::to_string(i) + "]";
    if (!lua_istable(L, -1))
      throw Error(std::string(where) + ": " + what + " must be a table {role =, content =}");
    tokenizer::ChatMessage m;
    std::string field_where = std::string(where) + " " + what;
    Options f(L, -1, field_where.c_str());
    f.get("role", m.role);
    f.get("content", m.content);
    f.done();
    if (m.role.empty()) throw Error(std::string(where) + ": " + what + " has no role");
    msgs.push_back(std::move(m));
    lua_pop(L, 1);
  }
  tokenizer::ChatOptions co;
  Options o(L, 3, where);
  o.get("add_generation_prompt", co.add_generation_prompt);
  if (o.has("enable_thinking")) {
    bool on = true;
    o.get("enable_thinking", on);
    co.enable_thinking = on;
  }
  o.done();
  std::string s = tok.chat(msgs, co);
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

static int tok_vocab_size(lua_State* L) {
  lua_pushinteger(L, self(L, "tok:vocab_size").vocab_size());
  return 1;
}

static int tok_token_to_id(lua_State* L) {
  auto& tok = self(L, "tok:token_to_id");
  auto id = tok.token_to_id(check_string(L, 2, "tok:token_to_id", "token"));
  if (id) lua_pushinteger(L, *id);
  else lua_pushnil(L);
  return 1;
}

static int tok_id_to_token(lua_State* L) {
  auto& tok = self(L, "tok:id_to_token");
  std::string s = tok.id_to_token(int(check_integer(L, 2, "tok:id_to_token", "id")));
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

static int tok_token_bytes(lua_State* L) {
  auto& tok = self(L, "tok:token_bytes");
  const std::string& s = tok.token_bytes(int(check_integer(L, 2, "tok:token_bytes", "id")));
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

static int tok_stop_ids(lua_State* L) {
  push_ids(L, self(L, "tok:stop_ids").stop_ids());
  return 1;
}

static int tok_save(lua_State* L) {
  auto& tok = self(L, "tok:save");
  tok.save(check_string(L, 2, "tok:save", "directory"));
  return 0;
}

static int tok_tostring(lua_State* L) {
  auto& tok = self(L, "tostring");
  lua_pushfstring(L, "tokenizer (vocab %d)", tok.vocab_size());
  return 1;
}

int open_tokenizer(lua_State* L) {
  define_class<tokenizer::Tokenizer>(
      L,
      {HOST_FN("encode", tok_encode), HOST_FN("decode", tok_decode), HOST_FN("chat", tok_chat),
       HOST_FN("vocab_size", tok_vocab_size), HOST_FN("token_to_id", tok_token_to_id),
       HOST_FN("id_to_token", tok_id_to_token), HOST_FN("token_bytes", tok_token_bytes),
       HOST_FN("stop_ids", tok_stop_ids), HOST_FN("save", tok_save)},
      {HOST_FN("__tostring", tok_tostring)});
  lua_newtable(L);
  set_functions(L, {HOST_FN("load", tokenizer_load), HOST_FN("train", tokenizer_train)});
  return 1;
}

}  // namespace host
