// The task a spec describes: buffers and scalars from the prototype, inputs drawn fresh
// for every call, outputs checked element by element against the spec's own C reference
// (compiled at -O2 in a short-lived helper, never in the zygote or a kernel's process),
// within the spec's bound.
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>  // std::hash
#include <limits>
#include <stdexcept>

#include "task/between_calls.hpp"
#include "task/draw.hpp"
#include "task/helper.hpp"
#include "task/keystream.hpp"
#include "task/spec.hpp"
#include "task/task.hpp"
#include "task/trusted.hpp"

namespace bench {

namespace {

using json = nlohmann::json;
constexpr double kUnitRoundoff = 0x1.0p-53;

// Any prototype of int, long, double and pointer parameters is called through the x86-64
// System V assignment: integers and pointers in order into six registers, doubles into
// eight, the rest in 8-byte stack slots in order. A function with fewer parameters
// ignores the extra registers and slots; a void one leaves a value nobody reads.
using AnyCall = double (*)(intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t, double, double, double,
                           double, double, double, double, double, intptr_t, intptr_t, intptr_t, intptr_t,
                           intptr_t, intptr_t, intptr_t, intptr_t);
static_assert(kMaxStackArgs == 8);

// `where(p)`: the memory of pointer parameter p; `scalar(p)`: the value of double scalar p.
// A template, not std::function: the kernel's call is timed, and this is all of it but the
// call itself.
template <class Where, class Scalar>
double call_entry(void* entry, const TaskSpec& spec, const Where& where, const Scalar& scalar) {
  intptr_t ireg[6] = {}, stack[kMaxStackArgs] = {};
  double dreg[8] = {};
  int ni = 0, nd = 0, ns = 0;
  for (size_t p = 0; p < spec.params.size(); ++p) {
    const Param& par = spec.params[p];
    if (par.type == "double") {
      double v = scalar(p);
      if (nd < 8) dreg[nd++] = v;
      else std::memcpy(&stack[ns++], &v, sizeof v);
    } else {
      intptr_t v = par.pointer() ? reinterpret_cast<intptr_t>(where(p)) : static_cast<intptr_t>(par.int_value);
      if (ni < 6) ireg[ni++] = v;
      else stack[ns++] = v;
    }
  }
  return reinterpret_cast<AnyCall>(entry)(ireg[0], ireg[1], ireg[2], ireg[3], ireg[4], ireg[5], dreg[0], dreg[1],
                                          dreg[2], dreg[3], dreg[4], dreg[5], dreg[6], dreg[7], stack[0], stack[1],
                                          stack[2], stack[3], stack[4], stack[5], stack[6], stack[7]);
}

size_t element_bytes(const Param& p) { return p.type == "int*" ? 4 : 8; }
size_t slot_doubles(const Param& p) { return (size_t(p.count) * element_bytes(p) + 7) / 8; }

void* load_reference(const TaskSpec& spec) {
  return dlsym(load_trusted("the reference of task '" + spec.name + "'", spec.reference, {}, spec.entry),
               spec.entry.c_str());
}

class GenericTask final : public Task {
 public:
  GenericTask(TaskSpec spec, json problem, int64_t seed) : spec_(std::move(spec)), problem_(std::move(problem)), seed_(seed) {
    // Where each parameter lives: a stage input, a stage output, a drawn scalar's slot.
    for (size_t p = 0; p < spec_.params.size(); ++p) {
      const Param& par = spec_.params[p];
      if (par.pointer() && par.role == Role::in) stage_index_.push_back(inputs_++);
      else if (par.pointer()) {
        stage_index_.push_back(outputs_++);
        output_params_.push_back(p);
      } else if (par.drawn) stage_index_.push_back(scalars_++);
      else stage_index_.push_back(-1);
    }
    // A call's set: every drawn value (inputs, in-out buffers, scalars), then per output
    // its reference and the scale of its bound.
    for (size_t p = 0; p < spec_.params.size(); ++p) {
      const Param& par = spec_.params[p];
      in_offset_.push_back(set_doubles_);
      if ((par.pointer() && par.role != Role::out) || par.drawn) set_doubles_ += slot_doubles(par);
    }
    for (size_t o = 0; o < output_count(); ++o) {
      out_offset_.push_back(set_doubles_);
      set_doubles_ += 2 * output_size(o);
    }
  }

