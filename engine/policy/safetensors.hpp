// Safetensors checkpoints, read in place: the file is memory-mapped and each tensor is a
// view of the mapping (no copy, no torch). Format: an 8-byte little-endian header length,
// a JSON header {"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...}, then the
// raw little-endian tensor bytes. A directory holds either model.safetensors or shards
// listed by model.safetensors.index.json ({"weight_map": {"name": "file"}}).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace policy {

struct LoadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class DType { F32, F16, BF16, F64, I64, I32, I16, I8, U8, BOOL };

const char* dtype_name(DType t);
size_t dtype_size(DType t);

struct TensorView {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void* data = nullptr;  // inside the mapping; valid while the file is open
  size_t nbytes = 0;
  std::string file;            // for messages
  int64_t numel() const;
};

// One mapped .safetensors file.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::filesystem::path& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  void* map_ = nullptr;
  size_t size_ = 0;
  std::map<std::string, TensorView> tensors_;
  std::map<std::string, std::string> metadata_;
};

// All tensors of a checkpoint directory (single file or sharded), by name.
class Checkpoint {
 public:
  explicit Checkpoint(const std::filesystem::path& dir);
  bool has(const std::string& name) const { return index_.count(name) != 0; }
  // Throws LoadError naming the tensor when absent.
  const TensorView& get(const std::string& name) const;
  std::vector<std::string> names() const;
  size_t files() const { return files_.size(); }

 private:
  std::filesystem::path dir_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const TensorView*> index_;
};

// Writes tensors as one .safetensors file (tests, fixtures and later checkpoints).
struct TensorData {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  const void* data;
  size_t nbytes;
};
void write_safetensors(const std::filesystem::path& path, const std::vector<TensorData>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace policy
