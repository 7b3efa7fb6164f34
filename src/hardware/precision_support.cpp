#include "hardware/precision_support.hpp"

#include "hardware/spec.hpp"

namespace prenet {
namespace {

// The sheet's key for a precision's matrix-unit peak ("fp8", "bf16", ...): present = the device has the units.
bool has_units(const HardwareSpec& hw, Precision p) { return p == Precision::fp32 || hw.has_peak(to_string(p)); }

std::string upper(Precision p) {
    std::string s = to_string(p);
    for (char& c : s) c = char(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    return s;
}

}  // namespace

PrecisionSupport precision_support(const HardwareSpec& hw, Precision requested) {
    PrecisionSupport s;
    s.requested = s.used = requested;
    if (has_units(hw, requested)) return s;
    std::string why = "no " + upper(requested) + " units on " + hw.id + " (no " + to_string(requested) +
                      " peak on its sheet); ";
    switch (requested) {
        case Precision::fp8:
            s.used = has_units(hw, Precision::bf16)   ? Precision::bf16
                     : has_units(hw, Precision::fp16) ? Precision::fp16
                                                      : Precision::fp32;
            why += std::string("Transformer Engine refuses FP8 there, so the step is the ") + to_string(s.used) +
                   (s.used == Precision::fp32 ? " recipe" : " mixed-precision recipe") + " one would run instead";
            break;
        case Precision::bf16:
            s.used = Precision::fp32;
            why += "PyTorch computes bf16 there without matrix units, never faster than fp32, so the step is "
                   "predicted as fp32";
            break;
        case Precision::tf32:
            s.used = Precision::fp32;
            why += "PyTorch's allow_tf32 is then a no-op and matmuls run as fp32";
            break;
        case Precision::fp16:
            s.used = Precision::fp32;
            why += "the step is predicted as fp32";
            break;
        case Precision::fp32:
            break;  // has_units is always true for fp32
    }
    s.reason = why;
    return s;
}

std::string PrecisionSupport::note(const std::string& hardware_id) const {
    if (!fallback()) return "";
    return hardware_id + ": no " + upper(requested) + " units, predicted as " + to_string(used);
}

bool has_nf4_kernels(const HardwareSpec& hw) { return hw.kind != "tpu" && hw.kind != "neuron"; }

}  // namespace prenet
