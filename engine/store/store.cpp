#include "store/store.hpp"

#include "files/files.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <variant>

namespace fs = std::filesystem;

namespace store {

namespace {

class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st_, nullptr) != SQLITE_OK)
      throw Error(std::string("run store: ") + sqlite3_errmsg(db) + " in: " + sql);
  }
  ~Stmt() { sqlite3_finalize(st_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  void bind(int i, int64_t v) { sqlite3_bind_int64(st_, i, v); }
  void bind(int i, double v) { sqlite3_bind_double(st_, i, v); }
  void bind(int i, const std::string& v) {
    sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  template <class T>
  void bind(int i, const std::optional<T>& v) {
    if (v) bind(i, *v);
    else sqlite3_bind_null(st_, i);
  }
  bool step() {
    int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw Error(std::string("run store: ") + sqlite3_errmsg(db_));
  }
  bool null(int col) { return sqlite3_column_type(st_, col) == SQLITE_NULL; }
  int64_t integer(int col) { return sqlite3_column_int64(st_, col); }
  double real(int col) { return sqlite3_column_double(st_, col); }
  std::string text(int col) {
    auto p = reinterpret_cast<const char*>(sqlite3_column_text(st_, col));
    return p ? std::string(p, sqlite3_column_bytes(st_, col)) : std::string();
  }
  std::optional<int64_t> opt_integer(int col) {
    return null(col) ? std::nullopt : std::optional<int64_t>(integer(col));
  }
  std::optional<double> opt_real(int col) {
    return null(col) ? std::nullopt : std::optional<double>(real(col));
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* st_ = nullptr;
};

const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS samples(
  id INTEGER PRIMARY KEY,
  parent_id INTEGER REFERENCES samples(id),
  iteration INTEGER NOT NULL,
  stage INTEGER,
  prompt TEXT NOT NULL,
  completion TEXT NOT NULL,
  code TEXT NOT NULL,
  status TEXT NOT NULL,
  reward REAL,
  gflops REAL,
  timings TEXT NOT NULL,
  config_id TEXT NOT NULL,
  extra TEXT NOT NULL,
  created REAL NOT NULL);
CREATE INDEX IF NOT EXISTS samples_by_iteration ON samples(config_id, iteration, stage);
CREATE INDEX IF NOT EXISTS samples_by_parent ON samples(parent_id);
CREATE TABLE IF NOT EXISTS metrics(seq INTEGER PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS state(key TEXT PRIMARY KEY, value TEXT NOT NULL);
)";

const char* kSampleColumns =
    "id, parent_id, iteration, stage, prompt, completion, code, status, reward, gflops, "
    "timings, config_id, extra";

Json parse_json(const std::string& text, const std::string& what) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw Error("run store: corrupt " + what + ": " + e.what());
  }
}

Sample read_sample(Stmt& st) {
  Sample s;
  s.id = st.integer(0);
  s.parent_id = st.opt_integer(1);
  s.iteration = st.integer(2);
  s.stage = st.opt_integer(3);
  s.prompt = st.text(4);
  s.completion = st.text(5);
  s.code = st.text(6);
  s.status = st.text(7);
  s.reward = st.opt_real(8);
  s.gflops = st.opt_real(9);
  s.timings = parse_json(st.text(10), "sample timings");
  s.config_id = st.text(11);
  s.extra = parse_json(st.text(12), "sample extra");
  return s;
}

double now_seconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file_atomically(const fs::path& p, const std::string& text) {
  fs::path tmp = p;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw Error("run store: cannot write " + tmp.string());
  }
  fs::rename(tmp, p);
}

// Keys whose values differ between two configs, for a message a person can act on.
std::string config_difference(const Json& stored, const Json& given) {
  std::string out;
  auto note = [&](const std::string& k) { out += (out.empty() ? "" : ", ") + k; };
  if (!stored.is_object() || !given.is_object()) return "(whole config)";
  for (auto& [k, v] : given.items())
    if (!stored.contains(k) || stored[k] != v) note(k);
  for (auto& [k, v] : stored.items())
    if (!given.contains(k)) note(k);
  return out;
}

long read_pid(const fs::path& path) {
  try {
    return std::stol(read_file(path));
  } catch (const std::exception&) {
    return 0;
  }
}

