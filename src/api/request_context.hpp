#pragma once
// What a predict request means before any accelerator is looked at: the model built at the asked sizes, its
// features, the kernel predictor, the step's and the memory estimate's options, the run's length, and the
// memory peak (which does not depend on the accelerator; each result compares it with its capacity).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "api/settings.hpp"
#include "ops/features.hpp"
#include "predict/predictor.hpp"
#include "run/memory.hpp"
#include "run/memory_advice.hpp"
#include "run/memory_timeline.hpp"
#include "run/run_length.hpp"
#include "run/step.hpp"

namespace prenet {

struct RequestContext {
    Settings settings;
    Model model;
    ModelFeatures features;
    std::unique_ptr<KernelPredictor> predictor;
    StepOptions step;
    MemoryOptions memory;
    MemoryUse memory_use;  // the peak and its parts; capacity 0 (with_capacity sets it per accelerator)
    std::int64_t global_batch = 1;
    std::optional<RunSteps> run;
    bool has_checkpoint_blocks = false;

    // One micro-batch's forward pass as the memory timeline walks it (the request's features and checkpointing).
    ForwardProfile memory_profile() const { return forward_profile(features, memory.precision, memory.checkpoint_kind()); }

    // The peak at another micro-batch or checkpointing setting (for memory advice): the model rebuilt at that
    // batch, the accumulation adjusted to keep the global batch. Cached: every result asks the same questions.
    double peak_at(std::int64_t micro_batch, bool checkpointing) const;
    // The same model asked about one change (memory advice): the reserved peak (cached; no accelerator in it)
    // and the step on `hw`.
    const MemoryUse& memory_with(const SettingsChange& change) const;
    // The change with what it leaves unset filled in from the request (checkpointing kind, loss, micro-batch,
    // accumulation): the key under which memory_with remembers it, whichever way the same settings are asked.
    SettingsChange settings_with(const SettingsChange& change) const;
    StepTime step_with(const SettingsChange& change, const HardwareSpec& hw, const KernelPredictor& predictor) const;
    // The model's features at another micro-batch (the model rebuilt at it). Cached.
    const ModelFeatures& features_at(std::int64_t micro_batch) const;

    // The fine-tuning settings to try when a fine-tuning step does not fit (LoRA and QLoRA at the request's rank
    // or advised_lora_rank, QLoRA with checkpointing), lightest change first, with their peaks at the current batch; none for pre-training
    // or a model without LoRA targets. Cached.
    std::vector<FineTuneOption> finetune_options() const;

    const nlohmann::json* model_argument = nullptr;  // the request's, which outlives the plan
    // The request without its accelerators (api.cpp's predict): what the answers for different accelerators share.
    // Empty: not known (a context made otherwise); nothing is then shared between requests but the model's stages.
    std::string question;
    mutable std::map<SettingsChange, MemoryUse> peaks;
    struct Built {
        Model model;
        ModelFeatures features;  // points into model
    };
    mutable std::map<std::int64_t, std::unique_ptr<Built>> built;
    mutable std::optional<std::vector<FineTuneOption>> finetune_alternatives;
};

// `kernel_models`: fitted models given with the request (null: the predictor the settings name).
RequestContext make_request_context(const nlohmann::json& model_argument, const nlohmann::json& kernel_models, Settings settings);

// The model a request names, at the settings' sizes (errors carry the field "model").
Model build_model(const nlohmann::json& model_argument, const ModelInputs& inputs);
// The same, with the defaults that depend on the model: a fine-tune's sequence, not given, is at most
// finetune_default_seq (api/options.hpp); `settings.inputs.seq` then says so.
Model build_request_model(const nlohmann::json& model_argument, Settings& settings);
// Its features at a precision; a cost that no limit on a single value caught (a product past 2^63 or the
// tensor limit) is the model's error too.
ModelFeatures model_features(const Model& model, Precision precision, MixedRecipe mixed,
                             const FineTune& finetune = FineTune{});

}  // namespace prenet
