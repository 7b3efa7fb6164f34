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

bool is_kernel(const json& e) {
    if (!e.is_object() || e.value("ph", std::string()) != "X") return false;
    std::string cat = e.value("cat", std::string());
    std::transform(cat.begin(), cat.end(), cat.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return cat == "kernel";
}

}  // namespace

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
    ProfiledKernels out;
    std::set<std::string> steps;
    for (const auto& e : *events) {
        if (!e.is_object()) continue;
        std::string name = e.value("name", json("")).is_string() ? e["name"].get<std::string>() : "";
        if (name.rfind("ProfilerStep#", 0) == 0) steps.insert(name);
        if (!is_kernel(e)) continue;
        const json& dur = e.value("dur", json(nullptr));
        if (!dur.is_number() || !std::isfinite(dur.get<double>()) || dur.get<double>() < 0)
            throw Error(where + ": kernel '" + name + "' has no duration in microseconds ('dur')",
                        ErrorCode::invalid_value, "measurements");
        std::optional<Family> family = kernel_family_from_name(name);
        if (!family) ++out.unrecognised;
        out.ms_per_step[family.value_or(Family::elementwise)] += dur.get<double>() / 1e3;
        ++out.kernels;
    }
    if (out.kernels == 0)
        throw Error(where + ": the trace has no GPU kernel events (category 'kernel'); profile with "
                            "activities=[ProfilerActivity.CUDA]",
                    ErrorCode::invalid_value, "measurements");
    out.steps = steps.empty() ? 1.0 : double(steps.size());
    for (auto& [family, ms] : out.ms_per_step) ms /= out.steps;
    return out;
}

}  // namespace prenet
