#pragma once
// Which precision a training step actually runs as on a device (docs/training-model.md, "Precision support per
// device"). A precision with no peak on the device's sheet has no units there; the step then runs as the
// precision the framework would fall back to, never faster than it:
//   fp8   without fp8 units  -> bf16 (Transformer Engine refuses FP8 there; the recipe one runs is bf16 mixed
//                               precision), or fp16 without bf16 units (V100, T4), or fp32 without either.
//   bf16  without bf16 units -> fp32 (PyTorch computes bf16 there without matrix units, never faster than fp32).
//   tf32  without tf32 units -> fp32 (torch.backends.cuda.matmul.allow_tf32 is then a no-op).
//   fp16  without an fp16 peak -> fp32.
//   fp32  always fp32. Parts that publish no fp32 rate (TPUs, Gaudi) run it as bf16 passes inside
//         HardwareSpec::matmul_flops; that is how fp32 runs there, not a fallback.
#include <string>

#include "core/precision.hpp"

namespace prenet {

struct HardwareSpec;

struct PrecisionSupport {
    Precision requested = Precision::fp32;
    Precision used = Precision::fp32;
    std::string reason;  // empty when used == requested

    bool fallback() const { return used != requested; }
    // "a100-sxm4-80gb: no FP8 units, predicted as bf16" (empty without a fallback).
    std::string note(const std::string& hardware_id) const;
};

PrecisionSupport precision_support(const HardwareSpec& hw, Precision requested);

// Whether bitsandbytes has 4-bit (NF4) kernels for the device, which QLoRA's quantised base needs: NVIDIA
// (CUDA), AMD (ROCm) and Intel (XPU, Gaudi) parts have them; TPUs (XLA) and AWS Trainium (Neuron) have no
// bitsandbytes backend (bitsandbytes' installation guide, v0.50), so advice never offers QLoRA there.
bool has_nf4_kernels(const HardwareSpec& hw);

}  // namespace prenet
