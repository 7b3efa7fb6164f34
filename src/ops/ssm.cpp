// State-space sequence mixers on [batch, tokens, channels]: Mamba's selective scan (Gu & Dao 2023, "Mamba:
// Linear-Time Sequence Modeling with Selective State Spaces"), Mamba-2's chunked state-space duality (SSD; Dao &
// Gu 2024, "Transformers are SSMs"), the short causal depthwise convolution both run before their scan, and the
// two mixers that wrap them with their projections (`mamba`, `mamba2`), the layers the state-space importers
// build (importers/state_space.cpp).
//
// Kernels: the scan is one fused kernel on the vector units (the paper's hardware-aware scan keeps the
// d_state-wide state in SRAM and reads and writes only the [batch, tokens, channels] tensors), a streaming kernel
// of the elementwise family. What bounds it is the vector units' instruction issue, not its 9 FLOPs per state:
// its kernels carry the lane-instructions counted from mamba_ssm's code as FLOP slots (kScanForwardSlots), so
// that the FP32 peak bounds them. SSD is mostly batched matmuls over chunks of `chunk` tokens (gemm family), plus
// the per-head decay applied to each chunk's C B^T on the vector units (kSsdDecaySlots); the causal convolution
// streams its input once (elementwise). No SSM kernel was measured for the learned predictor: they are timed by
// the elementwise and gemm models (docs/importers.md, "State-space and hybrid models").
#include <algorithm>

#include "core/checked.hpp"
#include "ops/catalogue.hpp"
#include "ops/op_support.hpp"
#include "ops/ssm.hpp"

