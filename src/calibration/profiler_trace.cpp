#include "calibration/profiler_trace.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <vector>

#include "core/error.hpp"

namespace prenet {

using nlohmann::json;

namespace {

// Name fragments of each family's kernels, tried in this order (a cuDNN convolution's name holds "gemm" too, a
// fused attention's "softmax"): the first family with a fragment in the lower-cased name wins.
struct Pattern {
    Family family;
    std::vector<const char*> fragments;
};

const std::vector<Pattern>& patterns() {
    static const std::vector<Pattern> p = {
        {Family::attention, {"flash", "fmha", "attention", "sdpa", "mha_"}},
        {Family::conv, {"conv", "fprop", "dgrad", "wgrad", "winograd", "cudnn"}},
        {Family::optimizer, {"multi_tensor_apply", "adam", "sgd", "lamb", "lion"}},
        {Family::loss, {"cross_entropy", "nll_loss", "crossentropy"}},
        {Family::norm, {"layer_norm", "layernorm", "rms_norm", "rmsnorm", "batch_norm", "batchnorm", "group_norm",
                        "groupnorm", "bn_fw", "bn_bw", "welford"}},
        {Family::softmax, {"softmax"}},
        {Family::gather, {"embedding", "index_select", "indexselect", "gather", "scatter", "index_put", "indexing"}},
        {Family::pool, {"pool"}},
        {Family::rnn, {"lstm", "gru_", "rnn"}},
        {Family::gemm, {"gemm", "gemv", "cutlass", "cublas", "xmma", "nvjet", "s16816", "h16816", "s1688", "h1688",
                        "s884", "h884", "matmul", "sm80_", "sm90_", "ampere_", "volta_", "turing_", "hopper_"}},
        {Family::elementwise, {"elementwise", "vectorized", "unrolled", "reduce_kernel", "fill", "copy", "cat",
                               "gelu", "silu", "relu", "dropout", "add", "mul", "div", "where", "masked"}},
    };
    return p;
}

// An event's text field, or "" where it is missing or not text (traces from other tools, or edited ones).
std::string text_field(const json& e, const char* key) {
    auto it = e.find(key);
    return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool is_kernel(const json& e) {
    if (!e.is_object() || text_field(e, "ph") != "X") return false;
    std::string cat = text_field(e, "cat");
    std::transform(cat.begin(), cat.end(), cat.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return cat == "kernel";
}


// ---- Matching by shape: a CPU operator's recorded arguments as PreNeT's kernels --------------------------------

using Dims = std::vector<std::int64_t>;

// Argument i's shape: a list of non-negative integers (a scalar or None records an empty list).
std::optional<Dims> shape_at(const json& dims, size_t i) {
    if (!dims.is_array() || i >= dims.size() || !dims[i].is_array()) return std::nullopt;
    Dims out;
    for (const auto& d : dims[i]) {
        if (!d.is_number_integer() || d.get<std::int64_t>() < 0) return std::nullopt;
        out.push_back(d.get<std::int64_t>());
    }
    return out;
}

// Argument i's element type as a precision: float, c10::BFloat16 / bfloat16, c10::Half / float16.
std::optional<Precision> precision_at(const json& types, size_t i) {
    if (!types.is_array() || i >= types.size() || !types[i].is_string()) return std::nullopt;
    const std::string t = types[i].get<std::string>();
    if (t == "float" || t == "float32") return Precision::fp32;
    if (t.find("BFloat16") != std::string::npos || t == "bfloat16") return Precision::bf16;
    if (t.find("Half") != std::string::npos || t == "float16") return Precision::fp16;
    return std::nullopt;
}

std::optional<std::string> concrete_at(const json& concrete, size_t i) {
    if (!concrete.is_array() || i >= concrete.size() || !concrete[i].is_string()) return std::nullopt;
    std::string text = concrete[i].get<std::string>();
    if (text.empty()) return std::nullopt;
    return text;
}

std::optional<bool> bool_at(const json& concrete, size_t i) {
    auto text = concrete_at(concrete, i);
    if (!text) return std::nullopt;
    if (*text == "True" || *text == "true" || *text == "1") return true;
    if (*text == "False" || *text == "false" || *text == "0") return false;
    return std::nullopt;
}

// "[1, 1]" (or one integer, "1") as its integers: digits with an optional minus, separated by commas, spaces and
// brackets.
std::optional<Dims> ints_at(const json& concrete, size_t i) {
    auto text = concrete_at(concrete, i);
    if (!text) return std::nullopt;
    Dims out;
    const std::string& t = *text;
    for (size_t at = 0; at < t.size();) {
        char c = t[at];
        if (c == '[' || c == ']' || c == ',' || c == ' ') {
            ++at;
            continue;
        }
        bool negative = c == '-';
        size_t digits = at + (negative ? 1 : 0), end = digits;
        std::int64_t value = 0;
        while (end < t.size() && t[end] >= '0' && t[end] <= '9' && end - digits < 12) value = 10 * value + (t[end++] - '0');
        if (end == digits || (end < t.size() && t.find_first_of("[], ", end) != end)) return std::nullopt;
        out.push_back(negative ? -value : value);
        at = end;
    }
    if (out.empty()) return std::nullopt;
    return out;
}

double product(const Dims& d, size_t from, size_t to) {
    double p = 1;
    for (size_t i = from; i < to; ++i) p *= double(d[i]);
    return p;
}

// Dims by name: the names and the values in the same order (a loop, not a map built entry by entry in place).
DimMap named(std::initializer_list<const char*> names, std::initializer_list<double> values) {
    DimMap d;
    auto value = values.begin();
    for (const char* name : names) d.emplace(name, *value++);
    return d;
}

// A tensor as the b x h rows of a row-wise kernel (layer norm, softmax, element-wise): h its last dimension.
DimMap rows_of(const Dims& d) { return named({"b", "h"}, {product(d, 0, d.size() - 1), double(d.back())}); }

// A 2-d convolution's geometry from its input and weight shapes and the stride, padding, dilation and groups
// arguments at the given indices of its Concrete Inputs; none for anything but a plain 2-d convolution.
std::optional<DimMap> conv2d_dims(const Dims& x, const Dims& w, const json& concrete, size_t stride_at,
                                  size_t padding_at, size_t dilation_at, size_t groups_at) {
    if (x.size() != 4 || w.size() != 4 || x[1] != w[1]) return std::nullopt;
    auto stride = ints_at(concrete, stride_at), padding = ints_at(concrete, padding_at);
    auto dilation = ints_at(concrete, dilation_at), groups = ints_at(concrete, groups_at);
    if (!stride || !padding || !dilation || !groups || groups->size() != 1 || (*groups)[0] != 1) return std::nullopt;
    auto pair = [](const Dims& v) { return v.size() == 1 ? Dims{v[0], v[0]} : v; };
    Dims s = pair(*stride), p = pair(*padding), d = pair(*dilation);
    if (s.size() != 2 || p.size() != 2 || d != Dims{1, 1} || s[0] <= 0 || s[1] <= 0 || p[0] < 0 || p[1] < 0)
        return std::nullopt;
    return named({"n", "c", "h", "w", "k", "filter_h", "filter_w", "pad_h", "pad_w", "stride_h", "stride_w"},
                 {double(x[0]), double(x[1]), double(x[2]), double(x[3]), double(w[0]), double(w[2]), double(w[3]),
                  double(p[0]), double(p[1]), double(s[0]), double(s[1])});
}

// A fused attention call: q and k at the given argument indices, [b, seq, heads, head_dim] (FlashAttention's and
// the memory-efficient kernel's layout) or [b, heads, seq, head_dim] (`heads_first`: cuDNN's, SDPA's), and
// whether it is causal (a bool, or the memory-efficient kernel's custom_mask_type: 0 none, 1 or 2 causal).
std::optional<DimMap> attention_dims(const json& dims, size_t q_at, size_t k_at, bool heads_first,
                                     std::optional<bool> causal) {
    auto q = shape_at(dims, q_at), k = shape_at(dims, k_at);
    if (!q || !k || !causal || q->size() != 4 || k->size() != 4 || (*q)[0] != (*k)[0] || (*q)[3] != (*k)[3])
        return std::nullopt;
    size_t seq = heads_first ? 2 : 1, heads = heads_first ? 1 : 2;
    return named({"b", "seq", "heads", "kv_seq", "kv_heads", "head_dim", "causal"},
                 {double((*q)[0]), double((*q)[seq]), double((*q)[heads]), double((*k)[seq]), double((*k)[heads]),
                  double((*q)[3]), *causal ? 1.0 : 0.0});
}

std::optional<bool> mask_type_at(const json& concrete, size_t i) {
    auto v = ints_at(concrete, i);
    if (!v || v->size() != 1 || (*v)[0] < 0 || (*v)[0] > 2) return std::nullopt;
    return (*v)[0] != 0;
}

}  // namespace

std::optional<ShapedOperator> shaped_operator_kernels(const std::string& name, const json& dims, const json& types,
                                                      const json& concrete) {
    std::string op = name.rfind("aten::", 0) == 0 ? name.substr(6) : name;
    ShapedOperator out;
    out.name = name;
    auto with_kernels = [&](size_t typed_at, std::vector<KernelRow> kernels) -> std::optional<ShapedOperator> {
        auto p = precision_at(types, typed_at);
        if (!p) return std::nullopt;
        // Shapes the kernel table refuses (a filter larger than its padded input, dims over the limits) leave the
        // call's kernels to be matched by name.
        try {
            for (const KernelRow& k : kernels) kernel_from_row(k.op, k.dims, *p, k.phase);
        } catch (const Error&) {
            return std::nullopt;
        }
        out.precision = *p;
        out.kernels = std::move(kernels);
        return out;
    };
    auto with = [&](size_t typed_at, const std::string& kernel, DimMap d, Phase phase = Phase::forward) {
        std::vector<KernelRow> one(1);
        one[0].op = kernel, one[0].dims = std::move(d), one[0].phase = phase;
        return with_kernels(typed_at, std::move(one));
    };
    if (op == "mm" || op == "addmm") {  // addmm: bias, mat1, mat2
        size_t a = op == "mm" ? 0 : 1;
        auto x = shape_at(dims, a), y = shape_at(dims, a + 1);
        if (!x || !y || x->size() != 2 || y->size() != 2 || (*x)[1] != (*y)[0]) return std::nullopt;
        return with(a, "gemm", named({"m", "n", "k"}, {double((*x)[0]), double((*y)[1]), double((*x)[1])}));
    }
    if (op == "bmm" || op == "baddbmm") {
        size_t a = op == "bmm" ? 0 : 1;
        auto x = shape_at(dims, a), y = shape_at(dims, a + 1);
        if (!x || !y || x->size() != 3 || y->size() != 3 || (*x)[0] != (*y)[0] || (*x)[2] != (*y)[1])
            return std::nullopt;
        return with(a, "bmm", named({"b", "m", "n", "k"},
                                    {double((*x)[0]), double((*x)[1]), double((*y)[2]), double((*x)[2])}));
    }
    if (op == "native_layer_norm") {
        auto x = shape_at(dims, 0);
        if (!x || x->empty()) return std::nullopt;
        return with(0, "ln", rows_of(*x));
    }
    if (op == "_softmax") {  // self, dim, half_to_float: a row-wise softmax over the last dimension only
        auto x = shape_at(dims, 0);
        auto dim = ints_at(concrete, 1);
        if (!x || x->empty() || !dim || dim->size() != 1 ||
            ((*dim)[0] != -1 && (*dim)[0] != std::int64_t(x->size()) - 1))
            return std::nullopt;
        return with(0, "softmax", rows_of(*x));
    }
    std::string base = !op.empty() && op.back() == '_' ? op.substr(0, op.size() - 1) : op;  // in place: add_
    if (base == "add" || base == "mul" || base == "div") {
        auto x = shape_at(dims, 0), y = shape_at(dims, 1);
        if (!x || !y || x->empty()) return std::nullopt;
        if (*x == *y) return with(0, base, rows_of(*x));
        bool scalar = y->empty() && types.is_array() && types.size() > 1 && types[1] == "Scalar";
        if (scalar) return with(0, base + "u", rows_of(*x));
        return std::nullopt;  // broadcasting: not the kernel the row op times
    }
    if (base == "gelu" || base == "relu" || base == "tanh") {
        auto x = shape_at(dims, 0);
        if (!x || x->empty()) return std::nullopt;
        return with(0, base, rows_of(*x));
    }
    if (op == "cudnn_convolution" || op == "convolution" || op == "_convolution") {
        auto x = shape_at(dims, 0), w = shape_at(dims, 1);
        if (!x || !w) return std::nullopt;
        std::optional<DimMap> d;
        if (op == "cudnn_convolution") {  // self, weight, padding, stride, dilation, groups, ...
            d = conv2d_dims(*x, *w, concrete, 3, 2, 4, 5);
        } else {  // input, weight, bias, stride, padding, dilation, transposed, output_padding, groups
            if (bool_at(concrete, 6).value_or(true)) return std::nullopt;
            d = conv2d_dims(*x, *w, concrete, 3, 4, 5, 8);
        }
        if (!d) return std::nullopt;
        return with(0, "conv2d", std::move(*d));
    }
    if (op == "convolution_backward") {
        // grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding, groups,
        // output_mask: the data gradient and the weight gradient where the mask asks for them.
        auto x = shape_at(dims, 1), w = shape_at(dims, 2);
        if (!x || !w || bool_at(concrete, 7).value_or(true)) return std::nullopt;
        auto d = conv2d_dims(*x, *w, concrete, 4, 5, 6, 9);
        auto mask = concrete_at(concrete, 10);
        if (!d || !mask) return std::nullopt;
        std::vector<KernelRow> kernels;
        // "[True, True, False]": the first two flags.
        size_t first = mask->find_first_of("TF"), comma = mask->find(',');
        if (first == std::string::npos || comma == std::string::npos) return std::nullopt;
        size_t second = mask->find_first_of("TF", comma);
        if (second == std::string::npos) return std::nullopt;
        const std::pair<const char*, size_t> gradients[] = {{"conv2d_grad_input", first}, {"conv2d_grad_weight", second}};
        for (const auto& [kernel, flag] : gradients) {
            if ((*mask)[flag] != 'T') continue;
            kernels.emplace_back();
            kernels.back().op = kernel, kernels.back().dims = *d;
        }
        if (kernels.empty()) return std::nullopt;
        return with_kernels(1, std::move(kernels));
    }
    // Fused attention, timed as FlashAttention-2 whichever kernel ran (the memory-efficient one, cuDNN's): the
    // attention factor the calibration learns is then that kernel's against FlashAttention-2 on this device.
    // Argument indices are PyTorch's schemas (native_functions.yaml).
    std::optional<DimMap> d;
    bool backward = false;
    size_t typed_at = 0;
    if (op == "_flash_attention_forward") {  // query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal
        d = attention_dims(dims, 0, 1, false, bool_at(concrete, 8));
    } else if (op == "_flash_attention_backward") {  // grad_out, query, key, value, out, logsumexp, cum_seq_q,
                                                     // cum_seq_k, max_q, max_k, dropout_p, is_causal
        d = attention_dims(dims, 1, 2, false, bool_at(concrete, 11)), backward = true, typed_at = 1;
    } else if (op == "_efficient_attention_forward") {  // query, key, value, bias, cu_seqlens_q, cu_seqlens_k,
                                                        // max_seqlen_q, max_seqlen_k, dropout_p, custom_mask_type
        d = attention_dims(dims, 0, 1, false, mask_type_at(concrete, 9));
    } else if (op == "_efficient_attention_backward") {  // grad_out_, query, key, value, bias, out, cu_seqlens_q,
        // cu_seqlens_k, max_seqlen_q, max_seqlen_k, logsumexp, dropout_p, philox_seed, philox_offset, custom_mask_type
        d = attention_dims(dims, 1, 2, false, mask_type_at(concrete, 14)), backward = true, typed_at = 1;
    } else if (op == "_scaled_dot_product_cudnn_attention") {  // query, key, value, attn_bias, compute_log_sumexp,
                                                               // dropout_p, is_causal
        d = attention_dims(dims, 0, 1, true, bool_at(concrete, 6));
    } else if (op == "_scaled_dot_product_cudnn_attention_backward") {  // grad_out, query, key, value, out,
        // logsumexp, philox_seed, philox_offset, attn_bias, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal
        d = attention_dims(dims, 1, 2, true, bool_at(concrete, 14)), backward = true, typed_at = 1;
    } else {
        return std::nullopt;
    }
    if (!d) return std::nullopt;
    return with(typed_at, "flash_attention", std::move(*d), backward ? Phase::backward_input : Phase::forward);
}

std::optional<Family> kernel_family_from_name(const std::string& name) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    for (const auto& p : patterns())
        for (const char* fragment : p.fragments)
            if (lower.find(fragment) != std::string::npos) return p.family;
    return std::nullopt;
}

ProfiledKernels read_profiler_trace(const json& trace, const std::string& where) {
    const json* events = &trace;
    if (trace.is_object()) {
        if (!trace.contains("traceEvents"))
            throw Error(where + ": a profiler trace needs 'traceEvents' (torch.profiler's export_chrome_trace)",
                        ErrorCode::invalid_value, "measurements");
        events = &trace["traceEvents"];
    }
    if (!events->is_array())
        throw Error(where + ": a profiler trace's events must be a list", ErrorCode::invalid_value, "measurements");
    auto external_id = [](const json& e) -> std::optional<std::int64_t> {
        const json* args = e.contains("args") && e["args"].is_object() ? &e["args"] : nullptr;
        if (!args || !args->contains("External id") || !(*args)["External id"].is_number_integer()) return std::nullopt;
        return (*args)["External id"].get<std::int64_t>();
    };
    // Each call of a CPU operator that recorded its shapes, by External id (the first, should a trace repeat
    // one): the operator, then the group of shaped calls it is in once a kernel of it is met (-1: not matched by
    // shape), and whether one of its kernels was counted yet (the call is counted once, however many it launched).
    struct Call {
        const json* op = nullptr;
        int group = -2;  // -2: not looked at yet
        bool counted = false;
    };
    std::map<std::int64_t, Call> calls;
    for (const auto& e : *events) {
        if (!e.is_object() || text_field(e, "cat") != "cpu_op" || !e.contains("args") || !e["args"].is_object() ||
            !e["args"].contains("Input Dims"))
            continue;
        if (auto id = external_id(e)) calls.emplace(*id, Call{&e});
    }
    ProfiledKernels out;
    std::set<std::string> steps;
    std::map<std::string, size_t> group_of_key;  // an operator, its kernels' shapes and its type -> out.shaped
    auto shaped_call = [&](std::int64_t id) -> Call* {
        auto it = calls.find(id);
        if (it == calls.end()) return nullptr;
        Call& call = it->second;
        if (call.group == -2) {
            call.group = -1;
            const json& op = *call.op;
            const json& args = op["args"];
            std::optional<ShapedOperator> shaped = shaped_operator_kernels(
                text_field(op, "name"), args["Input Dims"],
                args.value("Input type", json(nullptr)), args.value("Concrete Inputs", json(nullptr)));
            if (shaped) {
                std::string key = shaped->name + "|" + to_string(shaped->precision);
                for (const auto& k : shaped->kernels) {
                    key += "|" + k.op + "|" + to_string(k.phase);
                    for (const auto& [dim, value] : k.dims) key += " " + dim + "=" + std::to_string(std::int64_t(value));
                }
                auto [g, fresh] = group_of_key.emplace(key, out.shaped.size());
                if (fresh) out.shaped.push_back(std::move(*shaped));
                call.group = int(g->second);
            }
        }
        return call.group >= 0 ? &call : nullptr;
    };
    for (const auto& e : *events) {
        if (!e.is_object()) continue;
        std::string name = text_field(e, "name");
        if (name.rfind("ProfilerStep#", 0) == 0) steps.insert(name);
        if (!is_kernel(e)) continue;
        const json& dur = e.value("dur", json(nullptr));
        if (!dur.is_number() || !std::isfinite(dur.get<double>()) || dur.get<double>() < 0)
            throw Error(where + ": kernel '" + name + "' has no duration in microseconds ('dur')",
                        ErrorCode::invalid_value, "measurements");
        ++out.kernels;
        std::optional<std::int64_t> id = external_id(e);
        if (Call* call = id ? shaped_call(*id) : nullptr) {
            ShapedOperator& group = out.shaped[size_t(call->group)];
            group.ms_per_step += dur.get<double>() / 1e3;
            ++group.gpu_kernels;
            if (!call->counted) group.calls_per_step += 1, call->counted = true;
            continue;
        }
        std::optional<Family> family = kernel_family_from_name(name);
        if (!family) ++out.unrecognised;
        out.ms_per_step[family.value_or(Family::elementwise)] += dur.get<double>() / 1e3;
    }
    if (out.kernels == 0)
        throw Error(where + ": the trace has no GPU kernel events (category 'kernel'); profile with "
                            "activities=[ProfilerActivity.CUDA]",
                    ErrorCode::invalid_value, "measurements");
    out.steps = steps.empty() ? 1.0 : double(steps.size());
    for (auto& [family, ms] : out.ms_per_step) ms /= out.steps;
    for (auto& group : out.shaped) group.ms_per_step /= out.steps, group.calls_per_step /= out.steps;
    return out;
}

}  // namespace prenet
