#include <chrono>
#include <stdexcept>

#include "cuda/api.hpp"
#include "cuda/cuda.hpp"

namespace cuda {

namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

const detail::Driver& driver() {
  detail::Machine& m = detail::machine();
  if (!m.reason.empty()) throw std::runtime_error(m.reason);
  return m.driver;
}

void check(const detail::Driver& d, detail::CUresult r, const char* what) {
  if (r != 0) throw std::runtime_error(std::string(what) + ": " + detail::driver_error(d, r));
}

}  // namespace

EventClock::EventClock() {
  const detail::Driver& d = driver();
  detail::CUcontext ctx = nullptr;
  check(d, d.cuDevicePrimaryCtxRetain(&ctx, detail::machine().device), "the device's primary context");
  check(d, d.cuCtxSetCurrent(ctx), "making the primary context current");
  check(d, d.cuEventCreate(&start_, 0), "an event");
  check(d, d.cuEventCreate(&stop_, 0), "an event");
}

EventClock::~EventClock() {
  const detail::Driver& d = detail::machine().driver;
  if (start_) d.cuEventDestroy(start_);
  if (stop_) d.cuEventDestroy(stop_);
}

void EventClock::start() {
  const detail::Driver& d = driver();
  check(d, d.cuCtxSynchronize(), "the device before a call");
  wall_start_ = now_ms();
  check(d, d.cuEventRecord(start_, nullptr), "the start event");
}

EventClock::Reading EventClock::stop() {
  const detail::Driver& d = driver();
  check(d, d.cuEventRecord(stop_, nullptr), "the stop event");
  check(d, d.cuCtxSynchronize(), "the device after a call");
  Reading r;
  r.wall_ms = now_ms() - wall_start_;
  float ms = 0;
  check(d, d.cuEventElapsedTime(&ms, start_, stop_), "reading the events");
  r.events_ms = ms;
  return r;
}

}  // namespace cuda
