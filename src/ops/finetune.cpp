#include "ops/finetune.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "ops/op_support.hpp"

namespace prenet {

FineTuneMode parse_finetune_mode(const std::string& name) {
    if (name == "none") return FineTuneMode::none;
    if (name == "full") return FineTuneMode::full;
    if (name == "lora") return FineTuneMode::lora;
    if (name == "qlora") return FineTuneMode::qlora;
    if (name == "freeze") return FineTuneMode::freeze;
    throw Error("unknown fine-tuning mode '" + name + "' (expected none, full, lora, qlora or freeze)",
                ErrorCode::invalid_value, "finetune");
}

const char* to_string(FineTuneMode mode) {
    switch (mode) {
        case FineTuneMode::none: return "none";
        case FineTuneMode::full: return "full";
        case FineTuneMode::lora: return "lora";
        case FineTuneMode::qlora: return "qlora";
        case FineTuneMode::freeze: return "freeze";
    }
    return "none";
}

Quantization parse_quantization(const std::string& name) {
    if (name == "none") return Quantization::none;
    if (name == "int8") return Quantization::int8;
    if (name == "nf4") return Quantization::nf4;
    throw Error("unknown quantization '" + name + "' (expected nf4, int8 or none)", ErrorCode::invalid_value,
                "quantization");
}

const char* to_string(Quantization q) {
    switch (q) {
        case Quantization::none: return "none";
        case Quantization::int8: return "int8";
        case Quantization::nf4: return "nf4";
    }
    return "none";
}

namespace {

// The targets by the module kind they belong to: the one list both the names and their text come from.
struct TargetGroup {
    const char* kind;
    std::vector<std::string> names;
};
const std::vector<TargetGroup>& target_groups() {
    static const std::vector<TargetGroup> groups = {{"attention", {"q", "k", "v", "o"}},
                                                    {"MLPs", {"gate", "up", "down"}},
                                                    {"Mamba mixers", {"in", "x", "dt", "out"}}};
    return groups;
}

}  // namespace

const std::vector<std::string>& lora_target_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const auto& g : target_groups()) out.insert(out.end(), g.names.begin(), g.names.end());
        return out;
    }();
    return names;
}

std::string lora_target_list_text() {
    std::string out;
    for (const auto& g : target_groups()) {
        if (!out.empty()) out += ", ";
        for (size_t i = 0; i < g.names.size(); ++i) out += (i ? ", " : "") + g.names[i];
        out += std::string(" (") + g.kind + ")";
    }
    return out;
}

namespace {

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    std::string word;
    for (char c : text + ",") {
        if (c == ',') {
            if (!word.empty()) out.push_back(word);
            word.clear();
        } else if (!std::isspace(static_cast<unsigned char>(c))) {
            word += c;
        }
    }
    return out;
}

bool all_digits(const std::string& s) {
    return !s.empty() && s.size() <= 9 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "12" or "0-11" into first and last; false if it is neither.
bool parse_range(const std::string& s, std::int64_t& first, std::int64_t& last) {
    size_t dash = s.find('-');
    std::string a = s.substr(0, dash), b = dash == std::string::npos ? a : s.substr(dash + 1);
    if (!all_digits(a) || !all_digits(b)) return false;
    first = std::stoll(a), last = std::stoll(b);
    return first <= last;
}

// A block named "<stack>.<first>[-<last>]" (the importers' names for repeated layers): its stack and copies.
bool block_copies(const Block& block, std::string& stack, std::int64_t& first, std::int64_t& last) {
    size_t dot = block.name.rfind('.');
    if (dot == std::string::npos) return false;
    stack = block.name.substr(0, dot);
    return parse_range(block.name.substr(dot + 1), first, last) && last - first + 1 == block.repeat;
}

bool is_embedding(const Layer& layer) {
    return op_traits(layer).autocast == AutocastClass::fp32_output || layer.name.find("embedding") != std::string::npos;
}

}  // namespace