namespace prenet {
namespace {

// Mamba-1's selective scan over `channels` = d_inner: B and C of width d_state per token (shared by the
// channels), a per-channel step size delta, the D skip and (gated) the y * silu(z) gate fused in.
struct ScanShape {
    std::int64_t batch = 1, tokens = 1, channels = 1, state = 16;
    bool gated = true;
};

// Forward FLOPs: the reference scan's count, 9 B L D N (exp(delta A), delta B u, the recurrence x = Ax + Bu and
// the readout C x; state-spaces/mamba issue #110, as VMamba's flops_selective_scan_fn), plus B L D for the D skip
// and B L D for the gate.
double scan_forward_flops(const ScanShape& s) {
    double bld = double(s.batch) * double(s.tokens) * double(s.channels);
    return 9.0 * bld * double(s.state) + bld + (s.gated ? bld : 0.0);
}

// The scan's work on the vector units, in FLOP slots of the FP32 peak (an FMA lane-instruction counts 2), per
// (token, channel, state) element. Counted from mamba_ssm's selective_scan_fwd_kernel.cuh: delta * A (1), B *
// delta u (1), the block scan's combine (a multiply and an FMA) applied twice, in each thread's reduce and in its
// scan with the prefix (4), the warp-level scan's share (5 shuffle steps of 2 shuffles and a combine over a
// thread's 16 items: about 2), the bf16 -> fp32 conversions of B and C (2) and the readout's FMA (1): 11 lane
// instructions, 22 slots, where the FLOP count has 9. Its exp2 runs on the special-function units (16 lanes per
// SM against 64-128 FP32 lanes, CUDA C++ Programming Guide, "Arithmetic Instructions") beside that work. With 9
// FLOPs the scan was predicted about 2.5x faster than the paper's Figure 8 has it against FlashAttention-2
// (docs/importers.md, "Timing"); with 22 slots the two cross near 2K tokens, as the paper says.
constexpr double kScanForwardSlots = 22.0;
// Per (token, channel): the delta bias and softplus (an exp and a log1p), delta * u, the D skip and, gated, the
// gate's y * z * sigmoid(z): about 16 lane instructions with the gate, 10 without.
constexpr double kScanChannelSlotsGated = 32.0, kScanChannelSlots = 20.0;
// selective_scan_bwd_kernel per element: the forward recomputed (exp2's argument, the two products and the
// forward scan: about 9), the reverse scan (about 6), the gradients of delta u, delta, A, B and C (about 9) and
// the conversions (2): about 26 lane instructions, 2.4x the forward's (a profile of mamba_ssm's scan in
// state-spaces/mamba issue #284 has its backward 2.7x its forward). Its fp32 atomic adds of dB and dC are memory
// traffic (below).
constexpr double kScanBackwardSlots = 52.0;
constexpr double kScanAtomicBytes = 8.0;

// The vector work the scan's forward or backward kernel is timed by, in FLOP slots.
double scan_slots(const ScanShape& s, Phase phase) {
    double bld = double(s.batch) * double(s.tokens) * double(s.channels);
    double channel = s.gated ? kScanChannelSlotsGated : kScanChannelSlots;
    return phase == Phase::forward ? bld * (kScanForwardSlots * double(s.state) + channel)
                                   : bld * (kScanBackwardSlots * double(s.state) + 2.0 * channel);
}

// mamba_ssm's selective_scan_fwd keeps the state in registers and writes only the state at each 2048-token
// chunk's end (fp32, its real and the running-product part: 2 d_state per channel), for the backward pass.
constexpr std::int64_t kScanChunk = 2048;

// `keeps_inputs`: the kernel keeps its inputs for the backward (standalone); inside a mixer its caller keeps what
// the fused function saves, and the scan adds only its chunk states.
void add_scan_kernels(LayerCost& cost, Precision p, const ScanShape& s, const std::string& prefix,
                      bool keeps_inputs = true) {
    double eb = activation_bytes(p);
    double bld = double(s.batch) * double(s.tokens) * double(s.channels);
    double bln = double(s.batch) * double(s.tokens) * double(s.state);
    double chunks = double((s.tokens + kScanChunk - 1) / kScanChunk);
    double chunk_states = double(s.batch) * double(s.channels) * chunks * 2.0 * double(s.state) * 4.0;
    double params = double(s.channels) * (double(s.state) + 2.0) * 4.0;  // A, D and the delta bias, fp32
    double tensors_in = s.gated ? 3.0 : 2.0;                              // u, delta (, z)
    double read = tensors_in * bld * eb + 2.0 * bln * eb + params, written = bld * eb + chunk_states;
    double flops = scan_forward_flops(s);
    Kernel fwd = streaming_kernel(Family::elementwise, Phase::forward, prefix + "selective_scan", vector_precision(p),
                                  bld, scan_slots(s, Phase::forward), read + written);
    cost.forward_flops += flops;
    cost.forward_bytes_read += read;
    cost.forward_bytes_written += written;
    cost.kernels.push_back(fwd);
    // selective_scan_bwd runs the recurrence again from the saved chunk states and then backwards: reads the
    // inputs and dy, writes du, ddelta (, dz) and fp32 dB, dC (and the parameters' gradients). Twice the
    // forward's FLOPs (the recomputation and the reverse scan with its products); kScanBackwardSlots of work.
    // dB and dC are shared by the channels: each channel's block adds its share into them with fp32 atomics
    // (coalesced by a block exchange), B L D N of each, resolved in the L2 cache. No datasheet gives an L2 atomic
    // rate; each is counted as an 8-byte read-modify-write at the memory bandwidth (kScanAtomicBytes).
    double atomics = 2.0 * bld * double(s.state);
    double bwd_read = (tensors_in + 1.0) * bld * eb + 2.0 * bln * eb + params + chunk_states;
    double bwd_written = tensors_in * bld * eb + atomics * kScanAtomicBytes + params;
    Kernel bwd = streaming_kernel(Family::elementwise, Phase::backward_input, prefix + "selective_scan_backward",
                                  vector_precision(p), bld, scan_slots(s, Phase::backward_input),
                                  bwd_read + bwd_written);
    cost.backward_input_flops += flops;
    cost.backward_weight_flops += flops;
    cost.kernels.push_back(bwd);
    // Kept for the backward: u, delta, B, C (, z) and the chunk states (the output is recomputed).
    cost.saved_activation_bytes += (keeps_inputs ? tensors_in * bld * eb + 2.0 * bln * eb : 0.0) + chunk_states;
}

// Dao's causal-conv1d: a depthwise convolution of `width` taps over the tokens, with the SiLU fused.
void add_causal_conv_kernels(LayerCost& cost, Precision p, std::int64_t batch, std::int64_t tokens,
                             std::int64_t channels, std::int64_t width, const std::string& prefix,
                             bool keeps_input = true) {
    double eb = activation_bytes(p);
    double elements = double(batch) * double(tokens) * double(channels);
    double weights = double(channels) * double(width + 1) * eb;
    // 2 FLOPs per tap, the bias and the SiLU (8, as the MLP's).
    double flops = elements * (2.0 * double(width) + 1.0 + 8.0);
    Kernel fwd = streaming_kernel(Family::elementwise, Phase::forward, prefix + "causal_conv1d", vector_precision(p),
                                  elements, flops, 2.0 * elements * eb + weights);
    cost.forward_flops += flops;
    cost.forward_bytes_read += elements * eb + weights;
    cost.forward_bytes_written += elements * eb;
    cost.kernels.push_back(fwd);
    // One backward kernel: reads x and dy, writes dx, and reduces the weight and bias gradients in fp32.
    double taps = 2.0 * double(width) * elements;
    Kernel bwd = streaming_kernel(Family::elementwise, Phase::backward_input, prefix + "causal_conv1d_backward",
                                  vector_precision(p), elements, 2.0 * taps + 10.0 * elements,
                                  3.0 * elements * eb + weights + double(channels) * double(width + 1) * 4.0);
    cost.backward_input_flops += taps + 10.0 * elements;
    cost.backward_weight_flops += taps;
    cost.kernels.push_back(bwd);
    if (keeps_input) cost.saved_activation_bytes += elements * eb;  // its input
}

// Mamba-2's SSD over `heads` heads of `head_dim` channels, B and C of width `state` shared by the heads of each of
// `groups` groups, in chunks of `chunk` tokens (the SSD algorithm, Listing 1 of the paper; mamba_ssm's
// mamba_chunk_scan_combined): (1) C B^T within each chunk, (2) the diagonal blocks' outputs (C B^T o L) X,
// (3) each chunk's final state B^T X, (4) the states passed from chunk to chunk (a scan over chunks),
// (5) the off-diagonal outputs C S from the incoming states.
struct SsdShape {
    std::int64_t batch = 1, tokens = 1, heads = 1, head_dim = 64, state = 128, groups = 1, chunk = 256;
    bool gated = true;
};

std::int64_t ssd_chunks(const SsdShape& s) { return (s.tokens + s.chunk - 1) / s.chunk; }

// The decay each head applies to its group's C B^T inside a chunk, L[m, k] = exp(cumsum dA[m] - cumsum dA[k]) for
// k <= m, in FP32 slots per element of the causal half (mamba_ssm's _chunk_scan_fwd_kernel, which loops k only to
// the diagonal): the difference, the exp's scaling (its exp2 on the special-function units), the products with
// C B^T and dt[k], the causal mask's compare and select, the conversion for the tensor-core product: about 7 lane
// instructions. Each element reads the group's fp32 C B^T again (the heads are the grid's slowest dimension, so
// another head's read of the same block comes from memory unless the batch's C B^T fit in L2). The backward
// applies the decays again for dx and d(C B^T) (twice the forward's work). Counted FLOPs: 3 per element.
constexpr double kSsdDecaySlots = 14.0;

// `keeps_inputs` as add_scan_kernels'; inside Mamba-2's fused function the chunk states are recomputed too.
void add_ssd_kernels(LayerCost& cost, const Layer& layer, Precision p, const SsdShape& s, const std::string& prefix,
                     bool keeps_inputs = true) {
    std::int64_t bc = checked_mul(s.batch, ssd_chunks(s), "tensor size");
    std::int64_t bcg = checked_mul(bc, s.groups, "tensor size");
    std::int64_t bch = checked_mul(bc, s.heads, "tensor size");
    // The heads sharing a group's B and C read them once: each product runs per group, its heads side by side in
    // the n dimension (mamba_ssm's kernels load a group's B, C and C B^T once for the heads of a thread block, the
    // per-head decay applied on chip), so the bytes are the group's operands once and every head's own.
    std::int64_t group_width = checked_mul(s.heads / s.groups, s.head_dim, "tensor size");
    double eb = activation_bytes(p);
    double tokens = double(s.batch) * double(s.tokens);
    // dt's softplus, its cumulative sum within the chunk and the decay exp(A dt), per token and head (fp32).
    double per_head = tokens * double(s.heads);
    Kernel cumsum = streaming_kernel(Family::elementwise, Phase::forward, prefix + "ssd_chunk_cumsum",
                                     vector_precision(p), per_head, 12.0 * per_head, per_head * (eb + 3.0 * 4.0));
    cost.forward_flops += cumsum.flops;
    cost.kernels.push_back(cumsum);
    // All the SSD products take two activations (no weight): both of their gradients are input gradients.
    ops::add_gemm(cost, layer, p, prefix + "ssd_chunk_cb", bcg, s.chunk, s.chunk, s.state, false, true);
    ops::add_gemm(cost, layer, p, prefix + "ssd_chunk_state", bcg, s.state, group_width, s.chunk, false, true);
    // The states handed from chunk to chunk: a sequential pass over [chunks, heads, head_dim, state] in fp32.
    double states = double(bch) * double(s.head_dim) * double(s.state);
    for (Phase phase : {Phase::forward, Phase::backward_input}) {
        Kernel pass = streaming_kernel(Family::elementwise, phase,
                                       prefix + (phase == Phase::forward ? "ssd_state_passing" : "ssd_state_passing_backward"),
                                       Precision::fp32, states, 2.0 * states, 3.0 * states * 4.0);
        (phase == Phase::forward ? cost.forward_flops : cost.backward_input_flops) += pass.flops;
        cost.kernels.push_back(pass);
    }
    // The chunk scan: the diagonal blocks' outputs (C B^T o L) X and the incoming states' C S, with the D skip
    // and (gated) y * silu(z) in its epilogue, no pass of their own. L is per head: before its product each head
    // weighs its group's C B^T by the decays (work on the vector units, below).
    double decay_elements = double(bch) * double(s.chunk) * double(s.chunk + 1) / 2.0;
    for (Phase phase : {Phase::forward, Phase::backward_input}) {
        bool forward = phase == Phase::forward;
        Kernel decay = streaming_kernel(Family::elementwise, phase,
                                        prefix + (forward ? "ssd_chunk_scan_decay" : "ssd_chunk_scan_decay_backward"),
                                        Precision::fp32, decay_elements,
                                        (forward ? 1.0 : 2.0) * kSsdDecaySlots * decay_elements, decay_elements * 4.0);
        (forward ? cost.forward_flops : cost.backward_input_flops) += (forward ? 3.0 : 6.0) * decay_elements;
        cost.kernels.push_back(decay);
    }
    ops::add_gemm(cost, layer, p, prefix + "ssd_chunk_scan_diagonal", bcg, s.chunk, group_width, s.chunk, false, true);
    ops::add_gemm(cost, layer, p, prefix + "ssd_chunk_scan_states", bcg, s.chunk, group_width, s.state, false, true);
    // Kept for the backward: x, B, C, dt (and z when gated; the layer's other saves are its callers'), and the
    // chunk states.
    double channels = tokens * double(s.heads) * double(s.head_dim);
    if (keeps_inputs)
        cost.saved_activation_bytes += (channels * (s.gated ? 2.0 : 1.0) + 2.0 * tokens * double(s.groups) * double(s.state) +
                                        per_head) * eb + states * 4.0;
}

// Hand count of the SSD's forward matmul FLOPs (2 per multiply-accumulate), per the chunked algorithm above:
// 2 B L [G Q N (C B^T) + H Q P (diagonal outputs) + H N P (chunk states) + H N P (off-diagonal outputs)], with
// L rounded up to whole chunks.
double ssd_matmul_flops(const SsdShape& s) {
    double l = double(ssd_chunks(s) * s.chunk), q = double(s.chunk), n = double(s.state), pd = double(s.head_dim);
    return 2.0 * double(s.batch) * l * (double(s.groups) * q * n + double(s.heads) * q * pd + 2.0 * double(s.heads) * n * pd);
}

// ---- the standalone kinds ---------------------------------------------------------------------------------------

void infer_same_rank3(Layer& layer) {
    ops::require_rank(layer, 3, 3);
    layer.output = layer.input;
}

void infer_causal_conv1d(Layer& layer) {
    infer_same_rank3(layer);
    std::int64_t width = ops::int_attr(layer, "kernel_size", 4);
    if (width < 1 || width > 64) ops::fail(layer, "field 'kernel_size' must be between 1 and 64 (a short convolution)");
    ops::bool_attr(layer, "bias", true);
}

void cost_causal_conv1d(const Layer& layer, Precision p, LayerCost& cost) {
    std::int64_t width = ops::int_attr(layer, "kernel_size", 4), channels = layer.input[2];
    cost.params = checked_mul(channels, width + (ops::bool_attr(layer, "bias", true) ? 1 : 0), "parameter count");
    add_causal_conv_kernels(cost, p, layer.input[0], layer.input[1], channels, width, "");
}

ScanShape read_scan(const Layer& layer, std::int64_t channels) {
    ScanShape s;
    s.batch = layer.input[0], s.tokens = layer.input[1], s.channels = channels;
    s.state = ops::int_attr(layer, "d_state");
    s.gated = ops::bool_attr(layer, "gated", true);
    return s;
}

void infer_selective_scan(Layer& layer) {
    infer_same_rank3(layer);
    std::int64_t state = ops::int_attr(layer, "d_state");
    if (state > 256) ops::fail(layer, "field 'd_state' must be at most 256 (the scan keeps the state in SRAM)");
    ops::bool_attr(layer, "gated", true);
}

// A and D per channel: d_inner x d_state + d_inner (the delta bias belongs to the step-size projection).
void cost_selective_scan(const Layer& layer, Precision p, LayerCost& cost) {
    ScanShape s = read_scan(layer, layer.input[2]);
    cost.params = checked_mul(s.channels, s.state + 1, "parameter count");
    add_scan_kernels(cost, p, s, "");
}

SsdShape read_ssd(const Layer& layer, std::int64_t channels) {
    SsdShape s;
    s.batch = layer.input[0], s.tokens = layer.input[1];
    s.head_dim = ops::int_attr(layer, "head_dim", 64);
    s.state = ops::int_attr(layer, "d_state", 128);
    s.groups = ops::int_attr(layer, "ssm_groups", 1);
    s.chunk = ops::int_attr(layer, "chunk", 256);
    s.gated = ops::bool_attr(layer, "gated", true);
    if (s.head_dim < 1 || channels % s.head_dim)
        ops::fail(layer, "field 'head_dim' (" + std::to_string(s.head_dim) + ") must be positive and divide the " +
                             std::to_string(channels) + " SSM channels");
    s.heads = channels / s.head_dim;
    if (s.state < 1 || s.state > 1024) ops::fail(layer, "field 'd_state' must be between 1 and 1024");
    if (s.chunk < 1 || s.chunk > 4096) ops::fail(layer, "field 'chunk' must be between 1 and 4096");
    if (s.groups < 1 || s.heads % s.groups)
        ops::fail(layer, "field 'ssm_groups' (" + std::to_string(s.groups) + ") must be positive and divide the " +
                             std::to_string(s.heads) + " heads");
    return s;
}

void infer_ssd(Layer& layer) {
    infer_same_rank3(layer);
    read_ssd(layer, layer.input[2]);
}

// A, D and the dt bias per head.
void cost_ssd(const Layer& layer, Precision p, LayerCost& cost) {
    SsdShape s = read_ssd(layer, layer.input[2]);
    cost.params = checked_mul(s.heads, 3, "parameter count");
    add_ssd_kernels(cost, layer, p, s, "");
}

// ---- the mixers -------------------------------------------------------------------------------------------------

// What both mixers share: d_inner (`intermediate`, which tensor parallelism divides, as an MLP's hidden units:
// in_proj is column-parallel and out_proj row-parallel, Megatron's MambaMixer), the convolution width, biases.
struct MixerShape {
    std::int64_t hidden = 0, inner = 0, conv = 4;
    bool conv_bias = true, bias = false;
};

MixerShape read_mixer(const Layer& layer) {
    MixerShape m;
    m.hidden = layer.input.back();
    m.inner = ops::int_attr(layer, "intermediate");
    m.conv = ops::int_attr(layer, "d_conv", 4);
    if (m.conv < 1 || m.conv > 64) ops::fail(layer, "field 'd_conv' must be between 1 and 64 (a short convolution)");
    m.conv_bias = ops::bool_attr(layer, "conv_bias", true);
    m.bias = ops::bool_attr(layer, "bias", false);
    return m;
}

// The forward kernel `op` run again in the backward pass (the fused functions recompute instead of keeping).
void recompute_in_backward(LayerCost& cost, const std::string& op) {
    for (const auto& k : std::vector<Kernel>(cost.kernels))
        if (k.op == op && k.phase == Phase::forward) {
            Kernel again = k;
            again.phase = Phase::backward_input;
            again.op = op + "_recompute";
            cost.backward_input_flops += again.flops;
            cost.kernels.push_back(again);
        }
}

std::int64_t linear_params(std::int64_t in, std::int64_t out, bool bias) {
    return checked_add(checked_mul(in, out, "parameter count"), bias ? out : 0, "parameter count");
}

// Mamba-1 (mamba_ssm's Mamba, Hugging Face's MambaMixer): in_proj to x and z (2 d_inner), the causal conv on x,
// x_proj to delta's rank and B, C (dt_rank + 2 d_state), dt_proj back to d_inner (with the bias the scan adds),
// the selective scan with the z gate, out_proj. Jamba and Falcon-Mamba norm delta, B and C (`inner_norms`:
// with weights in Jamba, none in Falcon-Mamba: a parameter-free RMS norm).
void infer_mamba(Layer& layer) {
    ops::require_rank(layer, 3, 3);
    MixerShape m = read_mixer(layer);
    std::int64_t state = ops::int_attr(layer, "d_state");
    if (state > 256) ops::fail(layer, "field 'd_state' must be at most 256 (the scan keeps the state in SRAM)");
    ops::int_attr(layer, "dt_rank");
    std::string norms = ops::string_attr(layer, "inner_norms", "none");
    if (norms != "none" && norms != "weighted" && norms != "unweighted")
        ops::fail(layer, "field 'inner_norms' must be none, weighted or unweighted, got '" + norms + "'");
    (void)m;
    layer.output = layer.input;
}

void cost_mamba(const Layer& layer, Precision p, LayerCost& cost) {
    MixerShape m = read_mixer(layer);
    std::int64_t state = ops::int_attr(layer, "d_state"), rank = ops::int_attr(layer, "dt_rank");
    std::string norms = ops::string_attr(layer, "inner_norms", "none");
    std::int64_t batch = layer.input[0], tokens = layer.input[1], rows = checked_mul(batch, tokens, "tensor size");
    std::int64_t params = linear_params(m.hidden, 2 * m.inner, m.bias);
    params = checked_add(params, checked_mul(m.inner, m.conv + (m.conv_bias ? 1 : 0), "parameter count"), "parameter count");
    params = checked_add(params, linear_params(m.inner, rank + 2 * state, false), "parameter count");
    params = checked_add(params, linear_params(rank, m.inner, true), "parameter count");
    params = checked_add(params, checked_mul(m.inner, state + 1, "parameter count"), "parameter count");  // A, D
    params = checked_add(params, linear_params(m.inner, m.hidden, m.bias), "parameter count");
    if (norms == "weighted") params = checked_add(params, rank + 2 * state, "parameter count");
    cost.params = params;

    ops::add_gemm(cost, layer, p, "in_proj", 1, rows, 2 * m.inner, m.hidden, true, layer.needs_input_grad);
    add_causal_conv_kernels(cost, p, batch, tokens, m.inner, m.conv, "", false);
    ops::add_gemm(cost, layer, p, "x_proj", 1, rows, rank + 2 * state, m.inner, true, true);
    if (norms != "none")
        ops::add_vector(cost, layer, p, Family::norm, "dt_bc_rmsnorm", double(rows) * double(rank + 2 * state), 1, 1, 4,
                        true, state);
    ops::add_gemm(cost, layer, p, "dt_proj", 1, rows, m.inner, rank, true, true);
    ScanShape s;
    s.batch = batch, s.tokens = tokens, s.channels = m.inner, s.state = state, s.gated = true;
    add_scan_kernels(cost, p, s, "", false);
    ops::add_gemm(cost, layer, p, "out_proj", 1, rows, m.hidden, m.inner, true, true);
    cost.macs += double(rows) * (double(m.hidden) * 2.0 * double(m.inner) + double(m.inner) * double(rank + 2 * state) +
                                 double(rank) * double(m.inner) + double(m.inner) * double(m.hidden));
    // mamba_inner_fn (checkpoint_lvl 1, the default) keeps in_proj's output xz, x_proj's output and the scan's
    // output, and runs the convolution and dt_proj again in the backward pass instead of keeping their outputs;
    // autograd keeps the layer's input for in_proj's weight gradient.
    recompute_in_backward(cost, "causal_conv1d");
    recompute_in_backward(cost, "dt_proj");
    // mamba_inner_fn's layout copies (mamba_ssm/ops/selective_scan_interface.py): the scan works on [batch,
    // d_inner, tokens] and the projections on [batch x tokens, d_inner], so einops copies the convolution's
    // output for x_proj and the gated output for out_proj in the forward pass, and in the backward pass the
    // gated output (out_proj's weight gradient), ddelta, the convolution's output gradient and its output again
    // (x_proj's weight gradient): 2 and 4 copies of [batch x tokens, d_inner].
    double inner = double(rows) * double(m.inner), eb = activation_bytes(p);
    for (Phase phase : {Phase::forward, Phase::backward_input}) {
        double copies = phase == Phase::forward ? 2.0 : 4.0;
        Kernel copy = streaming_kernel(Family::elementwise, phase,
                                       phase == Phase::forward ? "layout_copies" : "layout_copies_backward",
                                       vector_precision(p), copies * inner, 0.0, copies * inner * 2.0 * eb);
        cost.kernels.push_back(copy);
    }
    double input_shards = double(ops::int_attr(layer, "saved_input_shards", 1));
    cost.saved_activation_bytes += double(rows) * (double(m.hidden) * matmul_input_bytes(p) / input_shards +
                                                   double(2 * m.inner + rank + 2 * state + m.inner) * activation_bytes(p));
}

// Mamba-2 (mamba_ssm's Mamba2, Hugging Face's Mamba2Mixer): in_proj to z, x, B, C and dt
// (2 d_inner + 2 groups d_state + heads), the causal conv over x, B and C, SSD, the gated RMS norm of
// y * silu(z) (`gated_norm`, d_inner weights), out_proj. A, D and the dt bias per head.
SsdShape mamba2_ssd(const Layer& layer, const MixerShape& m) {
    SsdShape s = read_ssd(layer, m.inner);
    s.batch = layer.input[0], s.tokens = layer.input[1];
    return s;
}

void infer_mamba2(Layer& layer) {
    ops::require_rank(layer, 3, 3);
    mamba2_ssd(layer, read_mixer(layer));
    ops::bool_attr(layer, "gated_norm", true);
    layer.output = layer.input;
}

void cost_mamba2(const Layer& layer, Precision p, LayerCost& cost) {
    MixerShape m = read_mixer(layer);
    SsdShape s = mamba2_ssd(layer, m);
    bool gated_norm = ops::bool_attr(layer, "gated_norm", true);
    std::int64_t rows = checked_mul(s.batch, s.tokens, "tensor size");
    std::int64_t bc = checked_mul(2 * s.groups, s.state, "parameter count");
    std::int64_t conv_channels = checked_add(m.inner, bc, "parameter count");
    std::int64_t in_out = checked_add(checked_add(2 * m.inner, bc, "parameter count"), s.heads, "parameter count");
    std::int64_t params = linear_params(m.hidden, in_out, m.bias);
    params = checked_add(params, checked_mul(conv_channels, m.conv + (m.conv_bias ? 1 : 0), "parameter count"),
                         "parameter count");
    params = checked_add(params, 3 * s.heads, "parameter count");
    if (gated_norm) params = checked_add(params, m.inner, "parameter count");
    params = checked_add(params, linear_params(m.inner, m.hidden, m.bias), "parameter count");
    cost.params = params;

    ops::add_gemm(cost, layer, p, "in_proj", 1, rows, in_out, m.hidden, true, layer.needs_input_grad);
    add_causal_conv_kernels(cost, p, s.batch, s.tokens, conv_channels, m.conv, "", false);
    s.gated = !gated_norm;  // with the gated norm the gate is applied there
    add_ssd_kernels(cost, layer, p, s, "", false);
    if (gated_norm)
        ops::add_vector(cost, layer, p, Family::norm, "gated_rmsnorm", double(rows) * double(m.inner), 2, 1, 13, true,
                        m.inner);
    ops::add_gemm(cost, layer, p, "out_proj", 1, rows, m.hidden, m.inner, true, true);
    cost.macs += double(rows) * (double(m.hidden) * double(in_out) + double(m.inner) * double(m.hidden));
    // mamba_split_conv1d_scan_combined keeps in_proj's output and SSD's output (with the norm's fp32 rstd) and
    // recomputes the convolution and the chunk states in the backward pass; autograd keeps the layer's input.
    recompute_in_backward(cost, "causal_conv1d");
    double input_shards = double(ops::int_attr(layer, "saved_input_shards", 1));
    cost.saved_activation_bytes += double(rows) * (double(m.hidden) * matmul_input_bytes(p) / input_shards +
                                                   double(in_out + m.inner) * activation_bytes(p) + 4.0);
}

std::vector<LinearModule> mamba_modules(const Layer& layer) {
    MixerShape m = read_mixer(layer);
    std::int64_t rows = ops::leading_elements(layer.input);
    std::vector<LinearModule> out;
    if (layer.kind == "mamba") {
        std::int64_t state = ops::int_attr(layer, "d_state"), rank = ops::int_attr(layer, "dt_rank");
        out.push_back({"in", m.hidden, 2 * m.inner, rows, 1, true});
        out.push_back({"x", m.inner, rank + 2 * state, rows, 1, false});
        out.push_back({"dt", rank, m.inner, rows, 1, false});
    } else {
        SsdShape s = mamba2_ssd(layer, m);
        out.push_back({"in", m.hidden, 2 * m.inner + 2 * s.groups * s.state + s.heads, rows, 1, true});
    }
    out.push_back({"out", m.inner, m.hidden, rows, 1, false});
    return out;
}

}  // namespace

// For tests: the hand counts the kernels must add up to.
double selective_scan_reference_flops(std::int64_t batch, std::int64_t tokens, std::int64_t channels,
                                      std::int64_t state, bool gated) {
    ScanShape s;
    s.batch = batch, s.tokens = tokens, s.channels = channels, s.state = state, s.gated = gated;
    return scan_forward_flops(s);
}

double selective_scan_forward_slots(std::int64_t batch, std::int64_t tokens, std::int64_t channels,
                                    std::int64_t state, bool gated) {
    ScanShape s;
    s.batch = batch, s.tokens = tokens, s.channels = channels, s.state = state, s.gated = gated;
    return scan_slots(s, Phase::forward);
}

double ssd_reference_matmul_flops(std::int64_t batch, std::int64_t tokens, std::int64_t heads, std::int64_t head_dim,
                                  std::int64_t state, std::int64_t groups, std::int64_t chunk) {
    SsdShape s;
    s.batch = batch, s.tokens = tokens, s.heads = heads, s.head_dim = head_dim, s.state = state, s.groups = groups;
    s.chunk = chunk;
    return ssd_matmul_flops(s);
}

void register_ssm_ops(OpCatalogue& c) {
    // The scans and the convolution run in the type they receive (custom kernels, not on autocast's lists) and
    // keep their inputs for the backward pass. Standalone they run whole on every tensor-parallel rank, as a bare
    // attention_core; the mixers split d_inner like an MLP's hidden units.
    const OpTraits streaming = OpTraits::of(AutocastClass::follows_input).saving_input();
    c.add({"causal_conv1d",
           "short causal depthwise convolution over the tokens of [batch, tokens, channels] with SiLU fused "
           "(Dao's causal-conv1d, before Mamba's scans): kernel_size (4), bias (true)",
           infer_causal_conv1d, cost_causal_conv1d, streaming});
    c.add({"selective_scan",
           "Mamba's selective scan on [batch, tokens, d_inner], one fused kernel (the state stays in SRAM): d_state, "
           "gated (true: the y * silu(z) gate fused in); parameters A and D",
           infer_selective_scan, cost_selective_scan, streaming});
    c.add({"ssd",
           "Mamba-2's chunked state-space duality on [batch, tokens, heads x head_dim]: head_dim (64), d_state (128), "
           "ssm_groups (1), chunk (256), gated (true); parameters A, D and the dt bias per head",
           infer_ssd, cost_ssd, streaming});
    const OpTraits mixer = OpTraits::of(AutocastClass::half).saving_input().split_by(TensorSplit::hidden_units)
                               .with_linear_modules(mamba_modules);
    c.add({"mamba",
           "Mamba (selective SSM) mixer: intermediate (d_inner), d_state, dt_rank, d_conv (4), conv_bias (true), "
           "bias (false), inner_norms (none | weighted: Jamba's dt/B/C RMS norms | unweighted: Falcon-Mamba's)",
           infer_mamba, cost_mamba, mixer});
    c.add({"mamba2",
           "Mamba-2 (SSD) mixer: intermediate (d_inner), head_dim (64), d_state (128), ssm_groups (1), chunk (256), "
           "d_conv (4), conv_bias (true), bias (false), gated_norm (true: RMS norm of y * silu(z))",
           infer_mamba2, cost_mamba2, mixer});
}

}  // namespace prenet
