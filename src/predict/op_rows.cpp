#include "predict/op_rows.hpp"

#include <cmath>
#include <set>
#include <stdexcept>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "hardware/precision_support.hpp"
#include "predict/predictor.hpp"

namespace prenet {
namespace {

double dim(const DimMap& dims, const std::string& op, const char* key) {
    auto it = dims.find(key);
    if (it == dims.end()) throw Error("op '" + op + "' needs column '" + key + "'");
    double x = it->second;
    if (!(x >= 0) || x != std::floor(x) || x > 1e15)
        throw Error("op '" + op + "': column '" + key + "' must be a non-negative integer");
    return x;
}

// A product of columns as a kernel's integer dimension: within the tensor limit (a cast of a larger double
// to int64 is undefined).
std::int64_t product_dim(double x, const std::string& op, const char* what) {
    if (!(x <= double(limits::tensor_elements)))
        throw Error("op '" + op + "': " + what + " is over the limit of " + std::to_string(limits::tensor_elements));
    return std::int64_t(x);
}

const std::set<std::string> kBinary = {"add", "mul", "div", "pow"};
const std::set<std::string> kUnary = {"addu", "mulu", "divu", "powu", "gelu", "relu", "tanh"};

double unary_flops(const std::string& op) {
    if (op == "gelu") return 14;
    if (op == "tanh") return 8;
    if (op == "pow" || op == "powu") return 10;
    if (op == "div" || op == "divu") return 4;
    return 1;
}

const char* kDimColumns[] = {"b",        "m",        "n",     "k",     "h",     "c",        "w",
                             "in_channels", "out_channels", "kernel_size", "input_size", "stride", "padding",
                             "filter_h", "filter_w", "pad_h", "pad_w", "stride_h", "stride_w",
                             "seq",      "kv_seq",   "heads", "kv_heads", "head_dim", "causal"};

double dim_or(const DimMap& dims, const char* key, double fallback) {
    auto it = dims.find(key);
    return it == dims.end() ? fallback : it->second;
}

// A 2-d convolution (DeepBench's layout: n, c, h, w, k, filter_h, filter_w, pad_h, pad_w, stride_h, stride_w)
// or one of its two backward kernels.
Kernel conv2d_row(const std::string& op, const DimMap& dims, Precision p) {
    double n = dim(dims, op, "n"), c = dim(dims, op, "c"), h = dim(dims, op, "h"), w = dim(dims, op, "w");
    double k = dim(dims, op, "k"), r = dim(dims, op, "filter_h"), s = dim(dims, op, "filter_w");
    double ph = dim_or(dims, "pad_h", 0), pw = dim_or(dims, "pad_w", 0);
    double sh = dim_or(dims, "stride_h", 1), sw = dim_or(dims, "stride_w", 1);
    if (sh <= 0 || sw <= 0 || h + 2 * ph < r || w + 2 * pw < s) throw Error("op '" + op + "': kernel larger than the padded input");
    double oh = std::floor((h + 2 * ph - r) / sh) + 1, ow = std::floor((w + 2 * pw - s) / sw) + 1;
    double in_elems = n * c * h * w, out_elems = n * k * oh * ow, weights = k * c * r * s;
    double in_b = matmul_input_bytes(p), out_b = activation_bytes(p);
    Kernel kr;
    kr.op = op;
    kr.precision = p;
    kr.family = Family::conv;
    ConvShape shape;
    shape.n = std::int64_t(n), shape.c = std::int64_t(c), shape.h = std::int64_t(h), shape.w = std::int64_t(w);
    shape.k = std::int64_t(k), shape.r = std::int64_t(r), shape.s = std::int64_t(s);
    shape.stride_h = std::int64_t(sh), shape.pad_h = std::int64_t(ph), shape.groups = 1;
    shape.stride_w = std::int64_t(sw), shape.pad_w = std::int64_t(pw);
    kr.conv = shape;
    kr.flops = 2 * out_elems * c * r * s;
    if (op == "conv2d") {
        kr.bytes = (in_elems + weights) * in_b + out_elems * out_b;
    } else if (op == "conv2d_grad_input") {
        kr.phase = Phase::backward_input;
        kr.bytes = (out_elems + weights) * in_b + in_elems * out_b;
    } else {
        kr.phase = Phase::backward_weight;
        kr.bytes = (out_elems + in_elems) * in_b + weights * 4.0;
    }
    return kr;
}

// A fused attention call (`flash_attention`: b, seq, heads, kv_heads, head_dim, causal, optional kv_seq = seq),
// built by the function the attention layer uses. `backward` selects its FlashAttention-2 backward kernel.
Kernel flash_attention_row(const DimMap& dims, Precision p, bool backward) {
    const std::string op = "flash_attention";
    AttentionShape s;
    s.batch = std::int64_t(dim(dims, op, "b"));
    s.q_len = std::int64_t(dim(dims, op, "seq"));
    s.kv_len = std::int64_t(dims.count("kv_seq") ? dim(dims, op, "kv_seq") : double(s.q_len));
    s.heads = std::int64_t(dim(dims, op, "heads"));
    s.kv_heads = std::int64_t(dim(dims, op, "kv_heads"));
    s.qk_dim = s.v_dim = std::int64_t(dim(dims, op, "head_dim"));
    double causal = dim(dims, op, "causal");
    if (causal > 1) throw Error("op 'flash_attention': column 'causal' must be 0 or 1");
    s.causal = causal == 1;
    if (s.kv_heads == 0 || s.heads % s.kv_heads)
        throw Error("op 'flash_attention': kv_heads " + std::to_string(s.kv_heads) + " must divide heads " +
                    std::to_string(s.heads));
    FlashAttentionKernels k = flash_attention_kernels(s, p);
    return backward ? k.backward : k.forward;
}

}  // namespace

Phase parse_row_phase(const std::string& op, const std::string& text) {
    if (op != "flash_attention") throw Error("column 'phase' applies to op 'flash_attention' only");
    if (text == "forward") return Phase::forward;
    if (text == "backward") return Phase::backward_input;
    throw Error("column 'phase': '" + text + "' is not forward or backward");
}

double parse_number(const std::string& s, const std::string& where) {
    try {
        size_t used = 0;
        double x = std::stod(s, &used);
        if (used != s.size()) throw std::invalid_argument(s);
        return x;
    } catch (const std::exception&) {
        throw Error(where + ": '" + s + "' is not a number");
    }
}

bool is_known_row_op(const std::string& op) {
    return op == "linear" || op == "bmm" || op == "gemm" || op == "conv" || op == "conv2d" || op == "flash_attention" ||
           op == "conv2d_grad_input" || op == "conv2d_grad_weight" || op == "ln" || op == "softmax" ||
           kBinary.count(op) || kUnary.count(op);
}

Kernel kernel_from_row(const std::string& op, const DimMap& dims, Precision p, Phase phase) {
    if (!is_known_row_op(op))
        throw Error("unknown op '" + op + "' (known: linear, bmm, gemm, conv, conv2d, conv2d_grad_input, "
                    "conv2d_grad_weight, flash_attention, ln, softmax, add, mul, div, pow, addu, mulu, divu, powu, "
                    "gelu, relu, tanh)");
    if (phase != Phase::forward && op != "flash_attention")
        throw Error("op '" + op + "': only flash_attention rows take a phase");
    if (op == "flash_attention") return flash_attention_row(dims, p, phase != Phase::forward);
    Kernel k;
    k.op = op;
    k.precision = p;
    double in_b = matmul_input_bytes(p), out_b = activation_bytes(p);
    if (op == "conv2d" || op == "conv2d_grad_input" || op == "conv2d_grad_weight") return conv2d_row(op, dims, p);
    if (op == "gemm") {
        double m = dim(dims, op, "m"), n = dim(dims, op, "n"), kk = dim(dims, op, "k");
        k.family = Family::gemm;
        k.m = std::int64_t(m), k.n = std::int64_t(n), k.k = std::int64_t(kk);
        k.flops = 2 * m * n * kk;
        k.bytes = (m * kk + kk * n) * in_b + m * n * out_b;
        return k;
    }
    if (op == "linear" || op == "bmm") {
        double b = dim(dims, op, "b"), m = dim(dims, op, "m"), n = dim(dims, op, "n"), kk = dim(dims, op, "k");
        k.family = Family::gemm;
        // A linear layer shares its weight across the batch: one (b*m x k)(k x n) product.
        bool shared_weight = op == "linear";
        k.batch = shared_weight ? 1 : std::int64_t(b);
        k.m = shared_weight ? product_dim(b * m, op, "b x m") : std::int64_t(m);
        k.n = std::int64_t(n);
        k.k = std::int64_t(kk);
        k.flops = 2 * b * m * n * kk;
        k.bytes = (b * m * kk + (shared_weight ? 1 : b) * kk * n) * in_b + b * m * n * out_b;
        return k;
    }
    if (op == "conv") {
        double b = dim(dims, op, "b"), c = dim(dims, op, "in_channels"), o = dim(dims, op, "out_channels");
        double r = dim(dims, op, "kernel_size"), s = dim(dims, op, "input_size"), st = dim(dims, op, "stride");
        double pad = dim(dims, op, "padding");
        if (st <= 0 || s + 2 * pad < r) throw Error("op 'conv': kernel larger than the padded input");
        double out = std::floor((s + 2 * pad - r) / st) + 1;
        k.family = Family::conv;
        // NeuSight's square convolutions: one size, stride and padding for both spatial dims.
        ConvShape shape;
        shape.n = std::int64_t(b), shape.c = std::int64_t(c), shape.h = shape.w = std::int64_t(s);
        shape.k = std::int64_t(o), shape.r = shape.s = std::int64_t(r);
        shape.stride_h = shape.stride_w = std::int64_t(st), shape.pad_h = shape.pad_w = std::int64_t(pad);
        shape.groups = 1;
        k.conv = shape;
        k.flops = 2 * b * out * out * o * c * r * r;
        k.bytes = (b * c * s * s + o * c * r * r) * in_b + b * o * out * out * out_b;
        return k;
    }
    double b = dim(dims, op, "b"), h = dim(dims, op, "h"), n = b * h;
    k.elements = std::int64_t(n);
    k.precision = vector_precision(p);
    if (op == "ln" || op == "softmax") {
        k.family = op == "ln" ? Family::norm : Family::softmax;
        k.m = std::int64_t(b);
        k.n = std::int64_t(h);
        k.flops = (op == "ln" ? 7 : 5) * n;
        k.bytes = 2 * n * out_b + (op == "ln" ? 2 * h * 4 : 0);
        return k;
    }
    k.family = Family::elementwise;
    if (kBinary.count(op)) {
        k.flops = unary_flops(op) * n;
        k.bytes = 3 * n * out_b;
        return k;
    }
    if (kUnary.count(op)) {
        k.flops = unary_flops(op) * n;
        k.bytes = 2 * n * out_b;
        return k;
    }
    throw Error("unknown op '" + op + "'");
}

Kernel kernel_from_row_on(const std::string& op, const DimMap& dims, Precision precision, Phase phase,
                          const HardwareSpec& runs_on) {
    Kernel k = kernel_from_row(op, dims, precision, phase);
    if (!uses_matrix_units(k.family)) return k;
    Precision used = precision_support(runs_on, precision).used;
    return used == precision ? k : kernel_from_row(op, dims, used, phase);
}

std::vector<Kernel> kernels_from_table(const CsvTable& t, Precision precision, const std::string& origin,
                                       const std::function<bool(const std::string& op)>& skip,
                                       const HardwareSpec* runs_on) {
    int op_col = t.column("op"), prec_col = t.column("precision"), phase_col = t.column("phase");
    if (op_col < 0) throw Error(origin + ": no 'op' column");
    std::vector<std::pair<std::string, int>> dims;
    for (const char* d : kDimColumns)
        if (t.column(d) >= 0) dims.emplace_back(d, t.column(d));
    std::vector<Kernel> out;
    out.reserve(t.rows.size());
    for (size_t r = 0; r < t.rows.size(); ++r) {
        const auto& row = t.rows[r];
        if (skip && skip(row[op_col])) {
            out.emplace_back();
            continue;
        }
        std::string where = origin + " row " + std::to_string(r + 2);
        DimMap values;
        for (const auto& [name, col] : dims)
            if (!row[col].empty()) values[name] = parse_number(row[col], where);
        Precision p = prec_col >= 0 && !row[prec_col].empty() ? parse_precision(row[prec_col]) : precision;
        try {
            // Only flash_attention rows read a phase (the other ops name their backward kernels as ops).
            Phase phase = phase_col >= 0 && row[op_col] == "flash_attention" && !row[phase_col].empty()
                              ? parse_row_phase(row[op_col], row[phase_col])
                              : Phase::forward;
            out.push_back(runs_on ? kernel_from_row_on(row[op_col], values, p, phase, *runs_on)
                                  : kernel_from_row(row[op_col], values, p, phase));
        } catch (const Error& e) {
            throw Error(where + ": " + e.what());
        }
    }
    return out;
}

}  // namespace prenet
