// Batches evaluated in the background, one after another in the order submitted, so that
// a script can sample the next kernels while these are measured on the workers.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "parallel/bench_workers/cluster.hpp"

namespace cluster {

struct Submission::State {
  std::vector<std::string> sources;
  bench::EvalOptions opts;
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false, abandoned = false;
  nlohmann::json results;
  std::exception_ptr error;
};

namespace {

// Never destroyed: the thread may still wait on them while the process exits.
struct Queue {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::shared_ptr<Submission::State>> waiting;
  bool running = false;
};
Queue& queue() {
  static Queue* q = new Queue;
  return *q;
}

void serve_queue() {
  Queue& q = queue();
  for (;;) {
    std::shared_ptr<Submission::State> s;
    {
      std::unique_lock lock(q.mu);
      q.cv.wait(lock, [&] { return !q.waiting.empty(); });
      s = std::move(q.waiting.front());
      q.waiting.pop_front();
    }
    {
      std::lock_guard lock(s->mu);
      if (s->abandoned) {  // dropped before it started: nobody waits for it
        s->done = true;
        s->done_cv.notify_all();
        continue;
      }
    }
    nlohmann::json results;
    std::exception_ptr error;
    try {
      results = cluster::evaluate_records(s->sources, s->opts);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard lock(s->mu);
    s->results = std::move(results);
    s->error = error;
    s->done = true;
    s->done_cv.notify_all();
  }
}

}  // namespace

Submission submit_batch(const std::vector<std::string>& sources, const bench::EvalOptions& opts) {
  auto s = std::make_shared<Submission::State>();
  s->sources = sources;
  s->opts = opts;
  Queue& q = queue();
  std::lock_guard lock(q.mu);
  if (!q.running) {
    std::thread(serve_queue).detach();
    q.running = true;
  }
  q.waiting.push_back(s);
  q.cv.notify_one();
  return Submission(s);
}

bool Submission::ready() const {
  std::lock_guard lock(state_->mu);
  return state_->done;
}

const nlohmann::json& Submission::wait() const {
  std::unique_lock lock(state_->mu);
  state_->done_cv.wait(lock, [&] { return state_->done; });
  if (state_->error) std::rethrow_exception(state_->error);
  return state_->results;
}

void Submission::abandon() const {
  std::unique_lock lock(state_->mu);
  state_->abandoned = true;
  state_->done_cv.wait(lock, [&] { return state_->done; });
}

}  // namespace cluster
