#pragma once
// What to change when a step does not fit in an accelerator's memory: how far over it is, the largest
// micro-batch that fits with gradient accumulation keeping the global batch, whether activation
// checkpointing makes it fit, and the smallest catalogue accelerator that holds it as it is.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hardware/spec.hpp"

namespace prenet {

// Peak bytes per device of the same run at another micro-batch, with or without checkpointing.
using PeakAt = std::function<double(std::int64_t micro_batch, bool checkpointing)>;

struct BatchAdvice {
    std::int64_t batch = 0, grad_accum = 0;
    double peak_bytes = 0;
    // The largest micro-batch that fits at all; `batch` is the largest divisor of the global batch not above
    // it, so that batch x grad_accum keeps the global batch exactly.
    std::int64_t largest_fitting_batch = 0;
};

struct CheckpointAdvice {
    double peak_bytes = 0;  // at the current micro-batch
    bool fits = false;
    std::optional<BatchAdvice> micro_batch;  // when it does not fit as is: the largest micro-batch that does
};

struct HardwareAdvice {
    HardwareSpec hardware;
    std::int64_t batch = 0, grad_accum = 0;  // the settings it fits with
    bool checkpointing = false;
    double peak_bytes = 0;
};

// A fine-tuning setting to try instead (LoRA, QLoRA, with checkpointing) and its peak at the current batch.
struct FineTuneOption {
    std::string words;  // "QLoRA rank 16"
    std::string flags;  // "--finetune qlora --lora-rank 16"
    double peak_bytes = 0;
    // The same change as option values (the option table's names), for the page to apply: {mode, rank, and
    // checkpointing when the change turns it on}.
    std::string mode;
    std::int64_t rank = 0;
    bool checkpointing = false;
};

struct FineTuneAdvice {
    FineTuneOption option;
    bool fits = false;  // on this accelerator; otherwise `hardware` is the smallest one that holds it
    std::optional<HardwareSpec> hardware;
};

struct MemoryAdvice {
    double over_bytes = 0;
    std::optional<BatchAdvice> micro_batch;          // same checkpointing setting
    std::optional<CheckpointAdvice> checkpointing;   // only when checkpointing is off and the model has blocks
    // The smallest-capacity catalogue accelerator (the cheapest among equals) that holds the step as it is
    // or, when none does, with the smallest footprint: micro-batch 1 (same global batch) and checkpointing.
    std::optional<HardwareAdvice> smallest_hardware;
    // Devices of this accelerator over which FSDP (ZeRO 3) sharding of the model states (weights, gradients,
    // optimizer states) would leave room for the rest: a first estimate, which `--gpus N` then predicts.
    std::optional<std::int64_t> fsdp_devices;
    // Fine-tuning: the first of the request's options that fits here, else where the lightest one fits.
    std::optional<FineTuneAdvice> finetune;
    std::string summary;
};

struct AdviceRequest {
    double peak_bytes = 0, capacity_bytes = 0;
    std::int64_t batch = 1, grad_accum = 1;
    bool checkpointing = false;
    bool has_checkpoint_blocks = false;
    double model_state_bytes = 0;  // weights + gradients + optimizer states, what ZeRO 3 shards (0: not offered)
    std::vector<FineTuneOption> finetune_options;  // lightest change first
};

MemoryAdvice advise_memory(const AdviceRequest& request, const PeakAt& peak_at,
                           const std::vector<HardwareSpec>& catalogue);

// The largest micro-batch below `batch` that divides the global batch (batch x grad_accum) and whose peak
// fits `capacity`; nullopt when even a micro-batch of 1 does not fit. Exposed for tests.
std::optional<BatchAdvice> largest_fitting_micro_batch(std::int64_t batch, std::int64_t grad_accum, bool checkpointing,
                                                       double capacity, const PeakAt& peak_at);

}  // namespace prenet
