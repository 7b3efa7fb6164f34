#include "api/options.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <set>
#include <string_view>
#include <utility>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/precision.hpp"
#include "hardware/link.hpp"
#include "ops/finetune.hpp"
#include "parallel/cluster.hpp"
#include "parallel/layout.hpp"
#include "predict/predictor.hpp"
#include "run/framework.hpp"
#include "run/optimizer.hpp"
#include "run/overhead.hpp"

namespace prenet {

using nlohmann::json;

const char* to_string(OptionType type) {
    switch (type) {
        case OptionType::count: return "count";
        case OptionType::number: return "number";
        case OptionType::choice: return "choice";
        case OptionType::flag: return "flag";
        case OptionType::model: return "model";
        case OptionType::hardware: return "hardware";
        case OptionType::sheets: return "sheets";
        case OptionType::document: return "document";
        case OptionType::rows: return "rows";
        case OptionType::text: return "text";
        case OptionType::path: return "path";
        case OptionType::list: return "list";
    }
    return "flag";
}

const std::vector<CommandDef>& command_table() {
    static const std::vector<CommandDef> commands = {
        {"predict", kPredict, true, "step time, throughput and memory of training a model on accelerators",
         "--model <zoo-id | layers.json | config.json> [options]",
         "With --samples or --tokens each result gets a run: steps, hours, GPU-hours, cost and energy. When a step\n"
         "does not fit in memory, the result says by how much and what would make it fit (memory.advice).\n"},
        {"features", kFeatures, true, "per-layer computational features (params, FLOPs, bytes, activations)",
         "--model <zoo-id | file> [options]",
         "Prints params, forward and backward FLOPs (FLOPs = 2 x multiply-accumulates) and each layer's features.\n"},
        {"zoo", kListing, true, "the built-in models", "[--json]", "Lists the built-in models.\n"},
        {"hardware", kListing, true, "the accelerator catalogue", "[--json]", "Lists the accelerator catalogue.\n"},
        {"layers", kListing, true, "the layer types the layers-JSON format accepts", "[--json]",
         "Lists the layer types.\n"},
        {"options", kListing, true, "every option of every command (the table the CLI, API and page share)",
         "[--json]", "Lists the option table: name, flag, type, unit, range, default, commands.\n"},
        {"kernels", kKernels, false, "predict kernel times for rows of a CSV (NeuSight layout)",
         "--csv IN --hardware <id | spec file> [options]",
         "Reads kernel rows in the layout of NeuSight's ops tables (column `op` plus its dims: linear/bmm b,m,n,k;\n"
         "gemm m,n,k; conv b,in_channels,out_channels,kernel_size,input_size,stride,padding; conv2d,\n"
         "conv2d_grad_input, conv2d_grad_weight n,c,h,w,k,filter_h,filter_w[,pad_h,pad_w,stride_h,stride_w];\n"
         "flash_attention b,seq,heads,kv_heads,head_dim,causal (0|1)[,kv_seq] with an optional `phase` column\n"
         "forward|backward (FlashAttention-2's backward); ln, softmax and elementwise ops b,h; an optional\n"
         "`precision` column) and writes them back with a `predicted_ms` column appended.\n"},
        {"calibrate", kCalibrate, true, "fit a calibration of your devices to steps you measured on them",
         "--measurements <FILE.csv | FILE.json> [--hardware <id | spec file>] --out calibration.json",
         "Predicts every measured row (its columns are `prenet predict`'s option names, plus measured_ms and\n"
         "measures: step, forward_backward or forward; or a trace column naming a PyTorch profiler trace of the\n"
         "run), fits per device a factor per kernel family and matrix precision, one on the communication and one\n"
         "on the framework overhead, shrunk toward the uncalibrated model, and writes them with each row's error\n"
         "before and after. `prenet predict ... --calibration calibration.json` applies them to the devices it\n"
         "names (docs/calibration.md).\n"},
        {"fit", kFit, false, "fit the kernel models on data/ and write models/ and docs/accuracy.md", "[options]",
         "Fits the per-family kernel models on the measurements in --data, validates them leaving one accelerator\n"
         "out at a time, and writes the models, the accuracy report and plots. Deterministic: the same data gives\n"
         "the same files.\n"},
    };
    return commands;
}

const CommandDef* find_command(const std::string& name) {
    for (const auto& c : command_table())
        if (name == c.name) return &c;
    return nullptr;
}

namespace {

// A row of the table, written as what it declares: Row("batch", count, kModel).flag("batch", "N")...
// Its methods take views and literal lists and are kept out of line: build_table() runs once, and with every
// std::string and std::vector built inline at the call (each with its exception cleanup) it was the wasm module's
// largest function, 86 KB, which V8 took 25 ms to compile for its one run (now 54 KB and 4 ms; the module 16 KB
// smaller gzipped; docs/toolchain.md).
class Row {
public:
    // Word lists as the rows write them: a braced list of literals, or a vector made elsewhere.
    struct Words {
        std::vector<std::string> list;
        [[gnu::noinline]] Words(std::initializer_list<const char*> words) : list(words.begin(), words.end()) {}
        [[gnu::noinline]] Words(std::vector<std::string> words) : list(std::move(words)) {}
    };
    using Labels = std::initializer_list<std::pair<const char*, const char*>>;