// Takes the run's lock: an exclusive flock(2) on run.lock, which the kernel releases when
// the descriptor closes, including when the process dies. The holder writes its pid into
// the file for the message a second engine gets. Returns the locked descriptor.
int lock_run(const fs::path& dir) {
  fs::path path = dir / "run.lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error("run store: cannot open " + path.string() + ": " + std::strerror(errno));
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    int err = errno;
    long pid = read_pid(path);
    ::close(fd);
    if (err != EWOULDBLOCK)
      throw Error("run store: cannot lock " + path.string() + ": " + std::strerror(err));
    std::string who = pid > 0 ? "pid " + std::to_string(pid) : "a process whose pid is not known";
    if (pid == static_cast<long>(::getpid()))
      throw Locked("run store: " + dir.string() + " is already open in this process (pid " +
                       std::to_string(pid) + "): close it before opening it again",
                   pid);
    throw Locked("run store: " + dir.string() + " is in use by another engine (" + who +
                     "): wait for it to finish or stop it; one engine at a time may write a run",
                 pid);
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    // the lock holds without the pid; only the message of a second engine is poorer
  }
  return fd;
}

bool valid_name(const std::string& name) {
  return !name.empty() && name[0] != '.' && name.find('/') == std::string::npos;
}

}  // namespace

