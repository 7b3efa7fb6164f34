#include "predict/kernel_features.hpp"

#include <algorithm>
#include <cmath>

#include "predict/predictor.hpp"

namespace prenet {
namespace {

double lg(double x) { return std::log10(std::max(x, 1e-12)); }

// Output tile assumed for wave counting; the library picks among several, 128x128 is the common large one.
constexpr double kTile = 128;
// Elements one thread block of a vectorised elementwise kernel covers (128 threads x 4 elements x unroll).
constexpr double kVectorBlock = 2048;

double wave_efficiency(const GemmView& g, double tile_m, double tile_n, double units) {
    double blocks = g.batch * std::ceil(g.m / tile_m) * std::ceil(g.n / tile_n);
    return blocks / (std::ceil(blocks / units) * units);
}

// Half-precision tensor cores take a GEMM (or implicit-GEMM convolution) at full rate only when the reduction
// and output dims are multiples of 8; otherwise the library pads or falls back to slower kernels. TF32 is left
// out: no TF32 convolution was measured, and the flag would lend it the efficiency of aligned fp16 ones.
bool tensor_core_aligned(const Kernel& k, const GemmView& g) {
    bool half = k.precision == Precision::fp16 || k.precision == Precision::bf16 || k.precision == Precision::fp8;
    if (!half || !uses_matrix_units(k.family)) return false;
    auto multiple_of_8 = [](double x) { return std::fmod(x, 8.0) == 0.0; };
    if (k.family == Family::conv && k.conv)
        return multiple_of_8(double(k.conv->c) / std::max<double>(1, k.conv->groups)) && multiple_of_8(k.conv->k);
    return multiple_of_8(g.k) && multiple_of_8(g.n);
}

}  // namespace

Family model_family(Family f) {
    switch (f) {
        case Family::gemm:
        case Family::rnn: return Family::gemm;
        // Fused (flash) attention is fitted on its own measurements (aiconfigurator's context attention): a
        // softmax between two products in one kernel runs at other efficiencies than a GEMM of the same FLOPs.
        // A models file without this family times it with the gemm model (LearnedPredictor::family_of).
        case Family::attention: return Family::attention;
        case Family::conv: return Family::conv;
        case Family::norm: return Family::norm;
        case Family::softmax: return Family::softmax;
        default: return Family::elementwise;
    }
}

Family model_family(const Kernel& kernel) {
    if (kernel.family == Family::norm && kernel.op.rfind("batchnorm", 0) == 0) return Family::elementwise;
    return model_family(kernel.family);
}

GemmView gemm_view(const Kernel& k) {
    GemmView g;
    if (k.family == Family::conv && k.conv) {
        const ConvShape& c = *k.conv;
        double stride_w = double(c.stride_w), pad_w = double(c.pad_w);
        double out_h = std::floor((c.h + 2.0 * c.pad_h - c.r) / std::max<double>(1, c.stride_h)) + 1;
        double out_w = std::floor((c.w + 2.0 * pad_w - c.s) / std::max(1.0, stride_w)) + 1;
        g.m = std::max(1.0, c.n * out_h * out_w);
        g.n = std::max<double>(1, c.k);
        g.k = std::max<double>(1, double(c.c) / std::max<double>(1, c.groups) * c.r * c.s);
        return g;
    }
    if (!uses_matrix_units(k.family)) {  // rows x row length for row-wise kernels, else a flat vector
        g.m = k.n > 0 ? std::max<double>(1, k.m) : std::max<double>(1, k.elements);
        g.n = k.n > 0 ? double(k.n) : 1;
        return g;
    }
    // Matrix-unit kernels as (m x k)(k x n) products. A fused attention kernel (ops/attention.cpp) carries
    // batch = batch x heads, m = queries, n = the value head dim, k = keys: FlashAttention-2's decomposition
    // (one thread block per batch x head and 128-query tile, streaming every key), so its tiles are its blocks.
    if (k.m > 0) {
        g.batch = std::max<double>(1, k.batch);
        g.m = double(k.m), g.n = std::max<double>(1, k.n), g.k = std::max<double>(1, k.k);
        return g;
    }
    g.m = std::max<double>(1, k.elements);
    return g;
}

namespace {
double output_tiles(const GemmView& g) { return g.batch * std::ceil(g.m / kTile) * std::ceil(g.n / kTile); }
}  // namespace

double output_tile_waves(const Kernel& k, const HardwareSpec& hw) {
    if (!uses_matrix_units(k.family) || k.phase == Phase::backward_weight) return 0;
    GemmView g = gemm_view(k);
    if (k.family == Family::conv && k.phase == Phase::backward_input && k.conv) {
        const ConvShape& c = *k.conv;  // the input gradient is an implicit GEMM over input pixels x channels
        g.m = std::max(1.0, double(c.n) * double(c.h) * double(c.w));
        g.n = std::max(1.0, double(c.c));
    }
    return std::ceil(output_tiles(g) / std::max(hw.compute_units, 1.0));
}

const std::vector<std::string>& kernel_feature_names() {
    static const std::vector<std::string> names = {
        "log_flops",        "log_bytes",       "log_intensity",  "log_intensity_over_ridge", "log_compute_ms",
        "log_memory_ms",    "log_bound_ms",    "log_peak_flops", "log_bandwidth",            "log_compute_units",
        "log_clock_mhz",    "log_l2_mb",       "log_bytes_over_l2", "wave_efficiency",       "log_blocks_per_unit",
        "log_m",            "log_n",           "log_k",          "log_batch",                "element_bytes",
        "log_watts_per_tflop", "log_bandwidth_per_unit", "wave_efficiency_64", "wave_efficiency_256x128", "conv_phase",
        "vendor_amd",       "winograd",        "tensor_core_aligned", "log_peak_per_unit", "log_tile_us", "vendor_intel"};
    return names;
}

std::vector<double> kernel_features(const Kernel& k, const HardwareSpec& hw) {
    bool matrix = uses_matrix_units(k.family);
    double peak = matrix ? hw.matmul_flops(k.precision) : hw.vector_flops();
    double bw = hw.bandwidth_bytes_per_s();
    double flops = std::max(k.flops, 1.0), bytes = std::max(k.bytes, 1.0);
    double compute_ms = 1e3 * flops / peak, memory_ms = 1e3 * bytes / bw;
    double units = std::max(hw.compute_units, 1.0);
    GemmView g = gemm_view(k);
    double blocks = matrix ? output_tiles(g) : std::ceil(std::max<double>(k.elements, 1) / kVectorBlock);
    double waves = std::ceil(blocks / units);
    double l2_bytes = std::max(hw.l2_cache_mb, 0.5) * 1e6;
    return {lg(flops),
            lg(bytes),
            lg(flops / bytes),
            lg((flops / bytes) / (peak / bw)),
            lg(compute_ms),
            lg(memory_ms),
            lg(lower_bound_ms(k, hw)),  // the bound the learned slowdown multiplies (Winograd-aware)
            lg(peak),
            lg(bw),
            lg(units),
            lg(std::max(hw.clock_mhz(), 100.0)),
            lg(l2_bytes / 1e6),
            lg(bytes / l2_bytes),
            blocks / (waves * units),
            lg(blocks / units),
            lg(g.m),
            lg(g.n),
            lg(g.k),
            lg(g.batch),
            matmul_input_bytes(k.precision),
            lg(std::max(hw.tdp_w, 1.0) / (peak / 1e12)),
            lg(bw / units),
            matrix ? wave_efficiency(g, 64, 64, units) : 1.0,
            matrix ? wave_efficiency(g, 256, 128, units) : 1.0,
            k.family == Family::conv ? double(int(k.phase)) : 0.0,
            hw.vendor == "AMD" ? 1.0 : 0.0,
            winograd_eligible(k, hw) ? 1.0 : 0.0,
            tensor_core_aligned(k, g) ? 1.0 : 0.0,
            // How much arithmetic one compute unit does per second, and so how long one output tile over the
            // whole reduction keeps it busy: fixed per-tile costs (prologue, epilogue, the pipeline filling)
            // weigh more on a part whose units are fast (B200: 15 dense BF16 TFLOP/s per SM; A100, L40S and
            // RTX PRO 6000: 2.5-3), so medium GEMMs reach a lower share of the peak there.
            lg(peak / units / 1e12),
            lg(1e6 * 2.0 * kTile * kTile * g.k / (peak / units)),
            // Like vendor_amd: another vendor's software stack (oneAPI/oneDNN on the Arc Pro B60 pays ~27 us per
            // GEMM call where CUDA's pay 2) is a fact of its own, kept apart from the size features.
            hw.vendor == "Intel" ? 1.0 : 0.0};
}

}  // namespace prenet
