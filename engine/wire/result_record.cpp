#include "wire/result_record.hpp"

#include <algorithm>

namespace bench {

const std::vector<ResultField>& result_fields() {
  static const std::vector<ResultField> fields = {
#define ENGINE_RESULT_FIELD_ROW(name, kind, type, kept, meaning) {#name, FieldKind::kind, kept, meaning},
      ENGINE_RESULT_FIELDS(ENGINE_RESULT_FIELD_ROW)
#undef ENGINE_RESULT_FIELD_ROW
  };
  return fields;
}

const char* kind_name(FieldKind kind) {
  switch (kind) {
    case FieldKind::text: return "a string";
    case FieldKind::number: return "a number";
    case FieldKind::integer: return "an integer";
    case FieldKind::flag: return "a boolean";
    case FieldKind::numbers: return "an array of numbers";
    case FieldKind::texts: return "an array of strings";
    case FieldKind::object: return "an object";
    case FieldKind::records: return "an array of objects";
  }
  return "?";
}

static bool all_of(const nlohmann::json& a, bool (nlohmann::json::*is)() const noexcept) {
  return a.is_array() && std::all_of(a.begin(), a.end(), [&](const nlohmann::json& x) { return (x.*is)(); });
}

static bool has_kind(const nlohmann::json& v, FieldKind kind) {
  switch (kind) {
    case FieldKind::text: return v.is_string();
    case FieldKind::number: return v.is_number();
    case FieldKind::integer: return v.is_number_integer();
    case FieldKind::flag: return v.is_boolean();
    case FieldKind::numbers: return all_of(v, &nlohmann::json::is_number);
    case FieldKind::texts: return all_of(v, &nlohmann::json::is_string);
    case FieldKind::object: return v.is_object();
    case FieldKind::records: return all_of(v, &nlohmann::json::is_object);
  }
  return false;
}

static std::string with_article(const char* noun) {
  return (std::string("aeiou").find(noun[0]) != std::string::npos ? "an " : "a ") + std::string(noun);
}

static std::string json_kind(const nlohmann::json& v) {
  if (v.is_array() && !v.empty()) return "an array holding " + with_article(v.front().type_name());
  return with_article(v.type_name());
}

std::string check_result_record(const nlohmann::json& record) {
  if (!record.is_object()) return "the record is " + json_kind(record) + ", not an object";
  if (!record.contains("status")) return "the record has no status";
  const auto& fields = result_fields();
  for (const auto& [key, value] : record.items()) {
    auto f = std::find_if(fields.begin(), fields.end(), [&](const ResultField& x) { return key == x.name; });
    if (f == fields.end()) return "an undeclared field '" + key + "'";
    // An empty table stands for an empty array of any kind or an empty object: a table a
    // judge in Lua builds empty cannot say which it is.
    const bool empty_table = (value.is_array() || value.is_object()) && value.empty() && f->kind >= FieldKind::numbers;
    if (!has_kind(value, f->kind) && !empty_table)
      return "field '" + key + "' is " + json_kind(value) + " where " + kind_name(f->kind) + " is declared";
  }
  return "";
}

}  // namespace bench