    [[gnu::noinline]] Row(std::string_view name, OptionType type, unsigned commands) {
        d_.name = name;
        d_.type = type;
        d_.commands = commands;
        if (type == OptionType::count) d_.min = 1;
        if (type == OptionType::flag) d_.default_value = false;
    }
    [[gnu::noinline]] Row& flag(std::string_view flag, std::string_view metavar = {}) {
        d_.flag = flag;
        d_.metavar = metavar;
        return *this;
    }
    [[gnu::noinline]] Row& label(std::string_view label, std::string_view unit = {}) {
        d_.label = label;
        d_.unit = unit;
        return *this;
    }
    [[gnu::noinline]] Row& range(double min, double max, bool min_exclusive = false) {
        d_.min = min;
        d_.max = max;
        d_.min_exclusive = min_exclusive;
        return *this;
    }
    Row& up_to(double max) { return range(d_.min, max); }
    [[gnu::noinline]] Row& read_by(std::function<void(const std::string&, const std::string&)> check) {
        d_.check_text = std::move(check);
        return *this;
    }
    // A key a cluster document may hold; given, it makes the request a cluster question.
    [[gnu::noinline]] Row& clustered() {
        d_.may_be_in_cluster_document = true;
        d_.cluster_question = "given";
        return *this;
    }
    // A cluster question only above `n` (gpus: one device is not a cluster).
    [[gnu::noinline]] Row& cluster_above(double n) {
        d_.cluster_question = {{"above", n}};
        return *this;
    }
    // A cluster question only as this word (checkpointing selective: the parallel step costs it).
    [[gnu::noinline]] Row& cluster_when(std::string_view word) {
        d_.cluster_question = {{"is", std::string(word)}};
        return *this;
    }
    Row& layout_dimension() {
        d_.layout = true;
        return *this;
    }
    [[gnu::noinline]] Row& applies_with(std::string_view option, Words values) {
        d_.applies_with[std::string(option)] = std::move(values.list);
        return *this;
    }
    [[gnu::noinline]] Row& choice_with(std::string_view option, Words values) {
        d_.choice_with[std::string(option)] = std::move(values.list);
        return *this;
    }
    Row& of_cluster_options() {
        d_.is_the_cluster_document = true;
        return *this;
    }
    [[gnu::noinline]] Row& or_one_of(Words words, std::string_view bare = {}) {
        d_.switch_values = std::move(words.list);
        d_.switch_bare = bare;
        return *this;
    }
    [[gnu::noinline]] Row& choices(Words choices, Labels labels = {}) {
        d_.choices = std::move(choices.list);
        d_.choice_labels.clear();
        for (const auto& [word, text] : labels) d_.choice_labels.emplace(word, text);
        return *this;
    }
    // `value` null: decided by the model or other options; `text` says how.
    [[gnu::noinline]] Row& defaults(json value, std::string_view text) {
        d_.default_value = std::move(value);
        d_.default_text = text;
        return *this;
    }
    // On a cluster question, left blank, the plan search chooses it (`text` says so).
    [[gnu::noinline]] Row& searched_on_cluster(std::string_view text) {
        d_.cluster_default_text = text;
        return *this;
    }
    [[gnu::noinline]] Row& default_with(std::string_view option, Words values, json value) {
        d_.default_when[std::string(option)] = std::move(values.list);
        d_.default_when_value = std::move(value);
        return *this;
    }
    [[gnu::noinline]] Row& help(std::string_view help) {
        d_.help = help;
        return *this;
    }
    Row& echoed() {
        d_.echo = true;
        return *this;
    }
    [[gnu::noinline]] Row& on_page(std::string_view where, std::string_view url_key = {}) {
        d_.page = where;
        d_.url = url_key;
        return *this;
    }
    Row& advanced() {
        d_.advanced = true;
        return *this;
    }
    [[gnu::noinline]] Row& off_page(std::string_view why) {
        d_.page_note = why;
        return *this;
    }
    Row& cli_only() {
        d_.api = false;
        return *this;
    }
    [[gnu::noinline]] operator OptionDef() const { return d_; }

private:
    OptionDef d_;
};

std::vector<std::string> optimizer_choices() {
    std::vector<std::string> names;
    for (const auto& o : optimizer_catalogue()) names.push_back(o.name);
    return names;
}

// A number as the table's words write it: 8, 0.05.
std::string number_text(double x) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", x);
    return text;
}

// The default of an adapter option, which applies with --finetune lora or qlora only.
std::string with_adapters(const std::string& value, const std::string& source) {
    return value + " with lora or qlora (" + source + ")";
}

// --framework's words: auto, then the presets.
std::vector<std::string> framework_choices() {
    std::vector<std::string> out = {auto_framework};
    for (const auto& name : framework_names()) out.push_back(name);
    return out;
}

// The frameworks whose preset's loss is Megatron's in-place cross-entropy (FrameworkPreset::in_place_loss, what
// api/settings.cpp defaults --loss to): the page's default for the loss field under them.
std::vector<std::string> frameworks_with_in_place_loss() {
    std::vector<std::string> out;
    for (const auto& name : framework_names())
        if (preset_for(name).in_place_loss) out.push_back(name);
    return out;
}

std::vector<OptionDef> build_table() {
    using T = OptionType;
    constexpr unsigned kModel = kPredict | kFeatures;  // what builds and costs the model
    constexpr unsigned kRun = kPredict;                // a training step and run
    const double k2e40 = double(std::int64_t{1} << 40);
    const std::string offline = "`prenet kernels` and `prenet fit` work on files: native CLI only";
    const FineTune peft;  // the adapter options' defaults: PEFT's LoraConfig (ops/finetune.hpp)
    return {
        Row("model", T::model, kModel).flag("model", "M").label("Model").defaults(nullptr, "required")
            .help("a zoo id (`prenet zoo`), a layers-JSON file, a Hugging Face config.json or a diffusers config.json "
                  "(a diffusion model's denoiser)")
            .on_page("model"),
        Row("hardware", T::hardware, kPredict | kKernels | kCalibrate).flag("hardware", "H").label("Accelerators")
            .defaults("all", "all")
            .help("an id (`prenet hardware`), a spec JSON file, a comma-separated list of those, or all (calibrate: "
                  "the one accelerator of measured rows without a hardware column)")
            .on_page("hardware"),
        Row("custom_hardware", T::sheets, kPredict).label("Your own accelerators").defaults(nullptr, "none")
            .help("spec sheets added to the accelerators (the CLI takes spec files in --hardware instead); the "
                  "hardware command answers them as it reads them, a check of a sheet before it is kept")
            .on_page("hardware"),
        Row("batch", T::count, kModel).flag("batch", "N").label("Batch size", "samples per micro-batch").up_to(k2e40)
            .defaults(1, "1").searched_on_cluster("searched with the layout")
            .help("samples per micro-batch; a step is --grad-accum micro-batches").echoed()
            .default_with("finetune", {"full", "lora", "qlora", "freeze"}, 1)
            .on_page("training", "batch"),
        Row("seq", T::count, kModel).flag("seq", "L").label("Sequence length", "tokens").up_to(k2e40)
            .defaults(nullptr, "the model's; at most " + std::to_string(finetune_default_seq) + " when fine-tuning")
            .help("tokens per sample (language models)").echoed()
            .on_page("training", "seq"),
        Row("image", T::count, kModel).flag("image", "PX").label("Image size", "pixels").up_to(double(1 << 20))
            .defaults(nullptr, "the model's").help("image side in pixels (vision models)").echoed()
            .on_page("training", "image"),
        Row("encoders", T::choice, kModel).flag("encoders", "E").label("Diffusion encoders")
            .choices({"run", "cached"}, {{"run", "run: the VAE and text encoders in every step"},
                                         {"cached", "cached: latents and text embeddings computed ahead"}})
            .defaults("run", "run")
            .help("a diffusers model's frozen VAE encoder and text encoders: run forward in every step (diffusers' "
                  "DreamBooth and SD 1.x scripts) or cached ahead of training (train_text_to_image_sdxl precomputes "
                  "the latents and text embeddings), the step then the denoiser's alone; other models have none")
            .on_page("training", "enc").advanced(),
        Row("precision", T::choice, kModel | kKernels).flag("precision", "P").label("Precision")
            .choices({"fp32", "tf32", "fp16", "bf16", "fp8"},
                     {{"fp16", "fp16 (mixed)"}, {"bf16", "bf16 (mixed)"}, {"fp8", "fp8 (bf16 model, fp8 matmuls)"},
                      {"tf32", "tf32 (fp32 data, TF32 matmuls)"}}).defaults("fp32", "fp32")
            .help("fp16/bf16/fp8 are mixed precision with fp32 master weights, fp16 adds loss scaling "
                  "(docs/training-model.md)")
            .echoed().on_page("training", "precision"),
        Row("mixed", T::choice, kModel).flag("mixed", "R").label("Mixed-precision recipe").choices({"autocast", "half"}, {{"autocast", "autocast: fp32 weights and gradients, fp32 norms"},
                                           {"half", "half model + fp32 master weights (Megatron, DeepSpeed)"}})
            .defaults(nullptr, "autocast for fp16 and bf16")
            .help("how fp16/bf16 keep their tensors: autocast (PyTorch AMP: fp32 weights and gradients, norms, "
                  "softmax and embeddings in fp32) or half (Megatron/DeepSpeed: a half-precision model beside an "
                  "fp32 master copy); fp8 always runs as a bf16 model")
            .echoed().on_page("training", "mixed").advanced().choice_with("precision", {"fp16", "bf16"})
            .choice_with("finetune", {"none", "full", "freeze"}),
        Row("attention", T::choice, kModel).flag("attention", "A").label("Attention kernels")
            .choices({"eager", "flash", "flash1"},
                     {{"eager", "eager: scores materialised"},
                      {"flash", "flash: one fused kernel (FlashAttention-2, SDPA)"},
                      {"flash1", "flash1: FlashAttention 1 or Triton's of 2022 (slower)"}})
            .defaults("flash", "flash")
            .help("flash (one fused kernel, FlashAttention-2 / PyTorch SDPA: what PyTorch and Hugging Face "
                  "transformers run by default), flash1 (the same kernel's first generation, FlashAttention 1 or "
                  "the Triton FlashAttention of 2022, timed at the published 230/124 TFLOP/s A100 ratio as "
                  "slower) or eager (scores materialised, as Hugging Face's eager attention); a config's "
                  "attn_implementation (llm-foundry's attn_impl triton: flash1) or a layer's `flash` and "
                  "`flash_generation` win over the default")
            .echoed().on_page("training", "attn").advanced(),
        // Fine-tuning (ops/finetune.hpp, docs/training-model.md "Fine-tuning").
        Row("finetune", T::choice, kModel).flag("finetune", "MODE").label("Training")
            .choices({"none", "full", "lora", "qlora", "freeze"},
                     {{"none", "pre-training"}, {"full", "full fine-tune"}, {"lora", "LoRA (frozen base, adapters)"},
                      {"qlora", "QLoRA (4-bit NF4 base, adapters)"}, {"freeze", "partial: --freeze parts frozen"}})
            .defaults("none", "none: pre-training, every parameter trains")
            .help("none (pre-training) and full train every parameter; lora: PEFT's LoRA adapters on a frozen base "
                  "(half precision under fp16/bf16); qlora: LoRA over a 4-bit NF4 base with double quantisation "
                  "(bitsandbytes); freeze: the parts --freeze names stay frozen")
            .echoed().on_page("training", "ft"),
        Row("lora_rank", T::count, kModel).flag("lora-rank", "R")
            .label("LoRA rank").up_to(65536).defaults(nullptr, with_adapters(std::to_string(peft.rank), "PEFT's default"))
            .help("rank r of each adapter: r x (in + out) parameters per adapted projection").echoed()
            .on_page("training", "rank").applies_with("finetune", {"lora", "qlora"}),
        Row("lora_targets", T::text, kModel).flag("lora-targets", "LIST")
            .label("LoRA targets").defaults(nullptr, with_adapters(targets_text(peft.targets), "PEFT's default for Llama"))
            .help("the projections that get adapters, PEFT's names: " + lora_target_list_text() +
                  " (comma-separated), or all (PEFT's all-linear); a fused qkv projection is adapted when any of q, k, "
                  "v is named")
            .echoed().on_page("training", "targets").applies_with("finetune", {"lora", "qlora"}),
        Row("lora_alpha", T::number, kModel).flag("lora-alpha", "A")
            .label("LoRA alpha").range(0, 1e6, true).defaults(nullptr, with_adapters(number_text(peft.alpha), "PEFT's default"))
            .help("the adapters' scaling is alpha / rank; it changes neither time nor memory").echoed()
            .on_page("training", "alpha").advanced().applies_with("finetune", {"lora", "qlora"}),
        Row("lora_dropout", T::number, kModel).flag("lora-dropout", "P")
            .label("LoRA dropout").range(0, 1).defaults(nullptr, with_adapters(number_text(peft.dropout), "PEFT's default"))
            .help("dropout on each adapter's input: above 0 every adapted projection keeps a dropped-out copy of its "
                  "input and a mask, and runs the dropout's kernels")
            .echoed().on_page("training", "lora_drop").advanced().applies_with("finetune", {"lora", "qlora"}),
        Row("quantization", T::choice, kModel).flag("quantization", "Q")
            .label("Base quantization")
            .choices({"none", "int8", "nf4"}, {{"none", "none: half-precision base"},
                                               {"int8", "int8 (LLM.int8, per-row scales)"},
                                               {"nf4", "nf4 (4-bit NormalFloat, double quantisation)"}})
            .defaults(nullptr, "nf4 with qlora, none with lora")
            .help("how the frozen base's projections are stored with lora or qlora: nf4 (4.127 bits per weight with "
                  "its scales) or int8 (8 bits and an fp32 scale per row), dequantised before each matmul; none")
            .echoed().on_page("training", "quant").advanced().choice_with("finetune", {"lora"}),
        Row("freeze", T::text, kModel).flag("freeze", "PARTS")
            .label("Frozen parts").defaults(nullptr, "embeddings, when freezing")
            .help("with --finetune freeze, the parts that keep their weights: embeddings, head (the layers after the "
                  "last block), a stack of blocks (layers, encoder, decoder) or some of its copies (layers:0-11); "
                  "comma-separated")
            .echoed().on_page("training", "freeze").advanced().applies_with("finetune", {"freeze"}),
        Row("optimizer", T::choice, kRun).flag("optimizer", "O").label("Optimizer").choices(optimizer_choices(), {{"adamw", "AdamW"},
                                            {"adam", "Adam"},
                                            {"sgd", "SGD (momentum)"},
                                            {"adafactor", "Adafactor"},
                                            {"lion", "Lion"}})
            .defaults("adamw", "adamw").help("sgd (with momentum), adam, adamw, adafactor or lion").echoed()
            .on_page("training", "optimizer"),
        Row("optimizer_impl", T::choice, kRun).flag("optimizer-impl", "I").label("Optimizer implementation")
            .choices({"fused", "foreach"}, {{"fused", "fused: one multi-tensor kernel"},
                                            {"foreach", "foreach: torch.optim's multi-tensor ops"}}).defaults("fused", "fused")
            .help("fused (one multi-tensor kernel) or foreach (torch.optim's sequence of multi-tensor ops); "
                  "Adafactor has no fused kernel: fused runs it tensor by tensor")
            .echoed().on_page("training", "opt_impl").advanced(),
        Row("grad_accum", T::count, kRun).flag("grad-accum", "N").label("Gradient accumulation", "micro-batches")
            .up_to(double(std::int64_t{1} << 30)).defaults(1, "1")
            .help("micro-batches of --batch samples per optimizer step").echoed().on_page("training", "accum")
            .advanced(),
        Row("checkpointing", T::flag, kRun).flag("checkpointing").label("Activation checkpointing")
            .or_one_of(recompute_names(), "full").defaults(false, "off (searched on several devices)")
            .help("full (alone: the same): keep each block's input and recompute its forward in the backward pass; "
                  "attention-core: recompute only the attention core (Megatron's selective); op-selective: keep "
                  "each block's input and matmul outputs, recompute the rest (PyTorch's per-op selective); "
                  "offload: each block's activations to host memory and back; selective: what --framework calls "
                  "selective (attention-core, op-selective with fsdp and xla, full with deepspeed); none: keep everything")
            .echoed().on_page("training", "ckpt").advanced().cluster_when("selective"),
        Row("framework", T::choice, kRun).flag("framework", "F").label("Training framework")
            .choices(framework_choices(), {{"auto", "auto: each accelerator's usual one"},
                                           {"generic", "generic: PreNeT's defaults"},
                                           {"megatron", "Megatron-LM"},
                                           {"fsdp", "PyTorch FSDP"},
                                           {"deepspeed", "DeepSpeed"},
                                           {"xla", "JAX / XLA (TPU)"},
                                           {"graph", "graph compiler (Gaudi, Trainium)"}})
            .defaults(auto_framework, "auto: xla on TPUs, graph on Gaudi and Trainium, generic on GPUs")
            .help("what the framework does by default (docs/parallel.md): what selective checkpointing recomputes, "
                  "which tensor- and data-parallel collectives overlap compute, ZeRO-3's prefetch and re-gather, "
                  "whether element-wise chains are compiled into fused kernels, which gradients a bf16 model keeps "
                  "(Megatron's fp32 main_grad; DeepSpeed's BF16 optimizer at ZeRO 0-1: fp32 and bf16, its states "
                  "partitioned as ZeRO 1's); auto takes "
                  "each accelerator's usual framework and each result says which (framework_used)")
            .echoed().on_page("training", "fw").advanced(),
        Row("compile", T::flag, kRun).flag("compile").label("torch.compile").defaults(false, "off")
            .help("fuse each block's chains of element-wise and norm kernels into one kernel each (TorchInductor)")
            .echoed().on_page("training", "compile").advanced(),
        Row("channels_last", T::flag, kRun).flag("channels-last").label("Channels-last (NHWC)").defaults(false, "off: NCHW")
            .help("the model's activations are channels-last (torch.channels_last): half-precision convolutions on "
                  "tensor cores run without the NCHW<->NHWC transposes cuDNN adds around them in PyTorch's default "
                  "NCHW")
            .echoed().on_page("training", "nhwc").advanced(),
        Row("loss", T::choice, kRun).flag("loss", "L").label("Cross-entropy loss")
            .choices({"full", "chunked", "fused", "inplace"},
                     {{"full", "full: every token's fp32 logits kept"},
                      {"chunked", "chunked: one chunk of logits at a time (Liger)"},
                      {"fused", "fused: logits kept in their precision (flash-attn)"},
                      {"inplace", "in place: the fp32 softmax kept, its gradient written over it (Megatron)"}})
            .defaults("full", "full; inplace with --framework megatron")
            .default_with("framework", frameworks_with_in_place_loss(), "inplace")
            .help("full (PyTorch's cross_entropy: the fp32 logits of every token kept for the backward), chunked "
                  "(Liger-Kernel's fused linear cross-entropy: one chunk of tokens' logits at a time) or fused "
                  "(flash-attn's CrossEntropyLoss, llm-foundry's default: no fp32 copy, the logits and their "
                  "gradient in the model's precision) or inplace (Megatron's vocab-parallel cross-entropy, "
                  "--framework megatron's default: the fp32 softmax kept and the gradient written over it); memory "
                  "only")
            .echoed().on_page("training", "loss").advanced(),
        Row("breakdown", T::flag, kRun).flag("breakdown").label("Per-layer times").defaults(false, "off")
            .help("also the time of each layer (forward, backward with any recompute; every repeat and "
                  "micro-batch): in the table the 12 longest per accelerator, in JSON step.layers; and the "
                  "memory over one step (forward, backward, optimizer; the peak marked), in JSON memory.timeline")
            .echoed().on_page("results"),
        Row("samples", T::count, kRun).flag("samples", "N").label("Samples per epoch", "samples").up_to(1e18)
            .defaults(nullptr, "none: no run")
            .help("run length in samples per epoch (2e12 accepted), times --epochs; for a language model "
                  "--tokens takes precedence when both are given")
            .echoed().on_page("training", "samples"),
        Row("epochs", T::number, kRun).flag("epochs", "E").label("Epochs").range(0, 1e9, true)
            .defaults(nullptr, "1 with --samples").help("passes over --samples").echoed()
            .on_page("training", "epochs"),
        Row("tokens", T::count, kRun).flag("tokens", "T").label("Tokens to train on", "tokens").up_to(1e18)
            .defaults(nullptr, "none: no run")
            .help("run length in tokens (language models; tokens per step = batch x grad-accum x seq); a model "
                  "without tokens uses --samples instead when both are given")
            .echoed().on_page("training", "tokens"),
        Row("price_per_hour", T::number, kRun).flag("price-per-hour", "X")
            .label("Price per accelerator-hour", "USD per hour").range(0, 1e6)
            .defaults(nullptr, "the cheapest cloud price on each spec sheet")
            .help("price of one accelerator-hour for the run's cost").echoed().on_page("training", "pph").advanced(),
        Row("input_samples_per_s", T::number, kRun).flag("input-samples-per-s", "R")
            .label("Input pipeline rate", "samples per second").range(1e-3, 1e15).defaults(nullptr, "unlimited")
            .help("the input pipeline's rate: a step takes at least batch x grad-accum / R").echoed()
            .on_page("training", "input_rate").advanced(),
        Row("predictor", T::choice, kRun | kKernels | kCalibrate).flag("predictor", "P").label("Kernel-time predictor")
            .choices(predictor_names(), {{"learned", "learned from measurements"},
                                          {"roofline", "roofline (datasheet peaks only)"}}).defaults(nullptr, "learned when fitted models are built in, else roofline")
            .help("learned (kernel models fitted on measurements) or roofline (peak FLOP/s and bandwidth only)")
            .echoed().on_page("training", "predictor").advanced(),
        Row("kernel_models", T::document, kRun | kKernels | kCalibrate).flag("models", "FILE").label("Kernel models")
            .defaults(nullptr, "the built-in models")
            .help("use kernel models from FILE (as written by `prenet fit`) instead of the built-in ones")
            .off_page("a file written by `prenet fit` on a workstation; the page uses the models built in"),
        Row("calibration", T::document, kRun | kKernels | kCalibrate).flag("calibration", "FILE").label("Calibration")
            .defaults(nullptr, "none")
            .help("factors fitted to your own measured steps by `prenet calibrate`: applied to the devices the file "
                  "names, the others unchanged; given to calibrate, the devices it names that the new measurements "
                  "do not measure are kept in the new calibration (docs/calibration.md)")
            .off_page("the Calibrate panel keeps the page's calibration and sends it with every question"),
        Row("measurements", T::rows, kCalibrate).flag("measurements", "FILE").label("Measurements")
            .defaults(nullptr, "required")
            .help("measured rows: a CSV whose columns are predict's option names plus measured_ms and measures "
                  "(step, forward_backward, forward) or trace (a profiler trace file), or a JSON list of such "
                  "objects; a model or trace may be a file relative to it (the API takes the list, or the CSV text)")
            .off_page("the Calibrate panel takes the file or rows typed in"),
        Row("overhead", T::choice, kRun).flag("overhead", "MODE").label("Framework overhead")
            .choices(overhead_names(), {{"fitted", "fitted: launch gaps, per-step cost, overlap's loss"},
                                        {"none", "none: kernel times only"}})
            .defaults("fitted", "fitted")
            .help("what a framework's step adds to the kernels' times (docs/training-model.md): a gap per kernel "
                  "launch, a fixed cost per step and a share of the communication overlap hides, fitted on "
                  "published whole runs (models/overhead.json); none: the kernel-only step")
            .echoed().on_page("training", "overhead").advanced(),

        // Many accelerators (docs/parallel.md). Any layout dimension left out is searched when --gpus > 1.
        Row("gpus", T::count, kRun).flag("gpus", "N").label("Devices", "of each accelerator").up_to(double(limits::request_devices))
            .defaults(1, "1").help("devices the run spans; the layout's dp x tp x pp x cp must equal it").echoed()
            .on_page("cluster", "gpus").clustered().cluster_above(1),
        Row("gpus_per_node", T::count, kRun).flag("gpus-per-node", "K").label("Devices per node").up_to(4096)
            .defaults(nullptr, "the spec sheet's usual node (8 for SXM/OAM boards)")
            .help("devices per node (one scale-out network each)").echoed().on_page("cluster", "gpn").clustered(),
        Row("network", T::text, kRun).flag("network", "SPEC").label("Network per node")
            .defaults(nullptr, "the spec sheet's reference node")
            .help("the scale-out network of each node: NICs x speed and kind, e.g. 8x400g-ib, roce-3200g, ethernet-100g")
            .read_by([](const std::string& text, const std::string& spelling) { (void)parse_network(text, spelling); })
            .echoed().on_page("cluster", "net").advanced().clustered(),
        Row("topology", T::text, kRun).flag("topology", "AxBxC").label("Torus slice")
            .defaults(nullptr, "the most even slice of at most the pod")
            .help("the shape of each torus slice, TPU-style (4x4x8); the chips must be whole slices, joined by the "
                  "scale-out network. Only for accelerators whose fabric is a torus")
            .read_by([](const std::string& text, const std::string& spelling) { (void)parse_torus_shape(text, spelling); })
            .echoed().on_page("cluster", "topo").advanced().clustered(),
        Row("dp", T::count, kRun).flag("dp", "D").label("Data parallel").up_to(double(limits::request_devices)).defaults(nullptr, "searched")
            .help("data-parallel replicas").on_page("cluster", "dp").advanced().clustered().layout_dimension(),
        Row("tp", T::count, kRun).flag("tp", "T").label("Tensor parallel").up_to(4096).defaults(nullptr, "searched")
            .help("tensor-parallel devices per replica (Megatron: attention heads and MLP units split)").on_page("cluster", "tp").advanced().clustered().layout_dimension(),
        Row("pp", T::count, kRun).flag("pp", "P").label("Pipeline stages").up_to(4096).defaults(nullptr, "searched")
            .help("pipeline stages (the model's blocks split between them)").on_page("cluster", "pp").advanced().clustered().layout_dimension(),
        Row("cp", T::count, kRun).flag("cp", "C").label("Context parallel").up_to(4096).defaults(nullptr, "searched")
            .help("context-parallel devices (the sequence split, ring attention)").on_page("cluster", "cp").advanced().clustered().layout_dimension(),
        Row("ep", T::count, kRun).flag("ep", "E").label("Expert parallel").up_to(4096).defaults(nullptr, "searched")
            .help("expert-parallel devices (MoE experts split over data-parallel ranks; divides dp)").on_page("cluster", "ep").advanced().clustered().layout_dimension(),
        Row("vp", T::count, kRun).flag("vp", "V").label("Virtual stages").up_to(1024).defaults(nullptr, "searched")
            .help("model chunks per pipeline stage (the interleaved schedule)").on_page("cluster", "vp").advanced().clustered().layout_dimension(),
        Row("first_stage_blocks", T::count, kRun).flag("first-stage-blocks", "N").label("First stage blocks")
            .up_to(1e6).defaults(nullptr, "an even split")
            .help("blocks (layers) on the first pipeline stage, a multiple of vp, the rest split evenly over the "
                  "stages between (Megatron-Core's num_layers_in_first_pipeline_stage): the embedding's stage "
                  "gets fewer").on_page("cluster", "pfirst").advanced().clustered().layout_dimension(),
        Row("last_stage_blocks", T::count, kRun).flag("last-stage-blocks", "N").label("Last stage blocks")
            .up_to(1e6).defaults(nullptr, "an even split")
            .help("blocks (layers) on the last pipeline stage, a multiple of vp (Megatron-Core's "
                  "num_layers_in_last_pipeline_stage): the head's and loss's stage gets fewer")
            .on_page("cluster", "plast").advanced().clustered().layout_dimension(),
        Row("zero", T::count, kRun).flag("zero", "Z").label("ZeRO stage").range(0, 3).defaults(nullptr, "searched")
            .help("0: DDP; 1: optimizer states sharded; 2: + gradients (FSDP SHARD_GRAD_OP); 3: + weights (FSDP "
                  "FULL_SHARD)").on_page("cluster", "zero").advanced().clustered().layout_dimension(),
        Row("sequence_parallel", T::flag, kRun).flag("sequence-parallel").label("Sequence parallel")
            .or_one_of({"off"}).defaults(false, "on with tp > 1 unless given off")
            .help("norms and dropouts on 1/tp of the tokens, all-gather/reduce-scatter instead of all-reduce; off: "
                  "every tp rank runs them on all tokens (Megatron without --sequence-parallel, Megatron-DeepSpeed)")
            .on_page("cluster", "sp").advanced().clustered().layout_dimension(),
        Row("schedule", T::choice, kRun).flag("schedule", "S").label("Pipeline schedule")
            .choices({"1f1b", "interleaved", "gpipe", "zb-h1", "dualpipe"}).defaults(nullptr, "1f1b (interleaved with vp > 1)")
            .help("the pipeline schedule: zb-h1 (zero-bubble H1: weight gradients fill the drain), dualpipe "
                  "(DeepSeek-V3: pp even, micro-batches at least 2 pp, each rank holds two stages' weights)").on_page("cluster", "sched").advanced().clustered().layout_dimension(),
        Row("ep_overlap", T::choice, kRun).flag("ep-overlap", "O").label("Expert-parallel overlap")
            .choices({"none", "full"}, {{"none", "none: all-to-alls exposed"},
                                        {"full", "full: behind another micro-batch's compute (DualPipe, DeepEP)"}})
            .defaults("none", "none")
            .help("whether the MoE all-to-alls (dispatch, combine) hide behind compute: none, or full (DualPipe's "
                  "and DeepEP's two-stream overlap: exposed = max(0, all-to-all - a micro-batch's compute))")
            .echoed().on_page("cluster", "epov").advanced().clustered(),
        Row("tp_comm_overlap", T::flag, kRun).flag("tp-comm-overlap").label("Tensor-parallel overlap", "every collective")
            .defaults(false, "off")
            .help("every tensor-parallel collective pipelined with its layer's GEMMs (Megatron's --tp-comm-overlap, "
                  "Transformer Engine's userbuffers; torch's async TP): exposed = max(0, the collectives - the "
                  "micro-batch's matrix work), on layouts with sequence parallelism; off: the framework's own overlap")
            .echoed().on_page("cluster", "tpov").advanced().clustered(),
        Row("global_batch", T::count, kRun).flag("global-batch", "G").label("Global batch", "samples").up_to(k2e40)
            .defaults(nullptr, "batch x grad-accum x dp")
            .help("samples per optimizer step over all replicas: grad-accum = G / (batch x dp) must be whole")
            .echoed().on_page("cluster", "gbatch").clustered().applies_with("finetune", {"none", "full"}),
        Row("global_batch_tokens", T::count, kRun).flag("global-batch-tokens", "T").label("Global batch", "tokens")
            .up_to(1e15).defaults(nullptr, "none").help("the global batch in tokens (language models)")
            .on_page("cluster", "gtokens").clustered().applies_with("finetune", {"none", "full"}),

        Row("cluster", T::document, kRun).flag("cluster", "FILE").label("Cluster")
            .defaults(nullptr, "none")
            .help("a JSON document with any of gpus, gpus_per_node, network and the layout options (dp, tp, pp, cp, "
                  "ep, vp, first_stage_blocks, last_stage_blocks, zero, sequence_parallel, schedule, global_batch, global_batch_tokens); options given "
                  "beside it win")
            .of_cluster_options()
            .off_page("the page's cluster fields are its options one by one (and the link holds them)"),
        // CLI only: output, and the files of the offline commands.
        Row("csv", T::path, kKernels).flag("csv", "IN").defaults(nullptr, "required")
            .help("a table of kernels (NeuSight's ops layout) and collectives (op, message_size, gpus[, nodes])").cli_only().off_page(offline),
        Row("out", T::path, kKernels | kCalibrate).flag("out", "OUT").defaults(nullptr, "kernels: stdout; calibrate: not written")
            .help("kernels: where to write the table with predicted_ms; calibrate: the calibration document").cli_only().off_page(offline),
        Row("data", T::path, kFit).flag("data", "DIR").defaults(nullptr, "data").help("the measurements to fit on")
            .cli_only().off_page(offline),
        Row("models_out", T::path, kFit).flag("models", "OUT.json").defaults(nullptr, "models/kernels.json")
            .help("where to write the models").cli_only().off_page(offline),
        Row("report", T::path, kFit).flag("report", "OUT.md").defaults(nullptr, "docs/accuracy.md")
            .help("where to write the accuracy report").cli_only().off_page(offline),
        Row("plots", T::path, kFit).flag("plots", "DIR").defaults(nullptr, "docs/plots")
            .help("where to write the plots").cli_only().off_page(offline),
        Row("rows_per_device", T::count, kFit).flag("rows-per-device", "N").up_to(1e9).defaults(nullptr, "all")
            .help("at most N rows per device and family (a quick fit)").cli_only().off_page(offline),
        Row("trees", T::count, kFit).flag("trees", "N").up_to(1e9).defaults(nullptr, "the fit's default")
            .help("boosted trees per family").cli_only().off_page(offline),
        Row("dump_predictions", T::path, kFit).flag("dump-predictions", "OUT.csv").defaults(nullptr, "none")
            .help("every held-out prediction with its measurement").cli_only().off_page(offline),
        Row("collectives_out", T::path, kFit).flag("collectives", "OUT.json")
            .defaults(nullptr, "models/collectives.json").help("where to write the collective model")
            .cli_only().off_page(offline),
        Row("only", T::choice, kFit).flag("only", "PART").choices({"kernels", "collectives"})
            .defaults(nullptr, "everything")
            .help("fit only this part: kernels (no collective model), or collectives (the collective model and its "
                  "report section alone, in seconds)")
            .cli_only().off_page(offline),
        Row("without", T::list, kFit).flag("without", "CHIPS").defaults(nullptr, "none")
            .help("leave these chips out of everything (comma-separated device-id prefixes: `v100,a100` drops every "
                  "V100 and A100 variant), for checking whole-model predictions on chips the models never saw")
            .cli_only().off_page(offline),
        Row("json", T::flag, kPredict | kFeatures | kListing | kCalibrate).flag("json").defaults(false, "off")
            .help("print one JSON document instead of a table").cli_only()
            .off_page("the page shows tables and offers the JSON for download"),
        Row("help", T::flag, kEveryCommand).flag("help").defaults(false, "")
            .help("describe the command and its options").cli_only().off_page("the page describes each field beside it"),
        Row("version", T::flag, kEveryCommand).flag("version").defaults(false, "").help("print the version").cli_only()
            .off_page("the page shows the version in its footer"),
    };
}

// What a number option's range asks for, in words (counts say "a positive integer" where they are checked).
std::string number_word(const OptionDef& row) {
    if (row.min_exclusive) return "a positive number";
    // A rate's plausible minimum (the input pipeline's: a sample in 1,000 s; 1e-300 gave a step of 1e303 ms).
    if (row.min > 0) return "a number of at least " + number_text(row.min);
    return row.min == 0 ? "a non-negative number" : "a number";
}

[[noreturn]] void invalid(const OptionDef& row, const std::string& message) {
    throw Error(message, ErrorCode::invalid_value, row.name);
}

}  // namespace

