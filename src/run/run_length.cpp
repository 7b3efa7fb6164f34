#include "run/run_length.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/quantity_text.hpp"

namespace prenet {

RunSteps run_steps(const RunLength& length, std::int64_t global_batch, std::int64_t tokens_per_sample) {
    if (length.samples > 0 && length.tokens > 0)
        throw Error("give either samples (with epochs) or tokens, not both");
    if (length.epochs > 0 && !(length.samples > 0)) throw Error("'epochs' needs 'samples' (samples per epoch)");
    if (!length.given()) throw Error("no run length: give samples (and epochs) or tokens");
    if (global_batch < 1) throw Error("the global batch must be at least 1");
    double steps = 0;
    if (length.tokens > 0) {
        if (tokens_per_sample <= 0)
            throw Error("'tokens' needs a model with tokens per sample (a language model); use samples instead");
        steps = std::ceil(length.tokens / (double(global_batch) * double(tokens_per_sample)));
    } else {
        double epochs = length.epochs > 0 ? length.epochs : 1.0;
        steps = std::ceil(length.samples * epochs / double(global_batch));
    }
    if (!(steps >= 1)) steps = 1;
    if (steps > 1e18) throw Error("the run is absurdly long (more than 1e18 optimizer steps)");
    RunSteps r;
    r.steps = static_cast<std::int64_t>(steps);
    r.samples = steps * double(global_batch);
    r.tokens = r.samples * double(tokens_per_sample);
    return r;
}

std::vector<std::string> batch_warnings(std::int64_t global_batch, std::int64_t tokens_per_sample,
                                        const RunLength& length, const RunSteps* steps) {
    std::vector<std::string> out;
    const bool tokens = tokens_per_sample > 0;
    const double batch_tokens = double(global_batch) * double(tokens_per_sample);
    const std::string batch_text =
        grouped(global_batch) + (tokens ? " sequences (" + count_words(batch_tokens) + " tokens)" : " samples");
    if (tokens ? batch_tokens > kLargestPublishedBatchTokens : double(global_batch) > kLargestPublishedBatchSamples)
        out.push_back("a global batch of " + batch_text + " per step is larger than published training runs use (" +
                      (tokens ? "up to about 63 million tokens" : "up to 65,536 images") +
                      "): past the critical batch size, more devices shorten the step but not the run, which needs "
                      "more samples to converge at such a batch; the run's time here assumes it does not");
    if (steps && steps->steps == 1) {
        double asked = length.tokens > 0 ? length.tokens : length.samples * (length.epochs > 0 ? length.epochs : 1.0);
        double one_step = length.tokens > 0 ? batch_tokens : double(global_batch);
        if (asked < one_step)
            out.push_back("the run (" + count_words(asked) + (length.tokens > 0 ? " tokens" : " samples") +
                          ") is less than one global batch of " + batch_text + ": its time is one whole step's");
    }
    return out;
}

}  // namespace prenet