std::vector<std::string> parse_lora_targets(const std::string& text) {
    std::vector<std::string> words = split_list(text);
    if (words.empty())
        throw Error("'lora_targets' is empty: give " + lora_target_list_text() + " (comma-separated) or all",
                    ErrorCode::invalid_value, "lora_targets");
    std::set<std::string> chosen;
    for (std::string w : words) {
        if (w == "all" || w == "all-linear") {
            chosen.insert(lora_target_names().begin(), lora_target_names().end());
            continue;
        }
        if (w.size() > 5 && w.substr(w.size() - 5) == "_proj") w = w.substr(0, w.size() - 5);
        if (std::find(lora_target_names().begin(), lora_target_names().end(), w) == lora_target_names().end())
            throw Error("unknown LoRA target '" + w + "' in 'lora_targets' (expected " + lora_target_list_text() +
                            ", or all)",
                        ErrorCode::invalid_value, "lora_targets");
        chosen.insert(w);
    }
    std::vector<std::string> out;
    for (const auto& name : lora_target_names())
        if (chosen.count(name)) out.push_back(name);
    return out;
}

std::string targets_text(const std::vector<std::string>& targets) {
    if (targets.size() == lora_target_names().size()) return "all";
    std::string out;
    for (const auto& t : targets) out += (out.empty() ? "" : ",") + t;
    return out;
}

std::vector<FreezeRule> parse_freeze(const std::string& text) {
    std::vector<FreezeRule> rules;
    for (const auto& w : split_list(text)) {
        FreezeRule r;
        size_t colon = w.find(':');
        r.part = w.substr(0, colon);
        if (r.part.empty() || (colon != std::string::npos && !parse_range(w.substr(colon + 1), r.first, r.last)))
            throw Error("'freeze' part '" + w + "' is not embeddings, head, a stack (layers) or a stack with copies "
                        "(layers:0-11, layers:3)", ErrorCode::invalid_value, "freeze");
        if (colon != std::string::npos && (r.part == "embeddings" || r.part == "head"))
            throw Error("'freeze' part '" + w + "': " + r.part + " has no copies to choose", ErrorCode::invalid_value,
                        "freeze");
        rules.push_back(r);
    }
    if (rules.empty())
        throw Error("'freeze' is empty: give embeddings, head or layers:FIRST-LAST (comma-separated)",
                    ErrorCode::invalid_value, "freeze");
    return rules;
}

std::string freeze_text(const std::vector<FreezeRule>& rules) {
    std::string out;
    for (const auto& r : rules) {
        out += (out.empty() ? "" : ",") + r.part;
        if (r.first >= 0)
            out += ":" + std::to_string(r.first) + (r.last != r.first ? "-" + std::to_string(r.last) : "");
    }
    return out;
}

bool selects_target(const std::vector<std::string>& targets, const std::string& target) {
    auto has = [&](const char* t) { return std::find(targets.begin(), targets.end(), t) != targets.end(); };
    if (target == "qkv") return has("q") || has("k") || has("v");
    if (target == "kv") return has("k") || has("v");
    return std::find(targets.begin(), targets.end(), target) != targets.end();
}

double quantized_bytes(Quantization q, double elements, double rows) {
    switch (q) {
        case Quantization::none: return 0.0;
        case Quantization::int8: return elements + 4.0 * rows;
        case Quantization::nf4: {
            double blocks = std::ceil(elements / 64.0);
            return std::ceil(elements / 2.0) + blocks + 4.0 * std::ceil(blocks / 256.0);
        }
    }
    return 0.0;
}