  std::string describe() const override {
    std::string s = spec_.name;
    for (auto it = spec_.size.begin(); it != spec_.size.end(); ++it) s += " " + it.key() + "=" + it.value().dump();
    return s + " seed " + (seed_ < 0 ? std::string("random") : std::to_string(seed_));
  }
  std::string key() const override {
    return "task:" + spec_.name + ":" + spec_.size.dump() + ":" + (seed_ < 0 ? "random" : std::to_string(seed_)) +
           ":" + std::to_string(std::hash<std::string>{}(problem_.at("spec").dump()));
  }
  std::string entry() const override { return spec_.entry; }
  double flops() const override { return spec_.flops; }
  double bytes() const override { return spec_.bytes; }
  json options() const override { return problem_; }
  std::vector<std::string> verify_modes() const override { return {"fp64"}; }

  void prepare(int calls, int threads) override {
    (void)threads;  // the reference is the project's own serial code
    if (calls <= calls_) return;
    const double bytes = double(calls) * double(set_doubles_) * sizeof(double);
    if (bytes > double(size_t(4) << 30))
      throw std::invalid_argument("warm-up and timed calls: " + std::to_string(calls) + " calls of " + describe() +
                                  " need " + std::to_string(int64_t(bytes / (1 << 20))) +
                                  " MB of reference data (at most 4096 MB): ask for fewer calls or a smaller size");
    GuardedBuffer work(sizeof(double) * size_t(calls) * set_doubles_, true);
    make_calls(work.data(), calls);
    SecretBuffer pool(size_t(calls) * set_doubles_);
    std::memcpy(pool.data(), work.data(), sizeof(double) * size_t(calls) * set_doubles_);
    pool_ = std::move(pool);
    calls_ = calls;
  }

  Stage make_stage() const override {
    Stage s;
    for (size_t p = 0; p < spec_.params.size(); ++p) {
      const Param& par = spec_.params[p];
      if (!par.pointer()) continue;
      auto& list = par.role == Role::in ? s.inputs : s.outputs;
      list.emplace_back(size_t(par.count) * element_bytes(par), true);
      (par.role == Role::in ? s.input_names : s.output_names).push_back(par.name);
    }
    if (spec_.returns == "double") {
      s.outputs.emplace_back(sizeof(double), true);
      s.output_names.push_back("the return value");
    }
    if (scalars_) {  // the drawn scalars of the call, read-only like every input
      s.inputs.emplace_back(sizeof(double) * scalars_, true);
      s.input_names.push_back("the drawn scalars");
    }
    return s;
  }

  void load_call(Stage& s, int c) const override {
    const double* set = set_of(c);
    for (size_t p = 0; p < spec_.params.size(); ++p) {
      const Param& par = spec_.params[p];
      const double* from = set + in_offset_[p];
      if (par.drawn) s.inputs.back().data()[stage_index_[p]] = *from;
      if (!par.pointer()) continue;
      GuardedBuffer& b = par.role == Role::in ? s.inputs[stage_index_[p]] : s.outputs[stage_index_[p]];
      if (par.role == Role::out)
        fill_in_parts(b.data(), size_t(par.count), std::numeric_limits<double>::quiet_NaN());
      else
        copy_in_parts(b.data(), from, size_t(par.count) * element_bytes(par));
    }
    if (spec_.returns == "double") s.outputs.back().data()[0] = std::numeric_limits<double>::quiet_NaN();
  }

  void invoke(void* entry, Stage& s) const override {
    double r = call_entry(entry, spec_, [&](size_t p) { return buffer_of(s, p); },
                          [&](size_t p) { return scalar_of(s, p); });
    if (spec_.returns == "double") s.outputs.back().data()[0] = r;
  }

