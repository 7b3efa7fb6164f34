#include "ops/op_support.hpp"

#include "core/checked.hpp"
#include "core/error.hpp"

namespace prenet::ops {

void fail(const Layer& layer, const std::string& message) {
    throw Error("layer '" + layer.name + "' (" + layer.kind + "): " + message);
}

// An attribute's error names the attribute as data too (Error::attr), for the page's layer editor.
[[noreturn]] static void fail_attr(const Layer& layer, const char* key, const std::string& message) {
    Error e("layer '" + layer.name + "' (" + layer.kind + "): " + message);
    throw e.at_attr(key);
}

static const json* find_attr(const Layer& layer, const char* key) {
    auto it = layer.attrs.find(key);
    return (it == layer.attrs.end() || it->is_null()) ? nullptr : &*it;
}

static std::int64_t as_int(const Layer& layer, const char* key, const json& v) {
    if (v.is_number_integer() || v.is_number_unsigned()) {
        if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
            fail_attr(layer, key, std::string("field '") + key + "' overflows a 64-bit integer");
        return v.get<std::int64_t>();
    }
    if (v.is_number_float()) {
        double d = v.get<double>();
        if (d == static_cast<double>(static_cast<std::int64_t>(d)) && d > -9.2e18 && d < 9.2e18)
            return static_cast<std::int64_t>(d);
    }
    fail_attr(layer, key, std::string("field '") + key + "' must be an integer, got " + v.dump());
}

std::int64_t int_attr(const Layer& layer, const char* key) {
    const json* v = find_attr(layer, key);
    if (!v) fail_attr(layer, key, std::string("missing field '") + key + "'");
    std::int64_t x = as_int(layer, key, *v);
    if (x <= 0) fail_attr(layer, key, std::string("field '") + key + "' must be positive, got " + std::to_string(x));
    return x;
}

std::int64_t int_attr(const Layer& layer, const char* key, std::int64_t fallback) {
    const json* v = find_attr(layer, key);
    if (!v) return fallback;
    std::int64_t x = as_int(layer, key, *v);
    if (x < 0) fail_attr(layer, key, std::string("field '") + key + "' must not be negative, got " + std::to_string(x));
    return x;
}

double number_attr(const Layer& layer, const char* key, double fallback) {
    const json* v = find_attr(layer, key);
    if (!v) return fallback;
    if (!v->is_number()) fail_attr(layer, key, std::string("field '") + key + "' must be a number, got " + v->dump());
    return v->get<double>();
}

bool bool_attr(const Layer& layer, const char* key, bool fallback) {
    const json* v = find_attr(layer, key);
    if (!v) return fallback;
    if (!v->is_boolean()) fail_attr(layer, key, std::string("field '") + key + "' must be true or false, got " + v->dump());
    return v->get<bool>();
}

std::string string_attr(const Layer& layer, const char* key, const std::string& fallback) {
    const json* v = find_attr(layer, key);
    if (!v) return fallback;
    if (!v->is_string()) fail_attr(layer, key, std::string("field '") + key + "' must be a string, got " + v->dump());
    return v->get<std::string>();
}

std::vector<std::int64_t> ints_attr(const Layer& layer, const char* key, size_t rank, std::int64_t fallback) {
    const json* v = find_attr(layer, key);
    if (!v) return std::vector<std::int64_t>(rank, fallback);
    if (v->is_array()) {
        if (v->size() != rank)
            fail_attr(layer, key, std::string("field '") + key + "' needs " + std::to_string(rank) + " values, got " + v->dump());
        std::vector<std::int64_t> out;
        for (const auto& x : *v) {
            std::int64_t i = as_int(layer, key, x);
            if (i < 0) fail_attr(layer, key, std::string("field '") + key + "' must not be negative");
            out.push_back(i);
        }
        return out;
    }
    std::int64_t x = as_int(layer, key, *v);
    if (x < 0) fail_attr(layer, key, std::string("field '") + key + "' must not be negative");
    return std::vector<std::int64_t>(rank, x);
}

void require_rank(const Layer& layer, size_t min_rank, size_t max_rank) {
    if (layer.input.size() < min_rank || layer.input.size() > max_rank)
        fail(layer, "expects an input of rank " + std::to_string(min_rank) +
                        (max_rank != min_rank ? "-" + std::to_string(max_rank) : std::string()) + ", got " +
                        to_string(layer.input));
}

std::int64_t last_dim(const Shape& s) { return s.back(); }

std::int64_t leading_elements(const Shape& s) {
    std::int64_t n = 1;
    for (size_t i = 0; i + 1 < s.size(); ++i) n = checked_mul(n, s[i], "tensor size");
    return n;
}

static Kernel gemm_kernel(Phase phase, const std::string& op, Precision p, std::int64_t batch, std::int64_t m,
                          std::int64_t n, std::int64_t k) {
    Kernel kr;
    kr.family = Family::gemm;
    kr.phase = phase;
    kr.op = op;
    kr.precision = p;
    kr.batch = batch;
    kr.m = m;
    kr.n = n;
    kr.k = k;
    double b = static_cast<double>(batch), md = static_cast<double>(m), nd = static_cast<double>(n),
           kd = static_cast<double>(k);
    kr.flops = 2.0 * b * md * nd * kd;
    kr.bytes = b * ((md * kd + kd * nd) * matmul_input_bytes(p) + md * nd * activation_bytes(p));
    return kr;
}

void add_gemm(LayerCost& cost, const Layer& layer, Precision p, const std::string& op, std::int64_t batch,
              std::int64_t m, std::int64_t n, std::int64_t k, bool weight_operand, bool needs_input_grad) {
    (void)layer;
    Kernel fwd = gemm_kernel(Phase::forward, op, p, batch, m, n, k);
    cost.forward_flops += fwd.flops;
    cost.forward_bytes_read += static_cast<double>(batch) * (double(m) * k + double(k) * n) * matmul_input_bytes(p);
    cost.forward_bytes_written += static_cast<double>(batch) * double(m) * n * activation_bytes(p);
    cost.kernels.push_back(fwd);
    // dX = dY (m x n) . W^T (n x k)
    if (needs_input_grad) {
        Kernel dx = gemm_kernel(Phase::backward_input, op + "_grad_input", p, batch, m, k, n);
        cost.backward_input_flops += dx.flops;
        cost.kernels.push_back(dx);
    }
    // dW = X^T (k x m) . dY (m x n); for two activation operands this is the other input's gradient.
    Kernel dw = gemm_kernel(weight_operand ? Phase::backward_weight : Phase::backward_input,
                            op + (weight_operand ? "_grad_weight" : "_grad_other"), p, batch, k, n, m);
    (weight_operand ? cost.backward_weight_flops : cost.backward_input_flops) += dw.flops;
    cost.kernels.push_back(dw);
}

void add_bias_grad(LayerCost& cost, Precision p, const std::string& op, double rows, double features) {
    double n = rows * features;
    Precision vp = vector_precision(p);
    Kernel k = streaming_kernel(Family::elementwise, Phase::backward_weight, op + "_bias_grad", vp, n, n,
                                n * activation_bytes(p) + features * 4.0);
    cost.backward_weight_flops += k.flops;
    cost.kernels.push_back(k);
}

Kernel gradient_sum_kernel(const std::string& op, Precision p, double elements) {
    return streaming_kernel(Family::elementwise, Phase::backward_input, op, p, elements, elements,
                            3.0 * elements * activation_bytes(p));
}

void add_dropout(LayerCost& cost, const Layer& layer, Precision p, const std::string& op, double elements) {
    (void)layer;
    double eb = activation_bytes(p), bytes = elements * (2.0 * eb + 1.0);  // two tensors and the mask
    Kernel fwd = streaming_kernel(Family::elementwise, Phase::forward, op, vector_precision(p), elements,
                                  2.0 * elements, bytes);
    cost.forward_flops += fwd.flops;
    cost.forward_bytes_read += elements * eb;
    cost.forward_bytes_written += elements * eb + elements;
    cost.kernels.push_back(fwd);
    Kernel bwd = streaming_kernel(Family::elementwise, Phase::backward_input, op + "_backward", vector_precision(p),
                                  elements, 2.0 * elements, bytes);
    cost.backward_input_flops += bwd.flops;
    cost.kernels.push_back(bwd);
    cost.saved_activation_bytes += elements;
}

void add_vector(LayerCost& cost, const Layer& layer, Precision p, Family family, const std::string& op,
                double elements, double reads, double writes, double flops_per_element, bool with_backward,
                std::int64_t row_length) {
    (void)layer;
    double eb = activation_bytes(p);
    Precision vp = vector_precision(p);
    Kernel fwd;
    fwd.family = family;
    fwd.phase = Phase::forward;
    fwd.op = op;
    fwd.precision = vp;
    fwd.elements = element_count(elements, op);
    if (row_length > 0) {
        fwd.n = row_length;
        fwd.m = element_count(elements / double(row_length), op);
    }
    fwd.flops = elements * flops_per_element;
    fwd.bytes = elements * (reads + writes) * eb;
    cost.forward_flops += fwd.flops;
    cost.forward_bytes_read += elements * reads * eb;
    cost.forward_bytes_written += elements * writes * eb;
    cost.kernels.push_back(fwd);
    if (!with_backward) return;
    Kernel bwd = fwd;
    bwd.phase = Phase::backward_input;
    bwd.op = op + "_backward";
    bwd.bytes = elements * (reads + 1 + reads) * eb;
    bwd.flops = elements * flops_per_element;
    cost.backward_input_flops += bwd.flops;
    cost.kernels.push_back(bwd);
}

}  // namespace prenet::ops