const std::vector<OptionDef>& option_table() {
    static const std::vector<OptionDef> table = build_table();
    return table;
}

const OptionDef* find_option(const std::string& name) {
    for (const auto& row : option_table())
        if (row.name == name) return &row;
    return nullptr;
}

const OptionDef* find_flag(const std::string& flag, unsigned command_bit) {
    for (const auto& row : option_table())
        if (!row.flag.empty() && row.flag == flag && row.takes(command_bit)) return &row;
    return nullptr;
}

bool asks_cluster(const OptionDef& row, const json& value) {
    const json& when = row.cluster_question;
    if (when.is_null() || value.is_null()) return false;
    if (when == "given") return true;
    if (when.contains("above")) return value.is_number() && value.get<double>() > when["above"].get<double>();
    return when.contains("is") && value == when["is"];
}

void check_applies(const OptionDef& row, const RequestOptions& o) {
    if (!o.has(row.name)) return;
    for (const auto& [option, values] : row.applies_with) {
        const OptionDef* other = find_option(option);
        const std::string value = o.text(option);
        bool listed = false;
        std::string words;
        for (size_t i = 0; i < values.size(); ++i) {
            listed = listed || values[i] == value;
            words += (i ? " or " : "") + values[i];
        }
        if (listed) continue;
        std::string what = other->metavar;  // "MODE": the mode is ...
        for (auto& c : what) c = char(std::tolower(static_cast<unsigned char>(c)));
        throw Error("'" + row.name + "' applies to --" + other->flag + " " + words + " (the " + what + " is " + value +
                        ")",
                    ErrorCode::conflict, row.name);
    }
}