  std::vector<std::string> yardsticks() const override {
    std::vector<std::string> names = {"reference"};
    for (const auto& y : spec_.yardsticks) names.push_back(y.name);
    return names;
  }

  Yardstick reference_entry(int threads, const std::string& name) override {
    if (name.empty() || name == "reference") return {load_reference(spec_), "reference", "the spec's C, gcc -O2"};
    auto y = std::find_if(spec_.yardsticks.begin(), spec_.yardsticks.end(), [&](auto& s) { return s.name == name; });
    if (y == spec_.yardsticks.end()) throw std::runtime_error("task '" + spec_.name + "' has no yardstick '" + name + "'");
    return load_yardstick(*y, spec_.entry, threads, spec_.name);
  }

  void wake_reference(void* entry, Stage& s) override {
    // Into scratch copies of the outputs (in-out buffers hold the call's inputs).
    scratch_.resize(output_params_.size());
    for (size_t o = 0; o < output_params_.size(); ++o) {
      const GuardedBuffer& b = s.outputs[o];
      scratch_[o].assign(b.data(), b.data() + b.bytes() / sizeof(double));
    }
    call_entry(entry, spec_,
               [&](size_t p) -> void* {
                 const Param& par = spec_.params[p];
                 return par.role == Role::in ? buffer_of(s, p) : scratch_[stage_index_[p]].data();
               },
               [&](size_t p) { return scalar_of(s, p); });
  }

  Check verify(const Stage& s, int call, const std::string& mode, uint64_t secret) const override {
    (void)mode;  // fp64 only (verify_modes)
    (void)secret;
    Check c;
    c.passed = true;
    const double* set = set_of(call);
    for (size_t o = 0; o < output_count(); ++o) {
      const Check out = check_in_parts(output_size(o), kGrain,
                                       [&](size_t from, size_t to) { return check_range(s, o, set, from, to); });
      c.max_rel_error = std::max(c.max_rel_error, out.max_rel_error);
      if (!out.passed && c.passed) c.passed = false, c.message = out.message;
    }
    return c;
  }

  // Elements [from, to) of output o against the reference.
  Check check_range(const Stage& s, size_t o, const double* set, size_t from, size_t to) const {
    Check c;
    c.passed = true;
    const double* got = s.outputs[o].data();
    const double* want = set + out_offset_[o];
    const double* scale = want + output_size(o);
    for (size_t i = from; i < to; ++i) {
      const double err = std::fabs(got[i] - want[i]);
      double rel = want[i] != 0 ? err / std::fabs(want[i]) : err;
      if (std::isnan(rel)) rel = std::numeric_limits<double>::infinity();
      c.max_rel_error = std::max(c.max_rel_error, rel);
      const double bound = spec_.bound.factor == 0 ? 0 : spec_.bound.factor * kUnitRoundoff * scale[i];
      if (!(err <= bound) && c.passed) {  // NaN never passes
        c.passed = false;
        char b[320];
        std::snprintf(b, sizeof b, "%s%s = %.17g, expected %.17g (error %.3g > %.3g, the bound %g u %s)",
                      s.output_names[o].c_str(), o < output_params_.size() ? ("[" + std::to_string(i) + "]").c_str() : "",
                      got[i], want[i], err, bound, spec_.bound.factor,
                      spec_.bound.scale == "inputs" ? "times the reference on the inputs' magnitudes"
                                                    : "times the output's largest magnitude");
        c.message = b;
      }
    }
    return c;
  }