std::optional<long> lock_holder(const fs::path& dir) {
  fs::path path = dir / "run.lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return std::nullopt;  // never opened for writing
  int rc;
  while ((rc = ::flock(fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {
  }
  std::optional<long> holder;
  if (rc != 0 && errno == EWOULDBLOCK) holder = read_pid(path);
  ::close(fd);  // also drops the lock this probe took
  return holder;
}

Run::Run(fs::path dir) : dir_(std::move(dir)) {}

Run::~Run() {
  if (depth_ > 0) {
    depth_ = 1;
    try {
      rollback();
    } catch (...) {
    }
  }
  if (metrics_fd_ >= 0) ::close(metrics_fd_);
  sqlite3_close(db_);
  if (lock_fd_ >= 0) ::close(lock_fd_);  // the lock goes last, after every write
}

void Run::writable(const char* what) const {
  if (read_only_)
    throw Error(std::string("run store: ") + what + ": " + dir_.string() + " was opened read-only");
}

void Run::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw Error("run store (" + dir_.string() + "): " + msg);
  }
}

std::unique_ptr<Run> Run::open(const fs::path& dir, const OpenOptions& opts) {
  if (opts.read_only) return open_read_only(dir);
  std::error_code ec;
  fs::create_directories(dir / "checkpoints", ec);
  if (ec) throw Error("run store: cannot create " + dir.string() + ": " + ec.message());

  std::unique_ptr<Run> run(new Run(dir));
  run->lock_fd_ = lock_run(dir);
  run->resumed_ = fs::exists(dir / "run.sqlite", ec);
  if (sqlite3_open((dir / "run.sqlite").c_str(), &run->db_) != SQLITE_OK)
    throw Error("run store: cannot open " + (dir / "run.sqlite").string() + ": " +
                sqlite3_errmsg(run->db_));
  sqlite3_busy_timeout(run->db_, 5000);
  run->exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;");
  run->exec(kSchema);

  fs::path config_path = dir / "config.json";
  if (fs::exists(config_path, ec)) {
    run->config_ = parse_json(read_file(config_path), config_path.string());
    if (opts.config && *opts.config != run->config_) {
      if (!opts.replace_config)
        throw Error("run store: " + dir.string() +
                    " holds a run with a different configuration (differs in: " +
                    config_difference(run->config_, *opts.config) +
                    "); use another run name, or replace the configuration explicitly (replace_config)");
      run->config_ = *opts.config;
      write_file_atomically(config_path, run->config_.dump(2) + "\n");
    }
  } else {
    run->config_ = opts.config.value_or(Json::object());
    write_file_atomically(config_path, run->config_.dump(2) + "\n");
  }

  run->reconcile_metrics();
  return run;
}

std::unique_ptr<Run> Run::open_read_only(const fs::path& dir) {
  std::error_code ec;
  fs::path db_path = dir / "run.sqlite";
  if (!fs::exists(db_path, ec)) throw Error("run store: " + dir.string() + " holds no run");
  std::unique_ptr<Run> run(new Run(dir));
  run->read_only_ = true;
  run->resumed_ = true;
  if (sqlite3_open_v2(db_path.c_str(), &run->db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
    throw Error("run store: cannot open " + db_path.string() + ": " + sqlite3_errmsg(run->db_));
  sqlite3_busy_timeout(run->db_, 5000);
  fs::path config_path = dir / "config.json";
  run->config_ = fs::exists(config_path, ec)
                     ? parse_json(read_file(config_path), config_path.string())
                     : Json::object();
  return run;
}

// metrics.jsonl follows the database: a crash may leave a torn last line or lines the
// database committed but the file never got. Cut the one, append the others.
void Run::reconcile_metrics() {
  fs::path path = dir_ / "metrics.jsonl";
  std::string text = read_file(path);
  size_t complete = text.rfind('\n');
  complete = complete == std::string::npos ? 0 : complete + 1;
  int64_t last_seq = 0;
  std::istringstream lines(text.substr(0, complete));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    Json rec = parse_json(line, path.string() + " line");
    last_seq = std::max<int64_t>(last_seq, rec.value("_seq", int64_t{0}));
  }
  metrics_fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (metrics_fd_ < 0) throw Error("run store: cannot open " + path.string());
  if (complete != text.size() && ::ftruncate(metrics_fd_, static_cast<off_t>(complete)) != 0)
    throw Error("run store: cannot repair " + path.string());
  Stmt st(db_, "SELECT record FROM metrics WHERE seq > ? ORDER BY seq");
  st.bind(1, last_seq);
  while (st.step()) append_metrics_line(st.text(0));
}

void Run::append_metrics_line(const std::string& line) {
  std::string buf = line + "\n";
  const char* p = buf.data();
  size_t left = buf.size();
  while (left > 0) {
    ssize_t n = ::write(metrics_fd_, p, left);
    if (n < 0) throw Error("run store: cannot append to metrics.jsonl");
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void Run::begin() {
  writable("begin");
  if (depth_++ == 0) exec("BEGIN IMMEDIATE");
}

void Run::commit() {
  if (depth_ == 0) throw Error("run store: commit without begin");
  if (--depth_ > 0) return;
  exec("COMMIT");
  for (const auto& line : pending_lines_) append_metrics_line(line);
  pending_lines_.clear();
}

void Run::rollback() {
  if (depth_ == 0) throw Error("run store: rollback without begin");
  depth_ = 0;
  pending_lines_.clear();
  exec("ROLLBACK");
}

void Run::log(Json record) {
  if (!record.is_object()) throw Error("run store: a metrics record must be an object");
  begin();
  try {
    Stmt seq(db_, "SELECT COALESCE(MAX(seq), 0) + 1 FROM metrics");
    seq.step();
    record["_seq"] = seq.integer(0);
    std::string line = record.dump(-1, ' ', false, Json::error_handler_t::replace);
    Stmt ins(db_, "INSERT INTO metrics(seq, record) VALUES(?, ?)");
    ins.bind(1, seq.integer(0));
    ins.bind(2, line);
    ins.step();
    pending_lines_.push_back(line);
  } catch (...) {
    rollback();
    throw;
  }
  commit();
}

std::vector<Json> Run::metrics() const {
  std::vector<Json> out;
  Stmt st(db_, "SELECT record FROM metrics ORDER BY seq");
  while (st.step()) out.push_back(parse_json(st.text(0), "metrics record"));
  return out;
}

int64_t Run::add_sample(const Sample& s) {
  writable("add_sample");
  if (s.parent_id && !sample(*s.parent_id))
    throw Error("run store: parent sample " + std::to_string(*s.parent_id) + " does not exist");
  Stmt st(db_,
          "INSERT INTO samples(parent_id, iteration, stage, prompt, completion, code, status, "
          "reward, gflops, timings, config_id, extra, created) "
          "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)");
  st.bind(1, s.parent_id);
  st.bind(2, s.iteration);
  st.bind(3, s.stage);
  st.bind(4, s.prompt);
  st.bind(5, s.completion);
  st.bind(6, s.code);
  st.bind(7, s.status);
  st.bind(8, s.reward);
  st.bind(9, s.gflops);
  st.bind(10, s.timings.dump(-1, ' ', false, Json::error_handler_t::replace));
  st.bind(11, s.config_id);
  st.bind(12, s.extra.dump(-1, ' ', false, Json::error_handler_t::replace));
  st.bind(13, now_seconds());
  st.step();
  return sqlite3_last_insert_rowid(db_);
}

std::optional<Sample> Run::sample(int64_t id) const {
  Stmt st(db_, std::string("SELECT ") + kSampleColumns + " FROM samples WHERE id = ?");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  return read_sample(st);
}

namespace {

// The WHERE clause of a query and the values to bind to it, in order.
struct Filter {
  std::string where;
  std::vector<std::variant<int64_t, std::string>> values;

  template <class T>
  void add(const char* column, const std::optional<T>& v, const char* op = "=") {
    if (!v) return;
    where += where.empty() ? " WHERE " : " AND ";
    where += std::string(column) + " " + op + " ?";
    values.emplace_back(*v);
  }
  void bind(Stmt& st) const {
    int i = 1;
    for (const auto& v : values) std::visit([&](const auto& x) { st.bind(i++, x); }, v);
  }
};

Filter filter_of(const SampleQuery& q) {
  Filter f;
  f.add("iteration", q.iteration);
  f.add("stage", q.stage);
  f.add("parent_id", q.parent_id);
  f.add("id", q.after_id, ">");
  f.add("status", q.status);
  f.add("config_id", q.config_id);
  return f;
}

}  // namespace

std::vector<Sample> Run::samples(const SampleQuery& q) const {
  static const char* orders[] = {"id", "gflops", "reward", "iteration"};
  if (std::find(std::begin(orders), std::end(orders), q.order_by) == std::end(orders))
    throw Error("run store: cannot order samples by '" + q.order_by +
                "' (id, gflops, reward, iteration)");
  Filter f = filter_of(q);
  std::string sql = std::string("SELECT ") + kSampleColumns + " FROM samples" + f.where +
                    " ORDER BY " + q.order_by + (q.descending ? " DESC" : " ASC") +
                    " NULLS LAST, id" + (q.limit >= 0 ? " LIMIT " + std::to_string(q.limit) : "");
  Stmt st(db_, sql);
  f.bind(st);
  std::vector<Sample> out;
  while (st.step()) out.push_back(read_sample(st));
  return out;
}

int64_t Run::count(const SampleQuery& q) const {
  Filter f = filter_of(q);
  Stmt st(db_, "SELECT COUNT(*) FROM samples" + f.where);
  f.bind(st);
  st.step();
  return st.integer(0);
}

std::vector<Sample> Run::lineage(int64_t id) const {
  std::vector<Sample> chain;
  std::optional<int64_t> next = id;
  while (next) {
    auto s = sample(*next);
    if (!s) {
      if (chain.empty()) throw Error("run store: no sample with id " + std::to_string(id));
      break;
    }
    next = s->parent_id;
    chain.push_back(std::move(*s));
    if (chain.size() > 1'000'000) throw Error("run store: sample lineage has a cycle");
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

std::optional<Json> Run::get(const std::string& key) const {
  Stmt st(db_, "SELECT value FROM state WHERE key = ?");
  st.bind(1, key);
  if (!st.step()) return std::nullopt;
  return parse_json(st.text(0), "state '" + key + "'");
}

void Run::set(const std::string& key, const Json& value) {
  writable("set");
  Stmt st(db_, "INSERT INTO state(key, value) VALUES(?, ?) "
               "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  st.bind(1, key);
  st.bind(2, value.dump(-1, ' ', false, Json::error_handler_t::replace));
  st.step();
}

void Run::erase(const std::string& key) {
  writable("erase");
  Stmt st(db_, "DELETE FROM state WHERE key = ?");
  st.bind(1, key);
  st.step();
}

Json Run::state() const {
  Json out = Json::object();
  Stmt st(db_, "SELECT key, value FROM state ORDER BY key");
  while (st.step()) out[st.text(0)] = parse_json(st.text(1), "state '" + st.text(0) + "'");
  return out;
}

fs::path Run::checkpoint_path(const std::string& name) const {
  if (!valid_name(name)) throw Error("run store: invalid checkpoint name '" + name + "'");
  return dir_ / "checkpoints" / name;
}

fs::path Run::begin_checkpoint(const std::string& name) {
  writable("begin_checkpoint");
  fs::path staging = checkpoint_path(name);
  staging = staging.parent_path() / ("." + name + ".partial");
  std::error_code ec;
  files::remove_tree(staging.string());
  fs::create_directories(staging, ec);
  if (ec) throw Error("run store: cannot create " + staging.string() + ": " + ec.message());
  return staging;
}

fs::path Run::commit_checkpoint(const std::string& name) {
  writable("commit_checkpoint");
  fs::path final_path = checkpoint_path(name);
  fs::path staging = final_path.parent_path() / ("." + name + ".partial");
  std::error_code ec;
  if (!fs::is_directory(staging, ec))
    throw Error("run store: checkpoint '" + name + "' was not begun");
  files::remove_tree(final_path.string());
  fs::rename(staging, final_path, ec);
  if (ec) throw Error("run store: cannot commit checkpoint '" + name + "': " + ec.message());
  Json list = get("_checkpoints").value_or(Json::array());
  list.erase(std::remove(list.begin(), list.end(), Json(name)), list.end());
  list.push_back(name);
  set("_checkpoints", list);
  return final_path;
}

std::vector<std::string> Run::checkpoints() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& name : get("_checkpoints").value_or(Json::array()))
    if (fs::is_directory(dir_ / "checkpoints" / name.get<std::string>(), ec))
      out.push_back(name.get<std::string>());
  return out;
}

}  // namespace store
