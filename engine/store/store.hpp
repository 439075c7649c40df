// A run directory: everything a run writes, written as it goes, so a crashed or killed
// run can be resumed without losing or repeating a record.
//
//   runs/<name>/config.json     the run's configuration, written once
//   runs/<name>/metrics.jsonl   one flushed JSON line per record (also kept in the database)
//   runs/<name>/run.sqlite      samples, metrics and the resume state
//   runs/<name>/checkpoints/    one directory per checkpoint, renamed into place when complete
//   runs/<name>/run.lock        flock(2)ed by the engine that has the run open; holds its pid
//
// One engine at a time writes a run: open() takes an exclusive lock on run.lock and a
// second open (from this process or another) fails, naming the pid that holds it. The
// kernel drops the lock when its holder exits or is killed, so a crash never leaves a run
// locked. A read-only open takes no lock and changes nothing (reports of a live run).
//
// Records written between begin() and commit() land together or not at all: a script
// that commits its progress marker (set("step", n)) in the same transaction as the step's
// samples and metrics resumes exactly after the last committed step.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

struct sqlite3;

namespace store {

using Json = nlohmann::json;

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Sample {
  int64_t id = 0;  // assigned by add_sample
  std::optional<int64_t> parent_id;
  int64_t iteration = 0;
  std::optional<int64_t> stage;
  std::string prompt, completion, code, status;
  std::optional<double> reward, gflops;
  Json timings = Json::object();  // e.g. {"compile_ms": .., "times": [..]}
  std::string config_id;
  Json extra = Json::object();  // anything else the script wants to keep with the sample
};

struct SampleQuery {
  std::optional<int64_t> iteration, stage, parent_id, after_id;
  std::optional<std::string> status, config_id;
  std::string order_by = "id";  // id, gflops, reward, iteration
  bool descending = false;
  int64_t limit = -1;
};

struct OpenOptions {
  std::optional<Json> config;  // written on creation, compared on reopen
  bool replace_config = false;  // on reopen, overwrite a differing config instead of failing
  bool read_only = false;  // an existing run, for reading: no lock, no repair, no writes
};

// Thrown by open() when another open run (in any process) holds the run's lock.
struct Locked : Error {
  Locked(const std::string& message, long holder) : Error(message), pid(holder) {}
  long pid;  // the holder's pid, 0 when it could not be read
};

// The pid of the process that has the run in dir open for writing (0 when its pid could
// not be read), or nothing when no process has. Creates nothing: a check before work that
// would be wasted on a run in use; open() alone decides.
std::optional<long> lock_holder(const std::filesystem::path& dir);

class Run {
 public:
  static std::unique_ptr<Run> open(const std::filesystem::path& dir, const OpenOptions& opts = {});
  ~Run();
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  bool resumed() const { return resumed_; }  // the directory held a run before open
  bool read_only() const { return read_only_; }
  const Json& config() const { return config_; }

  // Transactions nest; only the outermost commit writes.
  void begin();
  void commit();
  void rollback();
  bool in_transaction() const { return depth_ > 0; }

  void log(Json record);  // a metrics record (an object); gets "_seq"
  std::vector<Json> metrics() const;

  int64_t add_sample(const Sample& s);
  std::optional<Sample> sample(int64_t id) const;
  std::vector<Sample> samples(const SampleQuery& q = {}) const;
  int64_t count(const SampleQuery& q = {}) const;
  std::vector<Sample> lineage(int64_t id) const;  // the root first, the sample last

  std::optional<Json> get(const std::string& key) const;
  void set(const std::string& key, const Json& value);
  void erase(const std::string& key);
  Json state() const;  // every key

  // Checkpoints are written into a fresh staging directory and renamed into place on
  // commit, so a checkpoint either exists whole or not at all.
  std::filesystem::path begin_checkpoint(const std::string& name);
  std::filesystem::path commit_checkpoint(const std::string& name);
  std::vector<std::string> checkpoints() const;  // committed, oldest first
  std::filesystem::path checkpoint_path(const std::string& name) const;

 private:
  explicit Run(std::filesystem::path dir);
  static std::unique_ptr<Run> open_read_only(const std::filesystem::path& dir);
  void writable(const char* what) const;
  void exec(const char* sql);
  void reconcile_metrics();
  void append_metrics_line(const std::string& line);

  std::filesystem::path dir_;
  sqlite3* db_ = nullptr;
  Json config_;
  bool resumed_ = false;
  int depth_ = 0;
  std::vector<std::string> pending_lines_;  // metrics written inside the open transaction
  int metrics_fd_ = -1;
  int lock_fd_ = -1;  // run.lock, flock()ed while the run is open for writing
  bool read_only_ = false;
};

}  // namespace store
