#pragma once
// What to change when a step does not fit in an accelerator's memory: every change of the request's settings
// that makes it fit, ranked by what it costs in step time (ranked_changes), by the same memory and step models;
// and beside them how far over it is, the largest micro-batch that fits with gradient accumulation keeping the
// global batch, whether activation checkpointing makes it fit, the smallest catalogue accelerator that holds
// it, FSDP over more devices and fine-tuning instead.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hardware/spec.hpp"
#include "run/checkpointing.hpp"
#include "run/memory.hpp"

namespace prenet {

// ---- Ranked changes: each change that makes the step fit, by the same model's peak and step time ----

// One change to the request's settings; what is unset stays as asked. The caller (api/) writes its CLI flags
// and the page's option values from these fields, so both name the same change.
struct SettingsChange {
    std::optional<CheckpointKind> checkpointing;
    std::optional<LossMode> loss;
    std::optional<std::int64_t> batch, grad_accum;  // a smaller micro-batch, the global batch kept
    // Many devices, the same device count: a ZeRO stage, a layout; 0 for dp/tp/pp/cp: left to the plan search
    // (ChangeModel::resolve names what it chose).
    std::optional<int> zero;
    std::optional<std::int64_t> dp, tp, pp, cp;
    bool operator<(const SettingsChange& o) const;
};

// A change that fits, as the same memory and step models predict it.
struct MemoryChange {
    SettingsChange change;
    std::string flags;      // "--checkpointing full"
    // The peak per device with the change: the device's (what `fits` judges: reserved + CUDA context + NCCL)
    // and the allocator's reserved peak (max_memory_reserved).
    double peak_bytes = 0, peak_reserved_bytes = 0;
    double step_ms = 0;     // the step (the same global batch) with the change
    double step_increase = 0;  // step_ms / the current step's - 1
    // A cut micro-batch that is not the largest that fits, because only a divisor of the global batch keeps it
    // (a global batch of 99,999,999 = 9 x 11 x 101 x 9,091 with 15 fitting: 11): the largest that fits; 0 when
    // the change's micro-batch is that largest, or it cuts none.
    std::int64_t largest_fitting_batch = 0;
};

// The request's own models, asked about a change: the memory per device (its `peak` judged against the
// capacity, as `fits` judges it) and (asked only for changes that fit) the step time; `resolve` (optional) the
// change as it would be given (what the model chose for what the change left open), which `flags` writes as
// CLI flags.
struct ChangeModel {
    std::function<MemoryUse(const SettingsChange&)> memory;
    std::function<double(const SettingsChange&)> step_ms;
    std::function<SettingsChange(const SettingsChange&)> resolve;
    std::function<std::string(const SettingsChange&)> flags;
};

struct ChangeRequest {
    double capacity_bytes = 0, step_ms = 0;  // the step as asked
    CheckpointKind checkpointing = CheckpointKind::none;
    LossMode loss = LossMode::full;
    bool has_checkpoint_blocks = false;
    bool has_full_loss_logits = false;  // a cross-entropy over logits that --loss chunked would chunk
    std::int64_t batch = 1, grad_accum = 1;
    // Further single changes the caller can evaluate (many devices: ZeRO stages, tp/pp/cp at the same count).
    std::vector<SettingsChange> more;
    bool combinations = true;  // where no single change fits, try the bounded pairs
};

// Checkpointing kinds that keep less than `kind`, lightest first: attention-core, op-selective, full, offload.
std::vector<CheckpointKind> heavier_checkpointing(CheckpointKind kind);

// Every single change (a heavier checkpointing kind, chunked loss, the largest fitting micro-batch, the caller's
// `more`) that fits, ranked; where none fits, bounded combinations: the largest fitting micro-batch under each
// heavier checkpointing kind, with and without chunked loss. At most `max_changes`.
// The rule: the cheapest change is the one whose step takes the least longer (the smallest step-time increase,
// the same global batch); equal times go to the candidate generated first (chunked loss, then checkpointing
// from the lightest kind, the micro-batch, the caller's). Offload, whose host copies the step model takes as
// hidden behind compute (so it would always look free), is offered only where no on-device kind fits.
std::vector<MemoryChange> ranked_changes(const ChangeRequest& request, const ChangeModel& model,
                                         size_t max_changes = 6);

// "--checkpointing full: fits at 71.2 GB reserved, step +28%".
std::string change_text(const MemoryChange& change);

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
    bool nf4_base = false;  // QLoRA: runs only where bitsandbytes has NF4 kernels (has_nf4_kernels)
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
    // Fine-tuning: the first of the request's options that fits here, else where the lightest one fits; an
    // option on an NF4 base (QLoRA) only on devices with NF4 kernels.
    std::optional<FineTuneAdvice> finetune;
    // Every change that fits by the same model, the cheapest (smallest step-time increase) first.
    std::vector<MemoryChange> changes;
    std::string summary;
};

struct AdviceRequest {
    double peak_bytes = 0, capacity_bytes = 0;
    std::int64_t batch = 1, grad_accum = 1;
    bool checkpointing = false;
    bool has_checkpoint_blocks = false;
    double model_state_bytes = 0;  // weights + gradients + optimizer states, what ZeRO 3 shards (0: not offered)
    std::vector<FineTuneOption> finetune_options;  // lightest change first
    bool nf4_kernels = true;                       // this device runs an NF4 base (has_nf4_kernels)
    std::vector<MemoryChange> changes;             // ranked_changes' answer: the summary names the first
};

// `candidates`: the accelerators another device may be named from (the request's selection: advice never
// names one the user did not ask about).
MemoryAdvice advise_memory(const AdviceRequest& request, const PeakAt& peak_at,
                           const std::vector<HardwareSpec>& candidates);

// The largest micro-batch below `batch` that divides the global batch (batch x grad_accum) and whose peak
// fits `capacity`; nullopt when even a micro-batch of 1 does not fit. Exposed for tests.
std::optional<BatchAdvice> largest_fitting_micro_batch(std::int64_t batch, std::int64_t grad_accum, bool checkpointing,
                                                       double capacity, const PeakAt& peak_at);

}  // namespace prenet
