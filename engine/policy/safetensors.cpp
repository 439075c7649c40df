#include "policy/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

namespace policy {

namespace fs = std::filesystem;
using Json = nlohmann::json;

static const struct {
  DType t;
  const char* name;
  size_t size;
} kTypes[] = {
    {DType::F32, "F32", 4}, {DType::F16, "F16", 2}, {DType::BF16, "BF16", 2},
    {DType::F64, "F64", 8}, {DType::I64, "I64", 8}, {DType::I32, "I32", 4},
    {DType::I16, "I16", 2}, {DType::I8, "I8", 1},   {DType::U8, "U8", 1},
    {DType::BOOL, "BOOL", 1},
};

const char* dtype_name(DType t) {
  for (auto& e : kTypes)
    if (e.t == t) return e.name;
  return "?";
}

size_t dtype_size(DType t) {
  for (auto& e : kTypes)
    if (e.t == t) return e.size;
  return 0;
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

SafetensorsFile::SafetensorsFile(const fs::path& path) : path_(path) {
  const std::string where = path.string();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw LoadError(where + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw LoadError(where + ": cannot stat: " + std::strerror(errno));
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ < 8) {
    ::close(fd);
    throw LoadError(where + ": truncated file (" + std::to_string(size_) +
                    " bytes, shorter than the 8-byte header length)");
  }
  // Private and writable: pages are shared with the page cache until someone writes,
  // so a tensor used in place can never modify the file.
  map_ = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw LoadError(where + ": mmap failed: " + std::strerror(errno));
  }
  try {
    auto* bytes = static_cast<const unsigned char*>(map_);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; --i) hlen = (hlen << 8) | bytes[i];
    if (hlen > size_ - 8)
      throw LoadError(where + ": truncated file: header of " + std::to_string(hlen) +
                      " bytes announced, " + std::to_string(size_ - 8) + " present");
    Json header;
    try {
      header = Json::parse(bytes + 8, bytes + 8 + hlen);
    } catch (const std::exception& e) {
      throw LoadError(where + ": header is not valid JSON: " + e.what());
    }
    if (!header.is_object()) throw LoadError(where + ": header is not a JSON object");
    const unsigned char* base = bytes + 8 + hlen;
    const size_t avail = size_ - 8 - hlen;
    for (auto& [name, info] : header.items()) {
      if (name == "__metadata__") {
        if (info.is_object())
          for (auto& [k, v] : info.items())
            if (v.is_string()) metadata_[k] = v.get<std::string>();
        continue;
      }
      auto bad = [&](const std::string& why) {
        return LoadError(where + ": tensor '" + name + "': " + why);
      };
      if (!info.is_object() || !info.contains("dtype") || !info.contains("shape") ||
          !info.contains("data_offsets"))
        throw bad("header entry needs dtype, shape and data_offsets");
      TensorView v;
      v.name = name;
      v.file = where;
      std::string dt = info["dtype"].get<std::string>();
      bool found = false;
      for (auto& e : kTypes)
        if (dt == e.name) v.dtype = e.t, found = true;
      if (!found) throw bad("unsupported dtype " + dt);
      for (auto& d : info["shape"]) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0) throw bad("bad shape entry");
        v.shape.push_back(d.get<int64_t>());
      }
      auto& off = info["data_offsets"];
      if (!off.is_array() || off.size() != 2) throw bad("data_offsets must be [begin, end]");
      uint64_t b = off[0].get<uint64_t>(), e = off[1].get<uint64_t>();
      if (e < b) throw bad("data_offsets end before begin");
      if (e > avail)
        throw bad("truncated file: data ends at byte " + std::to_string(e) + " of the data "
                  "section but only " + std::to_string(avail) + " bytes are present");
      v.nbytes = e - b;
      if (v.nbytes != static_cast<size_t>(v.numel()) * dtype_size(v.dtype))
        throw bad("data_offsets span " + std::to_string(v.nbytes) + " bytes, shape and dtype "
                  "need " + std::to_string(v.numel() * dtype_size(v.dtype)));
      v.data = base + b;
      tensors_.emplace(name, std::move(v));
    }
  } catch (...) {
    ::munmap(map_, size_);
    map_ = nullptr;
    throw;
  }
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) ::munmap(map_, size_);
}

static Json read_json(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw LoadError(p.string() + ": cannot open");
  try {
    return Json::parse(in);
  } catch (const std::exception& e) {
    throw LoadError(p.string() + ": invalid JSON: " + e.what());
  }
}

Checkpoint::Checkpoint(const fs::path& dir) : dir_(dir) {
  const fs::path single = dir / "model.safetensors";
  const fs::path index = dir / "model.safetensors.index.json";
  std::vector<fs::path> paths;
  std::map<std::string, std::string> expected;  // tensor -> shard, from the index
  if (fs::exists(index)) {
    Json j = read_json(index);
    if (!j.contains("weight_map") || !j["weight_map"].is_object())
      throw LoadError(index.string() + ": no weight_map object");
    std::map<std::string, bool> seen;
    for (auto& [name, file] : j["weight_map"].items()) {
      std::string f = file.get<std::string>();
      expected[name] = f;
      if (!seen[f]) paths.push_back(dir / f), seen[f] = true;
    }
  } else if (fs::exists(single)) {
    paths.push_back(single);
  } else {
    throw LoadError(dir.string() + ": neither model.safetensors nor "
                    "model.safetensors.index.json is present");
  }
  for (auto& p : paths) {
    files_.push_back(std::make_unique<SafetensorsFile>(p));
    for (auto& [name, view] : files_.back()->tensors()) index_[name] = &view;
  }
  for (auto& [name, file] : expected)
    if (!index_.count(name))
      throw LoadError(index.string() + ": tensor '" + name + "' is listed in " + file +
                      " but that file does not hold it");
}

const TensorView& Checkpoint::get(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end())
    throw LoadError(dir_.string() + ": missing tensor '" + name + "'");
  return *it->second;
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> out;
  for (auto& [n, v] : index_) out.push_back(n);
  return out;
}

void write_safetensors(const fs::path& path, const std::vector<TensorData>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  Json header = Json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t off = 0;
  for (auto& t : tensors) {
    header[t.name] = {{"dtype", dtype_name(t.dtype)}, {"shape", t.shape},
                      {"data_offsets", {off, off + t.nbytes}}};
    off += t.nbytes;
  }
  std::string h = header.dump();
  while ((h.size() + 8) % 8) h.push_back(' ');  // keeps the data section 8-byte aligned
  fs::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw LoadError(tmp.string() + ": cannot create");
    unsigned char len[8];
    uint64_t n = h.size();
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
    out.write(reinterpret_cast<const char*>(len), 8);
    out.write(h.data(), static_cast<std::streamsize>(h.size()));
    for (auto& t : tensors)
      out.write(static_cast<const char*>(t.data), static_cast<std::streamsize>(t.nbytes));
    if (!out) throw LoadError(tmp.string() + ": write failed");
  }
  fs::rename(tmp, path);
}

}  // namespace policy
