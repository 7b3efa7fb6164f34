#include "run/run_length.hpp"

#include <cmath>

#include "core/error.hpp"

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

}  // namespace prenet
