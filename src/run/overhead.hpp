#pragma once
// What a training framework's step adds to the kernel times the predictors give (docs/training-model.md
// "Framework overhead"): the kernel models are fitted on microbenchmarks (back-to-back launches, warm caches,
// locked clocks), while a training step runs in an eager framework loop. Three named parameters, fitted on
// published whole runs only (models/overhead.json, written by tools/fit_overhead.mjs):
//   overhead_ms = launch_gap_ms x kernel launches + step_fixed_ms + overlap_loss x communication overlap hides.
// `--overhead none` (OverheadModel{}) leaves the kernel-only step unchanged.
#include <string>
#include <vector>

#include "core/limits.hpp"

namespace prenet {

struct OverheadModel {
    // ms per kernel launch: the gap an eager framework leaves between kernels (Python dispatch, the CUDA launch
    // itself when the GPU outruns the CPU, stream syncs) that back-to-back microbenchmarks do not see.
    double launch_gap_ms = 0;
    // ms per optimizer step: what runs once per step whatever the model (zero_grad, the allocator's frees, the
    // loss's host sync, logging, the data loader's hand-off).
    double step_fixed_ms = 0;
    // Dimensionless, 0-1: the share of the communication that overlap hides which is paid anyway. Overlapped
    // collectives' kernels take SMs and memory bandwidth from the compute they run beside (stream contention) and
    // FSDP's prefetches stall when a gather arrives late, so "hidden" communication is not free.
    double overlap_loss = 0;
    bool on() const { return launch_gap_ms > 0 || step_fixed_ms > 0 || overlap_loss > 0; }
};

// The overhead of one step of `kernels` launches whose overlapped communication (hidden behind compute, before
// this loss) took `hidden_communication_ms`: the sum of the two parts below.
double overhead_ms(const OverheadModel& model, double kernels, double hidden_communication_ms);
// The launch gaps and the fixed cost: what one device's step adds (run/step.cpp).
double launch_and_step_ms(const OverheadModel& model, double kernels);
// The overlapped communication's loss: what only many devices add (parallel/parallel_step.cpp).
double overlap_loss_ms(const OverheadModel& model, double hidden_communication_ms);

// A step whose kernels average less than this on the device likely waits for its host in an eager framework
// (Python dispatch and launches per op), which prenet does not time: Megatron-LM's 66M-parameter functional tests,
// predicted at 16-40 us per kernel, ran 7-13x slower than their kernels on A100 and H100; the fastest-kernel
// whole steps prenet predicts well average 57 us or more (docs/parallel-accuracy.md, data/published/).
inline constexpr double kHostBoundKernelMs = 0.05;
// The warning (the API's `warnings`) for a step whose kernels average under kHostBoundKernelMs: `device_ms` is the
// kernels' time (forward, backward, optimizer), `kernels` their launches. A framework that compiles the whole
// program (no Python per op: XLA, graph compilers) or --compile is not warned. Empty when none applies.
std::string host_pace_warning(double device_ms, double kernels, bool compiled);

// The fitted parameters compiled in (models/overhead.json); all zero when the file is absent.
const OverheadModel& fitted_overhead();
// The parameters of a models/overhead.json document; throws Error when one is missing or out of range.
OverheadModel overhead_from_json(const nlohmann::json& doc);

// `--overhead`'s choices: "fitted" (the default) or "none".
std::vector<std::string> overhead_names();
OverheadModel overhead_for(const std::string& name);

}  // namespace prenet