  std::string locate(const Stage& s, uintptr_t addr, bool write) const override {
    char b[200];
    for (size_t i = 0; i < s.inputs.size(); ++i) {
      const GuardedBuffer& buf = s.inputs[i];
      const char* name = s.input_names[i].c_str();
      if (buf.contains(addr)) {
        size_t elem = i + 1 == s.inputs.size() && scalars_ ? 8 : element_bytes(spec_.params[input_param(i)]);
        std::snprintf(b, sizeof b, "%s the read-only input %s at %s[%zu]", write ? "wrote to" : "accessed", name, name,
                      size_t(addr - reinterpret_cast<uintptr_t>(buf.data())) / elem);
        return b;
      }
      if (buf.in_guard(addr)) {
        auto d = reinterpret_cast<uintptr_t>(buf.data());
        if (addr < d) std::snprintf(b, sizeof b, "accessed %zu bytes before the start of %s", size_t(d - addr), name);
        else std::snprintf(b, sizeof b, "accessed %zu bytes past the end of %s", size_t(addr - d - buf.bytes()), name);
        return b;
      }
    }
    return {};
  }

  void forget_secrets() override { pool_.forget(); }

 private:
  size_t output_count() const { return output_params_.size() + (spec_.returns == "double"); }
  size_t output_size(size_t o) const {
    return o < output_params_.size() ? size_t(spec_.params[output_params_[o]].count) : 1;
  }
  size_t input_param(size_t i) const {
    for (size_t p = 0; p < spec_.params.size(); ++p)
      if (spec_.params[p].pointer() && spec_.params[p].role == Role::in && stage_index_[p] == int(i)) return p;
    return 0;
  }
  double scalar_of(const Stage& s, size_t p) const {
    const Param& par = spec_.params[p];
    return par.drawn ? s.inputs.back().data()[stage_index_[p]] : par.double_value;
  }
  const double* set_of(int c) const { return pool_.data() + size_t(c) * set_doubles_; }
  void* buffer_of(const Stage& s, size_t p) const {
    const Param& par = spec_.params[p];
    return (par.role == Role::in ? s.inputs : s.outputs)[stage_index_[p]].data();
  }

  // A short-lived child draws every call's inputs from a keystream, loads the reference and
  // computes each call's outputs and the scales of their bounds, all into the shared
  // `sets`; the key and the reference die with it.
  void make_calls(double* sets, int calls) {
    run_in_helper([&] { compute_sets(sets, calls); }, "make the inputs and the reference of " + describe());
  }

  void compute_sets(double* sets, int calls) const {
    {
      Keystream key = seed_ < 0 ? Keystream::random() : Keystream::seeded(static_cast<uint64_t>(seed_));
      for (int c = 0; c < calls; ++c)
        for (size_t p = 0; p < spec_.params.size(); ++p) {
          const Param& par = spec_.params[p];
          if ((par.pointer() && par.role != Role::out) || par.drawn)
            draw_values(key, uint32_t(c), uint32_t(p), par.draw, par.count, sets + size_t(c) * set_doubles_ + in_offset_[p]);
        }
    }
    void* entry = load_reference(spec_);
    std::vector<std::vector<double>> mem(spec_.params.size());
    for (int c = 0; c < calls; ++c) {
      double* set = sets + size_t(c) * set_doubles_;
      for (bool magnitudes : {false, true}) {
        if (magnitudes && (spec_.bound.scale != "inputs" || spec_.bound.factor == 0)) break;
        for (size_t p = 0; p < spec_.params.size(); ++p) {
          const Param& par = spec_.params[p];
          if (!par.pointer()) continue;
          if (par.role == Role::out) mem[p].assign(slot_doubles(par), std::numeric_limits<double>::quiet_NaN());
          else mem[p].assign(set + in_offset_[p], set + in_offset_[p] + slot_doubles(par));
          if (magnitudes && par.type == "double*")
            for (double& x : mem[p]) x = std::fabs(x);
        }
        double r = call_entry(entry, spec_, [&](size_t p) -> void* { return mem[p].data(); },
                              [&](size_t p) {
                                const Param& par = spec_.params[p];
                                double v = par.drawn ? set[in_offset_[p]] : par.double_value;
                                return magnitudes ? std::fabs(v) : v;
                              });
        for (size_t o = 0; o < output_count(); ++o) {
          double* into = set + out_offset_[o] + (magnitudes ? output_size(o) : 0);
          if (o < output_params_.size()) std::copy_n(mem[output_params_[o]].data(), output_size(o), into);
          else into[0] = r;
          if (magnitudes)
            for (size_t i = 0; i < output_size(o); ++i) into[i] = std::fabs(into[i]);
        }
      }
      if (spec_.bound.scale == "output")
        for (size_t o = 0; o < output_count(); ++o) {
          const double* want = set + out_offset_[o];
          double largest = 0;
          for (size_t i = 0; i < output_size(o); ++i) largest = std::max(largest, std::fabs(want[i]));
          std::fill_n(set + out_offset_[o] + output_size(o), output_size(o), largest);
        }
    }
  }

