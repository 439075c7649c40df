// The tokenizer as the policy's text codec: policy.load(dir) picks up dir/tokenizer.json.
#include <filesystem>

#include "policy/codec.hpp"
#include "tokenizer/tokenizer.hpp"

namespace policy {

namespace {

class TokenizerCodec : public TextCodec {
 public:
  explicit TokenizerCodec(tokenizer::Tokenizer tok) : tok_(std::move(tok)), stops_(tok_.stop_ids()) {}
  std::vector<int> encode(const std::string& text) const override { return tok_.encode(text); }
  std::string decode(const std::vector<int>& ids) const override { return tok_.decode(ids, true); }
  std::vector<int> stop_tokens() const override { return stops_; }
  int64_t vocab_size() const override { return tok_.vocab_size(); }

 private:
  tokenizer::Tokenizer tok_;
  std::vector<int> stops_;
};

}  // namespace

std::shared_ptr<TextCodec> load_tokenizer_codec(const std::string& dir) {
  if (!std::filesystem::exists(std::filesystem::path(dir) / "tokenizer.json")) return nullptr;
  return std::make_shared<TokenizerCodec>(tokenizer::Tokenizer::load(dir));
}

}  // namespace policy