json options_json() {
    json rows = json::array();
    auto or_null = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
    for (const auto& row : option_table()) {
        json commands = json::array();
        for (const auto& c : command_table())
            if (row.takes(c.bit)) commands.push_back(c.name);
        bool numeric = row.type == OptionType::count || row.type == OptionType::number;
        rows.push_back({{"name", row.name},
                        {"flag", row.flag.empty() ? json(nullptr) : json("--" + row.flag)},
                        {"type", to_string(row.type)},
                        {"label", row.label},
                        {"unit", row.unit},
                        {"min", numeric ? json(row.min) : json(nullptr)},
                        {"max", numeric ? json(row.max) : json(nullptr)},
                        {"min_exclusive", numeric ? json(row.min_exclusive) : json(nullptr)},
                        {"integer", row.type == OptionType::count},
                        {"choices", row.type == OptionType::choice ? json(row.choices) : json(nullptr)},
                        {"choice_labels", row.choice_labels.empty() ? json(nullptr) : json(row.choice_labels)},
                        {"switch_values", row.switch_values.empty() ? json(nullptr) : json(row.switch_values)},
                        {"switch_bare", or_null(row.switch_bare)},
                        {"default", row.default_value},
                        {"default_text", row.default_text},
                        {"cluster_default_text", or_null(row.cluster_default_text)},
                        {"help", row.help},
                        {"commands", commands},
                        {"api", row.api},
                        {"echo", row.echo},
                        {"page", or_null(row.page)},
                        {"page_note", or_null(row.page_note)},
                        {"advanced", row.advanced},
                        {"url", or_null(row.url)},
                        {"cluster_question", row.cluster_question},
                        {"layout", row.layout},
                        {"applies_with", row.applies_with.empty() ? json(nullptr) : json(row.applies_with)},
                        {"choice_with", row.choice_with.empty() ? json(nullptr) : json(row.choice_with)},
                        {"default_with", row.default_when.empty() ? json(nullptr)
                                                                  : json{{"when", row.default_when},
                                                                         {"value", row.default_when_value}}}});
    }
    // The limits every document is read within (core/limits.hpp): the page checks a file or a link's value
    // against the same numbers before it holds the document (web/js/documents.js).
    json document_limits = {{"json_depth", limits::json_depth},
                            {"document_bytes", limits::document_bytes},
                            {"onnx_bytes", limits::onnx_bytes},
                            {"layers", limits::layers},
                            {"dimension", limits::dimension}};
    return {{"options", rows}, {"limits", document_limits}};
}

