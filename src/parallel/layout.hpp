#pragma once
// A parallel layout (docs/parallel.md): how a training step is spread over dp x tp x pp x cp devices, with
// expert parallelism inside the data-parallel groups, ZeRO sharding, the pipeline schedule, micro-batches and
// activation checkpointing. Ranks are ordered tp (innermost), cp, dp, pp (outermost), as Megatron-LM orders
// them, so tensor-parallel groups are the most tightly linked devices.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "run/checkpointing.hpp"
#include "run/framework.hpp"

namespace prenet {

// 1F1B (Megatron-LM's default), interleaved 1F1B (vp > 1), GPipe, ZB-H1 (Qi et al. 2023, "Zero Bubble Pipeline
// Parallelism", arXiv 2401.10241: weight-gradient passes fill 1F1B's drain) and DualPipe (DeepSeek-V3, arXiv
// 2412.19437: two pipelines in opposite directions over the same ranks). Their bubbles and memory:
// parallel/pipeline.hpp.
enum class PipelineSchedule { one_f_one_b, interleaved, gpipe, zb_h1, dualpipe };
const char* to_string(PipelineSchedule s);
PipelineSchedule parse_schedule(const std::string& name);  // throws Error (field "schedule")

// Activation checkpointing as asked (--checkpointing): none, selective (what the framework calls selective:
// FrameworkPreset::selective), or one kind by name (run/checkpointing.hpp): attention-core (Megatron's
// selective), op-selective (PyTorch's per-op), full, offload.
enum class Recompute { none, selective, attention_core, op_selective, full, offload };
const char* to_string(Recompute r);
Recompute parse_recompute(const std::string& name);  // throws Error (field "checkpointing")
// The names parse_recompute accepts, none first (the option's choices).
std::vector<std::string> recompute_names();
// What runs: `selective` is the framework's kind, the others their own.
CheckpointKind checkpoint_kind(Recompute r, const FrameworkPreset& framework);
// The option value that names `kind` itself (advice writes a change with it).
Recompute named_recompute(CheckpointKind kind);

struct ParallelLayout {
    std::int64_t dp = 1, tp = 1, pp = 1, cp = 1, ep = 1, vp = 1;
    int zero = 0;  // 0: DDP; 1: optimizer states sharded; 2: + gradients; 3: + weights (FSDP FULL_SHARD)
    bool sequence_parallel = false;
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    std::int64_t micro_batch = 1;  // samples per micro-batch per data-parallel replica
    std::int64_t grad_accum = 1;   // micro-batches per step (the pipeline's micro-batches)
    Recompute recompute = Recompute::none;
    // Megatron-Core's uneven pipeline (num_layers_in_first_pipeline_stage / num_layers_in_last_pipeline_stage,
    // the CLI's --decoder-first/last-pipeline-num-layers): block copies on the first and last stage, the rest
    // split evenly over the stages between. 0: not given (the even split; stage_chunk_blocks says what then).
    std::int64_t first_stage_blocks = 0, last_stage_blocks = 0;

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
    // Every field, for comparisons: a layout is its fields.
    auto fields() const {
        return std::tie(dp, tp, pp, cp, ep, vp, zero, sequence_parallel, schedule, micro_batch, grad_accum, recompute,
                        first_stage_blocks, last_stage_blocks);
    }
    bool operator==(const ParallelLayout& o) const { return fields() == o.fields(); }
    bool operator<(const ParallelLayout& o) const { return fields() < o.fields(); }  // (map keys)
};

// first_stage_blocks and last_stage_blocks appear only when given (non-zero).
nlohmann::json to_json(const ParallelLayout& layout);

// Block copies in each of the pp x vp model chunks, chunk v x pp + s being stage s's v-th (the order the model's
// blocks run in), by Megatron-Core's rules (megatron/core/transformer/transformer_config.py __post_init__ and
// transformer_block.py get_num_layers_to_build / get_transformer_layer_offset):
// - first/last_stage_blocks given: each a multiple of vp, split evenly over its stage's vp chunks; the rest
//   over the pp - 1 or pp - 2 stages between, a whole multiple of vp per stage, at least one block each (with
//   no stage between, first + last must be every block);
// - else, pp x vp dividing the blocks: even chunks;
// - else, vp 1: the first (blocks mod pp) stages take one block more;
// - else, pp x vp dividing the blocks + 2: the embedding and the loss each count as a block
//   (account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split), so the first and the
//   last chunk hold one block fewer (Llama 3 405B's 126 blocks at pp 16, vp 2, 4 or 8);
// - else Error, field "vp" (or the first/last field whose count does not add up).
// `blocks`: the model's block copies (ModelShape::blocks); pp above them is check_layout's to refuse.
std::vector<std::int64_t> stage_chunk_blocks(const ParallelLayout& layout, std::int64_t blocks);

// The request's choices; whatever is left empty is searched (parallel/plan_search.hpp).
struct LayoutRequest {
    std::int64_t gpus = 1;
    std::optional<std::int64_t> dp, tp, pp, cp, ep, vp, micro_batch, grad_accum;
    std::optional<std::int64_t> first_stage_blocks, last_stage_blocks;
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
    std::int64_t ssm_heads = 0;            // what a Mamba mixer's d_inner splits into: Mamba-2's heads, Mamba's channels
};

// Throws Error (code invalid_value or conflict, field the dimension at fault) for a layout the model or the
// device count cannot take: product != gpus, tp not dividing the heads, pp above the blocks, blocks that do not
// split into the pipeline's chunks (stage_chunk_blocks), a schedule's own rules (vp > 1 runs the interleaved
// schedule, with micro-batches a multiple of pp; DualPipe needs pp even and an even number of micro-batches, at
// least 2 pp), ep dividing neither dp nor (as a multiple of tp) dp x tp, or not the experts, cp with a model
// without tokens, zero out of 0..3.
void check_layout(const ParallelLayout& layout, const ModelShape& shape, std::int64_t gpus);
// The same error returned, not thrown: the plan search refuses most of the layouts it enumerates, and an
// exception per refusal was most of its enumeration's time.
std::optional<Error> layout_refusal(const ParallelLayout& layout, const ModelShape& shape, std::int64_t gpus);

}  // namespace prenet
