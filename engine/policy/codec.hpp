// The text side of the policy: whatever turns text into token ids and back. The
// tokenizer (engine/tokenizer/, through tokenizer_codec.cpp) implements it; the policy itself only ever sees
// ids, so it can be used, tested and benchmarked without one.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace policy {

class TextCodec {
 public:
  virtual ~TextCodec() = default;
  virtual std::vector<int> encode(const std::string& text) const = 0;
  // Exact bytes of the tokens; special tokens (end of turn, ...) are left out.
  virtual std::string decode(const std::vector<int>& ids) const = 0;
  // Tokens that end a completion (e.g. <|im_end|>, <|endoftext|>), besides the config's
  // eos_token_id.
  virtual std::vector<int> stop_tokens() const { return {}; }
  // Ids the codec knows (0: unknown). A checkpoint's embedding may have more rows than
  // that (padded to a round size); the policy never samples or scores those.
  virtual int64_t vocab_size() const { return 0; }
};

// How policy.load(dir) finds the codec of a checkpoint directory: by default the
// directory's tokenizer.json (tokenizer_codec.cpp). A loader returns null for a directory
// without a tokenizer (the policy then works on token ids only) and throws on a broken one.
using CodecLoader = std::shared_ptr<TextCodec> (*)(const std::string& dir);
void set_codec_loader(CodecLoader loader);
CodecLoader codec_loader();

}  // namespace policy
