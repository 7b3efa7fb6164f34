#pragma once
// The state-space kernels' FLOP counts from the papers and the scan's vector work (ops/ssm.cpp costs the layers
// with them): what a test checks a layer's kernels against.
#include <cstdint>

namespace prenet {

// Mamba's selective scan, forward: 9 B L D N (state-spaces/mamba issue #110) + B L D for the D skip (+ B L D for
// the z gate).
double selective_scan_reference_flops(std::int64_t batch, std::int64_t tokens, std::int64_t channels,
                                      std::int64_t state, bool gated);
// The vector work its forward kernel is timed by, in FLOP slots of the FP32 peak: 22 per state element (the lane
// instructions of mamba_ssm's kernel, exp2 beside them) and 32 per channel element (20 ungated), not its FLOPs.
double selective_scan_forward_slots(std::int64_t batch, std::int64_t tokens, std::int64_t channels,
                                    std::int64_t state, bool gated);
// Mamba-2's SSD, forward, its matmuls only: 2 B L [G Q N + H Q P + 2 H N P], L rounded up to whole chunks of Q.
double ssd_reference_matmul_flops(std::int64_t batch, std::int64_t tokens, std::int64_t heads, std::int64_t head_dim,
                                  std::int64_t state, std::int64_t groups, std::int64_t chunk);

}  // namespace prenet