json check_option(const OptionDef& row, const json& v, const std::string& spelling) {
    switch (row.type) {
        case OptionType::count:
        case OptionType::number: {
            double x = v.is_number() ? v.get<double>() : NAN;
            if (row.type == OptionType::count) {
                if (!(x >= row.min) || x != std::floor(x))
                    invalid(row, spelling + (row.min >= 1 ? " must be a positive integer, got "
                                                          : " must be a non-negative integer, got ") + v.dump());
            } else if (!std::isfinite(x) || x < row.min || (row.min_exclusive && x == row.min)) {
                invalid(row, spelling + " must be " + number_word(row) + ", got " + v.dump());
            }
            if (x > row.max) invalid(row, spelling + " is absurdly large: " + v.dump());
            if (row.type == OptionType::count && x <= 9007199254740992.0) return json(std::int64_t(x));
            return json(x);
        }
        case OptionType::choice: {
            if (!v.is_string()) invalid(row, spelling + " must be a string");
            for (const auto& c : row.choices)
                if (v.get<std::string>() == c) return v;
            std::string known;
            for (size_t i = 0; i < row.choices.size(); ++i)
                known += (i ? (i + 1 == row.choices.size() ? " or " : ", ") : "") + row.choices[i];
            invalid(row, spelling + " must be " + known + ", got '" + v.get<std::string>() + "'");
        }
        case OptionType::flag:
            if (v.is_string())
                for (const auto& word : row.switch_values)
                    if (v.get<std::string>() == word) return v;
            if (!v.is_boolean()) {
                std::string words;
                for (const auto& w : row.switch_values) words += ", '" + w + "'";
                invalid(row, spelling + " must be true or false" + words);
            }
            return v;
        case OptionType::model:
            if (!v.is_string() && !v.is_object())
                throw Error(spelling + " must be a zoo id or a JSON document", ErrorCode::invalid_model, row.name);
            return v;
        case OptionType::hardware:
            if (!v.is_string() && !v.is_array() && !v.is_object())
                throw Error(spelling + " must be an id, \"all\", a spec object or a list of those",
                            ErrorCode::invalid_hardware, row.name);
            return v;
        case OptionType::sheets:
            if (!v.is_array()) throw Error(spelling + " must be a list of spec sheets", ErrorCode::invalid_hardware, row.name);
            return v;
        case OptionType::document:
            if (!v.is_object()) invalid(row, spelling + " must be a JSON object");
            return v;
        case OptionType::rows:
            if (!v.is_array() && !v.is_string()) invalid(row, spelling + " must be a list of row objects or CSV text");
            return v;
        case OptionType::text:
        case OptionType::path:
        case OptionType::list:
            if (!v.is_string()) invalid(row, spelling + " must be a string");
            if (row.check_text) row.check_text(v.get<std::string>(), spelling);
            return v;
    }
    return v;
}

