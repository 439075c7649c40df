// engine.log: structured logging. log.info("step done", {step = 3, reward = 1.5}) writes
// "step done reward=1.5 step=3" (fields sorted by key) to the console and the run's file.
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/dist_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "host/bind.hpp"
#include "host/log.hpp"
#include "host/luajson.hpp"

namespace host {

static std::shared_ptr<spdlog::sinks::dist_sink_mt> sinks;
static std::shared_ptr<spdlog::sinks::sink> file_sink;

void log_setup() {
  if (sinks) return;
  sinks = std::make_shared<spdlog::sinks::dist_sink_mt>();
  auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  console->set_pattern("%^[%H:%M:%S %l]%$ %v");
  sinks->add_sink(console);
  auto logger = std::make_shared<spdlog::logger>("engine", sinks);
  logger->set_level(spdlog::level::info);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

void log_to_file(const std::string& path) {
  log_setup();
  log_close_file();
  try {
    file_sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path);
  } catch (const spdlog::spdlog_ex& e) {
    throw Error("log: cannot open log file " + path + ": " + e.what());
  }
  file_sink->set_pattern("%Y-%m-%d %H:%M:%S.%e %l %v");
  sinks->add_sink(file_sink);
}

void log_close_file() {
  if (sinks && file_sink) sinks->remove_sink(file_sink);
  file_sink.reset();
}

static std::string field_text(const Json& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    bool plain = !s.empty() && std::none_of(s.begin(), s.end(), [](char c) {
      return c == ' ' || c == '"' || c == '=' || c == '\n';
    });
    return plain ? s : v.dump();
  }
  if (v.is_number_float()) return fmt::format("{:.6g}", v.get<double>());
  return v.dump();
}

static std::string message(lua_State* L, const char* where) {
  std::string text = check_string(L, 1, where, "message");
  if (lua_isnoneornil(L, 2)) return text;
  check_table(L, 2, where, "fields");
  Json fields = to_json(L, 2, "fields");
  if (!fields.is_object()) return text + " " + fields.dump();
  std::vector<std::string> keys;
  for (auto& [k, _] : fields.items()) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  for (const auto& k : keys) text += " " + k + "=" + field_text(fields[k]);
  return text;
}

template <spdlog::level::level_enum Level>
static int log_at(lua_State* L) {
  spdlog::log(Level, "{}", message(L, "log"));
  return 0;
}

static spdlog::level::level_enum parse_level(const std::string& name) {
  auto level = spdlog::level::from_str(name);
  if (level == spdlog::level::off && name != "off")
    throw Error("log.set_level: unknown level '" + name +
                "' (trace, debug, info, warn, error, critical, off)");
  return level;
}

static int log_set_level(lua_State* L) {
  spdlog::set_level(parse_level(check_string(L, 1, "log.set_level", "level")));
  return 0;
}

static int log_level(lua_State* L) {
  auto name = spdlog::level::to_string_view(spdlog::default_logger()->level());
  lua_pushlstring(L, name.data(), name.size());
  return 1;
}

static int log_file(lua_State* L) {
  if (lua_isnoneornil(L, 1)) log_close_file();
  else log_to_file(check_string(L, 1, "log.to_file", "path"));
  return 0;
}

int open_log(lua_State* L) {
  log_setup();
  lua_newtable(L);
  set_functions(L, {HOST_FN("trace", log_at<spdlog::level::trace>),
                    HOST_FN("debug", log_at<spdlog::level::debug>),
                    HOST_FN("info", log_at<spdlog::level::info>),
                    HOST_FN("warn", log_at<spdlog::level::warn>),
                    HOST_FN("error", log_at<spdlog::level::err>),
                    HOST_FN("critical", log_at<spdlog::level::critical>),
                    HOST_FN("set_level", log_set_level), HOST_FN("level", log_level),
                    HOST_FN("to_file", log_file)});
  return 1;
}

}  // namespace host
