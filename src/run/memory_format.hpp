#pragma once
// The memory format of a convolutional model's activations, and what PyTorch's default one costs
// (docs/training-model.md, "Convolution layouts").
//
// cuDNN's tensor-core convolutions compute in NHWC. A model in PyTorch's default NCHW layout
// (torch.contiguous_format) hands cuDNN NCHW tensors, and cuDNN transposes them around each call: "the NCHW
// tensor must be transposed to NHWC before the convolution and transposed back to NCHW after" (MosaicML
// Composer's Channels Last method card, after NVIDIA's diagram). torch.channels_last (--channels-last) keeps the
// activations NHWC, so the convolutions run without them; so does torch.compile on CUDA, whose Inductor
// converts convolutions to channels-last by default (torch/_inductor/config.py, `layout_optimization`, "1" unless
// ROCm). fp32 and tf32 convolutions keep their NCHW kernels, and AMD's MIOpen computes in NCHW natively, so only
// half-precision convolutions on NVIDIA tensor cores pay.
#include <vector>

#include "hardware/spec.hpp"
#include "ops/features.hpp"

namespace prenet {

// Whether `hw` runs a convolution at `precision` on tensor cores in NHWC: a half-precision one (fp16, bf16, and
// fp8's bf16 activations) on an NVIDIA part with tensor cores, read from its sheet's peaks: a TF32 peak (Ampere
// onwards), or a half-precision peak at least 4x its fp32 vector rate (Volta and Turing: 8x; packed half
// arithmetic alone gives 2x, as on the P100).
bool runs_nhwc_tensor_core_convs(const HardwareSpec& hw, Precision precision);

// The layout transposes cuDNN runs around one call of a 2-d convolution layer (`conv`: its forward, input-
// gradient or weight-gradient kernel) in NCHW: one pass over each tensor the call reads or writes, the two
// activation-sized ones and the weight (forward: input, weight, output; input gradient: output gradient, weight,
// input gradient; weight gradient: input, output gradient, weight gradient), each element read once and written
// once in the activations' precision. Empty for a kernel that is not such a convolution's or for a depthwise
// convolution (PyTorch runs those with its own NCHW kernels).
std::vector<Kernel> layout_transposes(const Layer& layer, const Kernel& conv);

// Whether any convolution kernel of `features` pays layout transposes on `hw` in NCHW (a cheap check: a model
// without such convolutions needs no copy of its features).
bool needs_layout_transposes(const ModelFeatures& features, const HardwareSpec& hw);

// `features` with each 2-d convolution kernel's layout transposes added to its layer, for a model whose
// activations are NCHW on `hw`; unchanged where `hw` runs no NHWC tensor-core convolutions. Parameters, FLOPs and
// memory are unchanged: the transposed copies are cuDNN's workspace, freed with the call.
ModelFeatures with_layout_transposes(const ModelFeatures& features, const HardwareSpec& hw);

}  // namespace prenet
