// The ChatML chat template of Qwen models, rendered natively rather than through Jinja.
//
// What the model directory's template adds on top of plain ChatML is read off its text:
// a default system prompt (Qwen2/Qwen2.5 insert one when the conversation has none) and
// Qwen3's thinking blocks (reasoning is kept only after the last user turn; an empty
// block follows the generation prompt when thinking is switched off).
#include "tokenizer/tokenizer_impl.hpp"

namespace tokenizer {

namespace {

struct ChatStyle {
  std::optional<std::string> default_system;
  bool thinking = false;
  bool tool_responses = true;  // tool turns become <tool_response> blocks in a user turn
};

// Undoes the escapes of a Jinja string literal.
std::string unescape_literal(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      char c = s[++i];
      out.push_back(c == 'n' ? '\n' : c == 't' ? '\t' : c);
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

ChatStyle read_style(const Tokenizer::Impl& im) {
  ChatStyle st;
  const std::string& t = im.chat_template;
  if (t.empty()) {
    if (!im.find_token("<|im_start|>") || !im.find_token("<|im_end|>"))
      throw TokenizerError(
          "tokenizer:chat: no chat template in tokenizer_config.json and no <|im_start|>/<|im_end|> "
          "tokens for ChatML");
    st.tool_responses = false;
    return st;
  }
  if (t.find("<|im_start|>") == std::string::npos)
    throw TokenizerError("tokenizer:chat: unsupported chat template (only ChatML templates with "
                         "<|im_start|>role ... <|im_end|> are rendered)");
  // A literal system turn whose content is written in the template itself.
  const std::string open = "'<|im_start|>system\\n";
  for (size_t at = t.find(open); at != std::string::npos; at = t.find(open, at + 1)) {
    size_t b = at + open.size();
    if (b < t.size() && t[b] == '\'') continue;  // content comes from the messages
    size_t e = t.find("<|im_end|>", b);
    size_t q = t.find('\'', b);
    if (e == std::string::npos || (q != std::string::npos && q < e)) continue;
    st.default_system = unescape_literal(std::string_view(t).substr(b, e - b));
    break;
  }
  st.tool_responses = t.find("<tool_response>") != std::string::npos;
  st.thinking = t.find("<think>") != std::string::npos &&
                t.find("reasoning_content") != std::string::npos;
  return st;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
std::string_view lstrip_nl(std::string_view s) {
  while (!s.empty() && s.front() == '\n') s.remove_prefix(1);
  return s;
}
std::string_view rstrip_nl(std::string_view s) {
  while (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  return s;
}

}  // namespace

std::string Tokenizer::chat(const std::vector<ChatMessage>& msgs, const ChatOptions& opts) const {
  ChatStyle st = read_style(*impl_);
  if (msgs.empty()) throw TokenizerError("tokenizer:chat: the conversation has no messages");
  const int n = int(msgs.size());
  for (int i = 0; i < n; ++i) {
    const auto& r = msgs[i].role;
    if (r != "system" && r != "user" && r != "assistant" && r != "tool")
      throw TokenizerError("tokenizer:chat: message " + std::to_string(i + 1) + " has role '" + r +
                           "' (expected system, user, assistant or tool)");
  }
  std::string out;
  if (msgs[0].role == "system")
    out += "<|im_start|>system\n" + msgs[0].content + "<|im_end|>\n";
  else if (st.default_system)
    out += "<|im_start|>system\n" + *st.default_system + "<|im_end|>\n";

  // The last user turn that is not a wrapped tool response: reasoning before it is dropped.
  int last_query = n - 1;
  for (int i = n - 1; i >= 0; --i) {
    const auto& c = msgs[i].content;
    if (msgs[i].role == "user" &&
        !(starts_with(c, "<tool_response>") && ends_with(c, "</tool_response>"))) {
      last_query = i;
      break;
    }
  }

  for (int i = 0; i < n; ++i) {
    const auto& m = msgs[i];
    if (m.role == "user" || (m.role == "system" && i > 0)) {
      out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
    } else if (m.role == "assistant") {
      std::string_view content = m.content;
      std::string_view reasoning;
      if (st.thinking) {
        size_t close = content.find("</think>");
        if (close != std::string_view::npos) {
          std::string_view before = rstrip_nl(content.substr(0, close));
          size_t open = before.rfind("<think>");
          reasoning = lstrip_nl(open == std::string_view::npos ? before : before.substr(open + 7));
          content = lstrip_nl(content.substr(content.rfind("</think>") + 8));
        }
      }
      out += "<|im_start|>assistant\n";
      if (st.thinking && i > last_query && (i == n - 1 || !reasoning.empty())) {
        out += "<think>\n";
        out += lstrip_nl(rstrip_nl(reasoning));
        out += "\n</think>\n\n";
        out += lstrip_nl(content);
      } else {
        out += content;
      }
      out += "<|im_end|>\n";
    } else if (m.role == "tool" && !st.tool_responses) {
      out += "<|im_start|>tool\n" + m.content + "<|im_end|>\n";
    } else if (m.role == "tool") {
      if (i == 0 || msgs[i - 1].role != "tool") out += "<|im_start|>user";
      out += "\n<tool_response>\n" + m.content + "\n</tool_response>";
      if (i == n - 1 || msgs[i + 1].role != "tool") out += "<|im_end|>\n";
    }
  }
  if (opts.add_generation_prompt) {
    out += "<|im_start|>assistant\n";
    if (st.thinking && opts.enable_thinking == false) out += "<think>\n\n</think>\n\n";
  }
  return out;
}

}  // namespace tokenizer
