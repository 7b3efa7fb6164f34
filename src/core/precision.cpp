#include "core/precision.hpp"

#include "core/error.hpp"

namespace prenet {

Precision parse_precision(const std::string& name) {
    if (name == "fp32") return Precision::fp32;
    if (name == "tf32") return Precision::tf32;
    if (name == "fp16") return Precision::fp16;
    if (name == "bf16") return Precision::bf16;
    if (name == "fp8") return Precision::fp8;
    throw Error("unknown precision '" + name + "' (expected fp32, tf32, fp16, bf16 or fp8)");
}

const char* to_string(Precision p) {
    switch (p) {
        case Precision::fp32: return "fp32";
        case Precision::tf32: return "tf32";
        case Precision::fp16: return "fp16";
        case Precision::bf16: return "bf16";
        case Precision::fp8: return "fp8";
    }
    return "fp32";
}

MixedRecipe parse_mixed_recipe(const std::string& name) {
    if (name == "autocast") return MixedRecipe::autocast;
    if (name == "half") return MixedRecipe::half_model;
    throw Error("unknown mixed-precision recipe '" + name + "' (expected autocast or half)");
}

const char* to_string(MixedRecipe r) { return r == MixedRecipe::autocast ? "autocast" : "half"; }

bool runs_autocast(Precision p, MixedRecipe r) {
    return r == MixedRecipe::autocast && (p == Precision::fp16 || p == Precision::bf16);
}

Precision vector_precision(Precision p) {
    return p == Precision::fp8 ? Precision::bf16 : (p == Precision::tf32 ? Precision::fp32 : p);
}

double activation_bytes(Precision p) {
    return (p == Precision::fp32 || p == Precision::tf32) ? fp32_bytes : half_bytes;
}

double matmul_input_bytes(Precision p) {
    return p == Precision::fp8 ? 1.0 : activation_bytes(p);
}

double weight_bytes(Precision p) { return matmul_input_bytes(p); }

}  // namespace prenet
