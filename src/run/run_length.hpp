#pragma once
// How long a training run is: --samples N with --epochs E (default 1), or --tokens T for language models
// (tokens per optimizer step = batch x grad_accum x seq). Steps round up: a last partial step is a step.
#include <cstdint>
#include <string>
#include <vector>

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

// The largest global batches published training runs use: past them, a batch that more devices make possible
// buys shorter steps but not a shorter run, since training at a batch beyond the critical batch size needs more
// samples to reach the same loss (McCandlish et al. 2018, "An Empirical Model of Large-Batch Training",
// arXiv:1812.06162). Language models: DeepSeek-V3 ramps to 15,360 sequences of 4,096 tokens (63M tokens,
// arXiv:2412.19437 section 4.2), the largest of the published runs; 64 Mi tokens is a round bound above it.
// Images: ImageNet's large-batch records train ResNet-50 at up to 65,536 images (Ying et al. 2018, "Image
// Classification at Supercomputer Scale", arXiv:1811.06992).
inline constexpr double kLargestPublishedBatchTokens = 67108864;  // 2^26
inline constexpr double kLargestPublishedBatchSamples = 65536;

// What makes a step's or a run's answer for `global_batch` misleading, in words (the API's `warnings`): a global
// batch past the published ones above, and a run shorter than one global batch (whose time is then a whole
// step's). `steps` is the run's, when one was asked (nullptr otherwise). Empty when nothing is off.
std::vector<std::string> batch_warnings(std::int64_t global_batch, std::int64_t tokens_per_sample,
                                        const RunLength& length, const RunSteps* steps);

}  // namespace prenet