RequestOptions::RequestOptions(const json& request, unsigned command_bit) {
    for (const auto& [key, v] : request.items()) {
        if (key == "command") continue;
        const OptionDef* row = find_option(key);
        if (!row || !row->api || !row->takes(command_bit)) {
            std::string message = "unknown option '" + key + "' for this command";
            for (const auto& other : option_table())
                if (other.api && other.takes(command_bit) && other.name != key &&
                    (other.name.find(key) != std::string::npos || key.find(other.name) != std::string::npos)) {
                    message += " (did you mean '" + other.name + "'?)";
                    break;
                }
            throw Error(message, ErrorCode::unknown_option, key);
        }
        if (v.is_null()) continue;  // null reads as absent: the page sends cleared fields as null
        values_[key] = check_option(*row, v, "'" + key + "'");
    }
    // A cluster document's keys are options of their own; one given beside the document wins.
    for (const auto& row : option_table()) {
        if (!row.is_the_cluster_document || !values_.contains(row.name)) continue;
        for (const auto& [key, v] : values_[row.name].items()) {
            const OptionDef* inner = find_option(key);
            if (!inner || !inner->may_be_in_cluster_document || !inner->takes(command_bit))
                throw Error("unknown field '" + key + "' in the " + row.name + " document (it takes gpus, gpus_per_node, "
                            "network and the layout options)", ErrorCode::unknown_option, row.name);
            if (values_.contains(key) || v.is_null()) continue;
            values_[key] = check_option(*inner, v, row.name + "." + key);
        }
    }
}

