#pragma once
// A request's settings: the option table's values (api/options.hpp) turned into the types the core uses,
// with defaults filled in and the cross-option rules checked; and their echo in a reply.
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "api/options.hpp"
#include "calibration/calibration.hpp"
#include "core/precision.hpp"
#include "graph/model.hpp"
#include "importers/zoo.hpp"
#include "ops/finetune.hpp"
#include "parallel/cluster.hpp"
#include "parallel/expert_parallel.hpp"
#include "parallel/layout.hpp"
#include "run/memory.hpp"
#include "run/optimizer.hpp"
#include "run/run_length.hpp"

namespace prenet {

struct Settings {
    ModelInputs inputs;
    Precision precision = Precision::fp32;
    // Where the precision came from: "--precision", "config.json torch_dtype" (a Hugging Face config names the
    // dtype its checkpoint is stored in, and no precision was asked for) or "default".
    std::string precision_source = "default";
    MixedRecipe mixed = MixedRecipe::autocast;
    std::string optimizer = "adamw", predictor;
    OptimizerImpl optimizer_impl = OptimizerImpl::fused;
    std::int64_t grad_accum = 1;
    bool checkpointing = false;      // full: every block recomputed
    Recompute recompute = Recompute::none;  // --checkpointing as asked (selective: the parallel step resolves it)
    bool breakdown = false;  // per-layer times in each result's step
    FrameworkPreset framework;  // --framework (run/framework.hpp); under auto, generic until settings_on_device
    bool framework_auto = false;  // --framework auto: each accelerator's usual one (usual_framework)
    bool compile = false;       // --compile: torch.compile's fused memory-bound chains
    bool channels_last = false;  // --channels-last: NHWC activations (run/memory_format.hpp)
    LossMode loss = LossMode::full;  // --loss
    FineTune finetune;       // what trains (ops/finetune.hpp); pre-training by default
    // The run's length as asked: tokens (language models) and/or samples x epochs; which applies is decided
    // once the model is known (resolve_budget).
    RunLength run;
    double price_per_hour = -1;       // < 0: the sheet's cheapest cloud price
    double input_samples_per_s = 0;   // 0: unlimited
    std::string overhead = "fitted";  // --overhead: the framework step overhead (run/overhead.hpp), or none
    FrameworkReserve reserve = FrameworkReserve::pytorch_default();
    // Many accelerators: the layout asked for (what is left empty is searched) and the cluster's overrides.
    LayoutRequest layout;
    ClusterRequest cluster;
    ExpertOverlap ep_overlap = ExpertOverlap::none;  // --ep-overlap
    bool tp_comm_overlap = false;                    // --tp-comm-overlap (run/framework.hpp's tensor_overlap)
    // Whether the request is a parallel one: more than one device, or any layout option given.
    bool parallel = false;
    // --calibration (calibration/calibration.hpp): null when none; applied by the request's predictor.
    std::shared_ptr<const Calibration> calibration;
};

// Reads a command's settings (kPredict or kFeatures); throws Error naming the option at fault.
Settings read_settings(const RequestOptions& options);
// The settings a request runs with on an accelerator of sheet kind `device_kind`: under --framework auto, that
// accelerator's usual framework (run/framework.hpp) with what it implies (--compile when it fuses); else `s`.
Settings settings_on_device(const Settings& s, const std::string& device_kind);
// A --calibration document, checked, for a request whose kernel predictor is `predictor` with `kernel_models`
// (null: the built-in ones) (errors: field "calibration").
std::shared_ptr<const Calibration> read_calibration(const nlohmann::json& document, const std::string& predictor,
                                                    const nlohmann::json& kernel_models);

// The run budget that applies to `model`: a language model trains on tokens when they were given, anything
// else on samples (x epochs); so one request with both answers for any model. Tokens alone for a model
// without tokens is an error.
void resolve_budget(Settings& s, const Model& model);

// The `settings` object of a reply: every echoed option of the command with the value used, and what follows.
nlohmann::json settings_json(const Settings& s, const Model& model, unsigned command_bit);

}  // namespace prenet