  TaskSpec spec_;
  json problem_;
  int64_t seed_;
  std::vector<int> stage_index_;  // per parameter: its stage input, output or scalar slot
  std::vector<size_t> output_params_;
  int inputs_ = 0, outputs_ = 0, scalars_ = 0;
  std::vector<size_t> in_offset_, out_offset_;  // within a call's set, in doubles
  size_t set_doubles_ = 0;
  SecretBuffer pool_;
  int calls_ = 0;
  std::vector<std::vector<double>> scratch_;  // the reference child's untimed outputs
};

}  // namespace

std::unique_ptr<Task> make_generic_task(const json& p) {
  for (auto it = p.begin(); it != p.end(); ++it)
    if (it.key() != "task" && it.key() != "size" && it.key() != "seed" && it.key() != "spec")
      throw std::invalid_argument("problem: unknown field '" + it.key() + "' (expected task, size, seed, spec)");
  if (!p.at("task").is_string()) throw std::invalid_argument("problem.task must be a task's name");
  if (!p.contains("spec"))
    throw std::invalid_argument("problem.spec: missing (the engine resolves problem.task '" +
                                p.at("task").get<std::string>() + "' through bench.task)");
  json size = p.value("size", json::object());
  if (!size.is_object()) throw std::invalid_argument("problem.size must be a table of the size's variables");
  int64_t seed = -1;
  if (p.contains("seed")) {
    if (!p["seed"].is_number_integer() || p["seed"].get<int64_t>() < 0)
      throw std::invalid_argument("problem.seed must be a non-negative integer");
    seed = p["seed"].get<int64_t>();
  }
  TaskSpec spec = spec_from_json(p.at("spec"), size);
  if (spec.name != p.at("task").get<std::string>())
    throw std::invalid_argument("problem.task '" + p.at("task").get<std::string>() + "' names another task than its spec ('" +
                                spec.name + "')");
  return std::make_unique<GenericTask>(std::move(spec), p, seed);
}

json draw_task_inputs(const json& p, int call) {
  if (call < 0) throw std::invalid_argument("call must be 0 or more");
  (void)make_generic_task(p);  // the same checks as an evaluation's
  const TaskSpec spec = spec_from_json(p.at("spec"), p.value("size", json::object()));
  Keystream key = p.contains("seed") ? Keystream::seeded(p["seed"].get<uint64_t>()) : Keystream::random();
  json out = json::object();
  for (size_t i = 0; i < spec.params.size(); ++i) {
    const Param& par = spec.params[i];
    if (!((par.pointer() && par.role != Role::out) || par.drawn)) continue;
    std::vector<double> mem(slot_doubles(par));
    draw_values(key, uint32_t(call), uint32_t(i), par.draw, par.count, mem.data());
    json values = json::array();
    if (par.type == "int*") {
      const auto* ints = reinterpret_cast<const int32_t*>(mem.data());
      for (int64_t k = 0; k < par.count; ++k) values.push_back(ints[k]);
    } else {
      for (int64_t k = 0; k < par.count; ++k) values.push_back(mem[size_t(k)]);
    }
    out[par.name] = std::move(values);
  }
  return out;
}

std::unique_ptr<Task> make_task(const json& p) {
  if (p.is_object() && p.contains("task")) return make_generic_task(p);
  return make_matmul(p);
}

}  // namespace bench
