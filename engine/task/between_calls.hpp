#pragma once
// Work the evaluation process does between two calls (a call's inputs loaded, its outputs
// checked), split over the cores. No kernel runs then, so the cores are idle, and this
// work sits on the serial path of every pool: one thread did about half a millisecond of
// it per call at 256^3. Parts are fixed by the sizes alone and merged in order, so a result
// is the same however many workers there are.
#include <cstddef>
#include <functional>

#include "task/task.hpp"

namespace bench {

// Elements (doubles) a part holds at least: smaller arrays are one part, since waking a
// worker costs more than a few microseconds of copying.
constexpr size_t kGrain = 8192;

// Threads for `for_parts` from now on, the calling one included (the evaluation process,
// before a batch: the cores a kernel's calls use; 1: the calling thread does every part).
// Workers are started once and wait, blocked, between uses; each clears the stack below it
// after a part (clear_stack_below).
void set_between_call_workers(int n);

// How many parts `for_parts` cuts n elements into: one a `grain` elements at most, never
// more than the workers (with the calling thread).
size_t parts_of(size_t n, size_t grain);

// fn(part, begin, end) for each of parts_of(n, grain) consecutive ranges of [0, n), on the
// calling thread and the workers; returns when every part has. fn must not throw.
void for_parts(size_t n, size_t grain, const std::function<void(size_t, size_t, size_t)>& fn);

// A check of elements [0, n) in parts, range(from, to) checking one: merged in order, so the
// first failure named is the one a single pass finds, and max_rel_error is the largest.
Check check_in_parts(size_t n, size_t grain, const std::function<Check(size_t, size_t)>& range);

// Zeroes `bytes` of the stack below the caller's frame. A fork copies every thread's stack,
// so what a check left on one (values of a reference) would be in every kernel's process
// forked after it: the workers clear theirs after each part, and a kernel's child clears the
// one it was forked with before anything else (kernel_child/child.cpp).
void clear_stack_below(size_t bytes);

// memcpy and std::fill of doubles, in parts.
void copy_in_parts(void* to, const void* from, size_t bytes);
void fill_in_parts(double* to, size_t n, double value);

}  // namespace bench