FineTuneLayout layout_for_finetune(const Model& model, const FineTune& ft) {
    FineTuneLayout out;
    out.given = &model;
    if (!ft.freezes()) {
        for (const auto& block : model.blocks) {
            std::vector<bool> flags;
            for (const auto& layer : block.layers) flags.push_back(layer.frozen_component);
            out.frozen.push_back(flags);
        }
        return out;
    }
    out.split = model;
    out.split->blocks.clear();
    bool embeddings = false, head = false;
    for (const auto& r : ft.freeze) {
        embeddings |= r.part == "embeddings";
        head |= r.part == "head";
    }
    std::vector<bool> used(ft.freeze.size(), false);  // the stack rules that froze something
    // Layers after the last block are the head.
    size_t last_block = 0;
    for (size_t b = 0; b < model.blocks.size(); ++b)
        if (!model.blocks[b].name.empty()) last_block = b;
    auto layer_frozen = [&](const Layer& layer, size_t b, bool copy_frozen) {
        if (ft.adapters() || layer.frozen_component) return true;
        if (layer.attrs.value("tied", false)) return embeddings;  // a tied weight is the embedding table
        if (is_embedding(layer) && embeddings) return true;
        if (model.blocks[b].name.empty() && b > last_block && head) return true;
        return copy_frozen;
    };
    for (size_t b = 0; b < model.blocks.size(); ++b) {
        const Block& block = model.blocks[b];
        std::string stack;
        std::int64_t first = 0, last = 0;
        bool copies = block_copies(block, stack, first, last);
        // Which copies of the block a stack rule freezes.
        auto copy_frozen = [&](std::int64_t copy) {
            bool frozen = false;
            for (size_t i = 0; i < ft.freeze.size(); ++i) {
                const FreezeRule& r = ft.freeze[i];
                if (r.part == "embeddings" || r.part == "head") continue;
                bool whole = r.part == block.name || (copies && r.part == stack && r.first < 0);
                bool in_range = copies && r.part == stack && r.first >= 0 && copy >= r.first && copy <= r.last;
                if (whole || in_range) frozen = used[i] = true;
            }
            return frozen;
        };
        if (!copies) {
            bool frozen = copy_frozen(0);
            out.split->blocks.push_back(block);
            std::vector<bool> flags;
            for (const auto& layer : block.layers) flags.push_back(layer_frozen(layer, b, frozen));
            out.frozen.push_back(flags);
            continue;
        }
        // Runs of copies with the same state become blocks of their own.
        for (std::int64_t start = first; start <= last;) {
            bool state = copy_frozen(start);
            std::int64_t end = start;
            while (end + 1 <= last && copy_frozen(end + 1) == state) ++end;
            Block part = block;
            part.repeat = end - start + 1;
            part.name = stack + "." + std::to_string(start) + (end > start ? "-" + std::to_string(end) : "");
            out.split->blocks.push_back(part);
            std::vector<bool> flags;
            for (const auto& layer : block.layers) flags.push_back(layer_frozen(layer, b, state));
            out.frozen.push_back(flags);
            start = end + 1;
        }
    }
    // Every rule must have frozen something.
    bool any_embedding = false, any_head = false;
    for (size_t b = 0; b < model.blocks.size(); ++b)
        for (const auto& layer : model.blocks[b].layers) {
            any_embedding |= is_embedding(layer);
            any_head |= model.blocks[b].name.empty() && b > last_block && layer_cost(layer, Precision::fp32).params > 0;
        }
    for (size_t i = 0; i < ft.freeze.size(); ++i) {
        const FreezeRule& r = ft.freeze[i];
        bool matched = r.part == "embeddings" ? any_embedding : r.part == "head" ? any_head : used[i];
        if (!matched)
            throw Error("'freeze' part '" + freeze_text({r}) + "' matches nothing in model '" + model.name +
                            "' (its parts: embeddings, head and the stacks of its blocks, e.g. layers:0-11)",
                        ErrorCode::invalid_value, "freeze");
    }
    return out;
}

QuantizedBase quantize_weights(LayerCost& cost, Quantization q, Precision p) {
    QuantizedBase out;
    if (q == Quantization::none) return out;
    const std::string weight = "_grad_weight", input = "_grad_input";
    std::set<std::string> weight_gemms;  // the ops whose second operand is a weight
    for (const auto& k : cost.kernels)
        if (k.family == Family::gemm && k.phase == Phase::backward_weight && k.op.size() > weight.size() &&
            k.op.compare(k.op.size() - weight.size(), weight.size(), weight) == 0)
            weight_gemms.insert(k.op.substr(0, k.op.size() - weight.size()));
    if (weight_gemms.empty()) return out;
    double eb = activation_bytes(p);
    const char* name = q == Quantization::nf4 ? "nf4_dequantize" : "int8_dequantize";
    std::vector<Kernel> kernels;
    for (const auto& k : cost.kernels) {
        bool forward = k.family == Family::gemm && k.phase == Phase::forward && weight_gemms.count(k.op);
        bool grad_input = k.family == Family::gemm && k.phase == Phase::backward_input && k.op.size() > input.size() &&
                          k.op.compare(k.op.size() - input.size(), input.size(), input) == 0 &&
                          weight_gemms.count(k.op.substr(0, k.op.size() - input.size()));
        if (forward || grad_input) {
            // The weight is n x k either way (the input gradient's GEMM swaps them); `batch` tensors (experts).
            double tensor = double(k.n) * double(k.k), tensors = double(k.batch), rows = forward ? double(k.n) : double(k.k);
            double stored = tensors * quantized_bytes(q, tensor, rows);
            kernels.push_back(streaming_kernel(Family::elementwise, forward ? Phase::forward : Phase::backward_input,
                                               name, vector_precision(p), tensors * tensor, 2.0 * tensors * tensor,
                                               stored + tensors * tensor * eb));
            if (forward) {
                out.params += tensors * tensor;
                out.bytes += stored;
                out.largest_buffer = std::max(out.largest_buffer, tensor * eb);
            }
        }
        kernels.push_back(k);
    }
    cost.kernels = std::move(kernels);
    return out;
}

