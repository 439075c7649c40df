// One policy and one trainer spread over the ranks of a job (data parallel).
//
// Rank 0, the leader, runs the script. Every other rank follows it: it loads the policies
// the leader loads, builds the trainers it builds (each joined to one dist::Group), samples
// its share of every pol:sample and runs its share of every trainer step, so the script
// sees one policy and one trainer whatever the number of ranks. Evaluation stays on the
// leader (with its benchmark workers): its timings must not share cores with sampling.
//
// A team is described by the environment of each process:
//   ENGINE_RANK, ENGINE_WORLD_SIZE  this process's rank and the number of ranks
//   ENGINE_RENDEZVOUS               file:PATH or tcp:HOST:PORT (dist::Rendezvous::store)
//   ENGINE_LOCAL_RANK               its rank on its node (default: ENGINE_RANK); a policy
//                                   loaded on "cuda" goes to device LOCAL_RANK % devices
//   ENGINE_DIST_TIMEOUT             seconds a collective waits for a silent rank (300)
//   ENGINE_DIST_BACKEND             gloo or nccl (dist::Rendezvous::backend). Unset: nccl
//                                   when this build has it and ENGINE_LOCAL_WORLD_SIZE
//                                   ranks have a GPU each, else gloo
// `engine --ranks=N` sets these for N processes on one node and starts the followers.
//
// Checkpoints are written by the leader; trainer:load reads the directory on every rank,
// so it must be reachable from all (one node, or a shared file system).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "policy/policy.hpp"
#include "train/trainer.hpp"

namespace replica {

// Joins the team the environment describes (none: a team of one, and nothing changes).
// On a follower it serves the leader until told to stop and returns the process's exit
// status; on the leader it returns nullopt. Throws when the environment is malformed or
// the team cannot form.
std::optional<int> start();
// The leader tells the followers to stop (at exit; idempotent).
void stop();
int size();  // ranks in the team: 1 when alone

// The leader's side of each mirrored call: the same call on every rank, the work split.
std::shared_ptr<policy::Policy> load_policy(const std::string& dir, const policy::LoadOptions& o);
// With n >= ranks each rank samples its share of every prompt's n completions (rank r's
// seed is seed + r); otherwise the prompts are dealt out. Results in rank order.
std::vector<std::vector<policy::Completion>> sample(policy::Policy& pol,
                                                    const std::vector<std::vector<int>>& prompts,
                                                    const policy::SampleOptions& o);
std::shared_ptr<train::Trainer> grpo(std::shared_ptr<policy::Policy> pol, const train::GrpoOptions& o);
std::shared_ptr<train::Trainer> sft(std::shared_ptr<policy::Policy> pol, const train::UpdateOptions& o);
train::StepStats step(train::Trainer& t, const std::vector<train::Group>& groups);
train::StepStats step(train::Trainer& t, const std::vector<train::Example>& examples);
void load(train::Trainer& t, const std::filesystem::path& dir);
void set_lr(train::Trainer& t, double lr);
// The followers drop their copy (called by the deleter of what load_policy, grpo and sft
// return; never throws).
void release(const policy::Policy* pol);
void release(const train::Trainer* t);

// Rank r's device for a policy loaded on `device` ("cuda" or "cuda:K": the local rank's
// own device, counted from K; the CPU stays the CPU).
std::string device_for(const std::string& device, int local_rank, int cuda_devices);

}  // namespace replica
