#pragma once
// How long a training run is: --samples N with --epochs E (default 1), or --tokens T for language models
// (tokens per optimizer step = batch x grad_accum x seq). Steps round up: a last partial step is a step.
#include <cstdint>

namespace prenet {

struct RunLength {
    double samples = 0;  // per epoch; 0: not given
    double epochs = 0;   // 0: not given (1 when samples are)
    double tokens = 0;   // 0: not given
    bool given() const { return samples > 0 || tokens > 0; }
};

struct RunSteps {
    std::int64_t steps = 0;
    double samples = 0;  // samples processed (steps x global batch)
    double tokens = 0;   // tokens processed; 0 for models without tokens
};

// Throws Error for --tokens on a model without tokens per sample, both --samples and --tokens, --epochs
// without --samples, or more than 1e18 steps.
RunSteps run_steps(const RunLength& length, std::int64_t global_batch, std::int64_t tokens_per_sample);

}  // namespace prenet