void drop_weight_gradients(LayerCost& cost) {
    cost.kernels.erase(std::remove_if(cost.kernels.begin(), cost.kernels.end(),
                                      [](const Kernel& k) { return k.phase == Phase::backward_weight; }),
                       cost.kernels.end());
    cost.backward_weight_flops = 0;
}

void drop_backward(LayerCost& cost) {
    cost.kernels.erase(std::remove_if(cost.kernels.begin(), cost.kernels.end(),
                                      [](const Kernel& k) { return k.phase != Phase::forward; }),
                       cost.kernels.end());
    cost.backward_weight_flops = cost.backward_input_flops = 0;
    cost.saved_activation_bytes = 0;
}

std::int64_t add_lora(LayerCost& cost, const Layer& layer, Precision p, const FineTune& ft) {
    const OpTraits& traits = op_traits(layer);
    if (!ft.adapters() || !traits.linear_modules) return 0;
    std::int64_t params = 0, r = ft.rank;
    double eb = activation_bytes(p);
    for (const auto& m : traits.linear_modules(layer)) {
        if (!selects_target(ft.targets, m.target)) continue;
        if (r > std::min(m.in, m.out))
            throw Error("'lora_rank' " + std::to_string(r) + " is larger than the " + m.target + " projection of layer '" +
                            layer.name + "' (" + std::to_string(m.in) + " to " + std::to_string(m.out) +
                            "): a rank above the smaller side adds nothing",
                        ErrorCode::invalid_value, "lora_rank");
        std::string op = m.target + "_lora";
        bool input_grad = !m.reads_layer_input || layer.needs_input_grad;
        double x = double(m.count) * double(m.rows) * double(m.in), y = double(m.count) * double(m.rows) * double(m.out);
        if (ft.dropout > 0) {
            ops::add_dropout(cost, layer, p, op + "_dropout", x);
            if (!input_grad) cost.kernels.pop_back();  // nothing needs the gradient of x
            cost.saved_activation_bytes += x * eb;     // the dropped-out copy A's weight gradient reads
        }
        ops::add_gemm(cost, layer, p, op + "_a", m.count, m.rows, r, m.in, true, input_grad);
        ops::add_gemm(cost, layer, p, op + "_b", m.count, m.rows, m.out, r, true, true);
        // (B A x) * scaling, then added to the base's output; backward, the scaling's gradient (read, write).
        ops::add_vector(cost, layer, p, Family::elementwise, op + "_scale", y, 1.0, 1.0, 1.0);
        cost.kernels.back().bytes = 2.0 * y * eb;
        ops::add_vector(cost, layer, p, Family::elementwise, op + "_add", y, 2.0, 1.0, 1.0, false);
        if (input_grad) {  // autograd sums the base's and the adapter's gradients of x
            Kernel sum = ops::gradient_sum_kernel(op + "_input_gradient_sum", p, x);
            cost.backward_input_flops += sum.flops;
            cost.kernels.push_back(sum);
        }
        cost.saved_activation_bytes += double(m.count) * double(m.rows) * double(r) * eb;  // A's output, for B's dW
        std::int64_t module = checked_mul(checked_mul(r, checked_add(m.in, m.out, "parameter count"), "parameter count"),
                                          m.count, "parameter count");
        params = checked_add(params, module, "parameter count");
    }
    return params;
}

}  // namespace prenet