bool RequestOptions::has(const std::string& name) const { return values_.contains(name); }

const json& RequestOptions::value(const std::string& name) const {
    if (values_.contains(name)) return values_[name];
    const OptionDef* row = find_option(name);
    if (!row) throw Error("internal: no option '" + name + "' in the table", ErrorCode::internal);
    return row->default_value;
}

std::int64_t RequestOptions::count(const std::string& name) const {
    const json& v = value(name);
    return v.is_number() ? v.get<std::int64_t>() : 0;
}

double RequestOptions::number(const std::string& name) const {
    const json& v = value(name);
    return v.is_number() ? v.get<double>() : 0.0;
}

std::string RequestOptions::text(const std::string& name) const {
    const json& v = value(name);
    return v.is_string() ? v.get<std::string>() : std::string();
}

bool RequestOptions::flag(const std::string& name) const {
    const json& v = value(name);
    return v.is_boolean() && v.get<bool>();
}

json echo_settings(const json& resolved, const json& derived, unsigned command_bit) {
    json out = json::object();
    for (const auto& row : option_table()) {
        if (!row.echo || !row.takes(command_bit)) continue;
        if (!resolved.contains(row.name))
            throw Error("internal: the settings echo has no value for option '" + row.name + "'", ErrorCode::internal);
        out[row.name] = resolved[row.name];
    }
    for (const auto& [key, v] : derived.items()) {
        if (find_option(key))
            throw Error("internal: derived setting '" + key + "' is an option; echo it from the table",
                        ErrorCode::internal);
        out[key] = v;
    }
    return out;
}

}  // namespace prenet
