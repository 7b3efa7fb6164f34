#pragma once
// A parallel layout (docs/parallel.md): how a training step is spread over dp x tp x pp x cp devices, with
// expert parallelism inside the data-parallel groups, ZeRO sharding, the pipeline schedule, micro-batches and
// activation checkpointing. Ranks are ordered tp (innermost), cp, dp, pp (outermost), as Megatron-LM orders
// them, so tensor-parallel groups are the most tightly linked devices.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace prenet {

enum class PipelineSchedule { one_f_one_b, interleaved, gpipe };
const char* to_string(PipelineSchedule s);
PipelineSchedule parse_schedule(const std::string& name);  // throws Error (field "schedule")

// What activation checkpointing recomputes: nothing, the attention core only (Megatron's selective
// recomputation: scores, softmax and their dropout), or each block's whole forward.
enum class Recompute { none, selective, full };
const char* to_string(Recompute r);
Recompute parse_recompute(const std::string& name);  // throws Error (field "checkpointing")

struct ParallelLayout {
    std::int64_t dp = 1, tp = 1, pp = 1, cp = 1, ep = 1, vp = 1;
    int zero = 0;  // 0: DDP; 1: optimizer states sharded; 2: + gradients; 3: + weights (FSDP FULL_SHARD)
    bool sequence_parallel = false;
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    std::int64_t micro_batch = 1;  // samples per micro-batch per data-parallel replica
    std::int64_t grad_accum = 1;   // micro-batches per step (the pipeline's micro-batches)
    Recompute recompute = Recompute::none;

    std::int64_t devices() const { return dp * tp * pp * cp; }
    // Tensor parallelism of the experts: the layout's tp when the expert-parallel groups are carved from the
    // data-parallel ranks (ep divides dp); 1 when they also take the tensor-parallel ranks (ep a multiple of tp
    // dividing dp x tp: Megatron-Core's expert tensor parallel size 1, with sequence parallelism).
    std::int64_t expert_tp() const { return dp % ep == 0 ? tp : 1; }
    // Ranks holding the same expert weights: those outside one expert-parallel (and expert-tensor) group,
    // dp x cp / ep, times tp when the group spans the tp ranks. Expert gradients are reduced, and ZeRO shards
    // expert states, over these alone; the dense weights over all dp x cp.
    std::int64_t expert_replicas() const { return std::max<std::int64_t>(dp * cp * (tp / expert_tp()) / ep, 1); }
    std::int64_t global_batch() const { return micro_batch * grad_accum * dp; }
    bool operator==(const ParallelLayout& o) const;
};

nlohmann::json to_json(const ParallelLayout& layout);

// The request's choices; whatever is left empty is searched (parallel/plan_search.hpp).
struct LayoutRequest {
    std::int64_t gpus = 1;
    std::optional<std::int64_t> dp, tp, pp, cp, ep, vp, micro_batch, grad_accum;
    std::optional<int> zero;
    std::optional<bool> sequence_parallel;
    std::optional<PipelineSchedule> schedule;
    std::optional<Recompute> recompute;
    std::optional<std::int64_t> global_batch;         // samples per optimizer step over all replicas
    std::optional<std::int64_t> global_batch_tokens;  // the same in tokens (language models)
    bool fully_given() const;
};

// What a layout must agree with in the model (model_shape in parallel/tensor_parallel.hpp reads it from a model).
struct ModelShape {
    std::int64_t heads = 0, kv_heads = 0;  // attention heads (0: no attention)
    std::int64_t blocks = 0;               // repeated block copies a pipeline splits (transformer layers)
    std::int64_t experts = 0;              // experts per MoE layer (0: dense)
    std::int64_t tokens_per_sample = 0;
    std::string name;
};

// Throws Error (code invalid_value or conflict, field the dimension at fault) for a layout the model or the
// device count cannot take: product != gpus, tp not dividing the heads, pp above the blocks, vp not dividing
// the blocks per stage, ep dividing neither dp nor (as a multiple of tp) dp x tp, or not the experts, cp with a
// model without tokens, zero out of 0..3.
void check_layout(const ParallelLayout& layout, const ModelShape& shape, std::int64_t gpus);

}  // namespace prenet
