// Multi-head attention (MHA, GQA, MQA; causal or bidirectional; self or cross; optional fused "flash" kernel;
// rotary, ALiBi or T5 relative position bias) and DeepSeek's multi-head latent attention (MLA).
#include <algorithm>
#include <cmath>

#include "ops/attention.hpp"

#include "core/checked.hpp"
#include "ops/catalogue.hpp"
#include "ops/op_support.hpp"

namespace prenet {
namespace {

struct Heads {
    std::int64_t hidden, heads, kv_heads, qk_dim, v_dim;
    std::int64_t out;  // the output projection's width: the input's, except Zamba2's shared attention (2 hidden -> hidden)
};

Heads read_heads(const Layer& layer) {
    Heads h;
    h.hidden = layer.input.back();
    h.heads = ops::int_attr(layer, "heads");
    h.kv_heads = ops::int_attr(layer, "kv_heads", h.heads);
    if (h.kv_heads == 0 || h.heads % h.kv_heads)
        ops::fail(layer, "kv_heads " + std::to_string(h.kv_heads) + " must divide heads " + std::to_string(h.heads));
    std::int64_t default_dim = h.hidden / h.heads;
    h.qk_dim = ops::int_attr(layer, "head_dim", default_dim);
    h.v_dim = h.qk_dim;
    if (h.qk_dim == 0) ops::fail(layer, "head_dim must be positive (hidden smaller than heads?)");
    h.out = ops::int_attr(layer, "out_features", h.hidden);
    if (h.out == 0) ops::fail(layer, "field 'out_features' must be positive");
    return h;
}

// Context parallelism (parallel/, ring attention): a layer with `context_shards` c holds 1/c of the sequence
// (its input's tokens) and attends over the keys and values of all c shards, which the ring passes round.
std::int64_t context_shards(const Layer& layer) { return ops::int_attr(layer, "context_shards", 1); }

// Cross-attention reads keys and values from a source of its own width (a diffusion UNet's text states, 768 or
// 2048 wide, against 320-1280 channels): kv_hidden, the query's width unless given.
std::int64_t kv_hidden(const Layer& layer) {
    std::int64_t width = ops::int_attr(layer, "kv_hidden", layer.input.back());
    if (width <= 0) ops::fail(layer, "field 'kv_hidden' must be positive");
    return width;
}

// A layer's `flash_generation`: which generation of fused kernel its `flash` attention runs (AttentionShape).
void check_flash_generation(const Layer& layer) {
    std::int64_t g = ops::int_attr(layer, "flash_generation", 2);
    if (g != 1 && g != 2) ops::fail(layer, "field 'flash_generation' must be 1 (FlashAttention 1, Triton's of 2022) or 2");
}

void infer_attention(Layer& layer) {
    ops::require_rank(layer, 3, 3);
    Heads h = read_heads(layer);
    std::string pos = ops::string_attr(layer, "position", "none");
    if (pos != "none" && pos != "rotary" && pos != "alibi" && pos != "relative")
        ops::fail(layer, "field 'position' must be none, rotary, alibi or relative");
    ops::bool_attr(layer, "causal", false);
    ops::bool_attr(layer, "flash", false);
    check_flash_generation(layer);
    ops::bool_attr(layer, "qk_norm", false);
    ops::bool_attr(layer, "key_bias", true);
    ops::int_attr(layer, "window", 0);
    ops::bool_attr(layer, "chunked", false);
    std::string qk_weights = ops::string_attr(layer, "qk_norm_weights", "head");
    if (qk_weights != "head" && qk_weights != "projection" && qk_weights != "none")
        ops::fail(layer, "field 'qk_norm_weights' must be head, projection or none");
    if (ops::number_attr(layer, "softcap", 0.0) < 0) ops::fail(layer, "field 'softcap' must not be negative");
    ops::int_attr(layer, "kv_tokens", layer.input[1]);
    bool cross = ops::bool_attr(layer, "cross", false) || ops::int_attr(layer, "kv_tokens", layer.input[1]) != layer.input[1];
    if (!cross && (layer.attrs.contains("kv_hidden") || layer.attrs.contains("kv_input_grad")))
        ops::fail(layer, "fields 'kv_hidden' and 'kv_input_grad' describe a cross-attention source (give cross or kv_tokens)");
    kv_hidden(layer);
    ops::bool_attr(layer, "kv_input_grad", true);
    if (context_shards(layer) < 1) ops::fail(layer, "context_shards must be at least 1");
    std::string projections = ops::string_attr(layer, "projections", "fused");
    if (projections != "fused" && projections != "separate")
        ops::fail(layer, "field 'projections' must be fused (one qkv linear) or separate (query, key, value)");
    layer.output = {layer.input[0], layer.input[1], h.out};
}

// The score / softmax / context part shared by every attention variant.
void add_attention_core(LayerCost& cost, const Layer& layer, Precision p, std::int64_t batch, std::int64_t q_len,
                        std::int64_t kv_len, std::int64_t heads, std::int64_t kv_heads, std::int64_t qk_dim,
                        std::int64_t v_dim) {
    bool causal = ops::bool_attr(layer, "causal", false);
    bool flash = ops::bool_attr(layer, "flash", false);
    double dropout = ops::number_attr(layer, "dropout", 0.0);
    double bh = double(batch) * double(heads), scores = bh * double(q_len) * double(kv_len);
    double eb = activation_bytes(p);
    if (flash) {
        AttentionShape shape;
        shape.batch = batch, shape.heads = heads, shape.kv_heads = kv_heads, shape.q_len = q_len;
        shape.kv_len = kv_len, shape.qk_dim = qk_dim, shape.v_dim = v_dim, shape.causal = causal;
        shape.window = ops::int_attr(layer, "window", 0);
        shape.chunked = ops::bool_attr(layer, "chunked", false);
        shape.generation = int(ops::int_attr(layer, "flash_generation", 2));
        FlashAttentionKernels fa = flash_attention_kernels(shape, p);
        cost.forward_flops += fa.forward.flops;
        cost.forward_bytes_read += fa.forward_bytes_read;
        cost.forward_bytes_written += fa.forward_bytes_written;
        cost.backward_input_flops += fa.backward.flops;
        cost.kernels.push_back(fa.forward);
        cost.kernels.push_back(fa.backward);
        cost.saved_activation_bytes += fa.saved_bytes;
        return;
    }
    ops::add_gemm(cost, layer, p, "attention_scores", batch * heads, q_len, kv_len, qk_dim, false, true);
    // Unfused ("eager") attention scales the scores and applies the mask as two passes of their own. Backward,
    // the scale's gradient is one more scaling pass (read dy, write dx); adding a constant mask has none.
    ops::add_vector(cost, layer, p, Family::elementwise, "attention_scale", scores, 1.0, 1.0, 1.0);
    cost.kernels.back().bytes = 2.0 * scores * eb;
    ops::add_vector(cost, layer, p, Family::elementwise, "attention_mask", scores, 1.0, 1.0, 1.0, false);
    // Gemma 2's logit soft-capping, cap x tanh(scores / cap): three more passes over the scores (eager only;
    // FlashAttention's softcap argument fuses it).
    if (ops::number_attr(layer, "softcap", 0.0) > 0)
        ops::add_vector(cost, layer, p, Family::elementwise, "attention_softcap", scores, 1.0, 1.0, 10.0);
    // Under torch.autocast the softmax (and the dropout after it) run in fp32; the context product then casts
    // the probabilities back to half precision and keeps that copy for its backward.
    bool fp32_softmax = ops::bool_attr(layer, "softmax_fp32", false) && eb < 4.0;
    Precision sp = fp32_softmax ? Precision::fp32 : p;
    ops::add_vector(cost, layer, sp, Family::softmax, "softmax", scores, 1.0, 1.0, 5.0, true, kv_len);
    if (dropout > 0) {
        ops::add_dropout(cost, layer, sp, "attention_dropout", scores);
    }
    if (fp32_softmax) {  // reads 4 bytes (two half-precision units) and writes 2 per element; back the reverse
        ops::add_vector(cost, layer, p, Family::elementwise, "probabilities_cast", scores, 2.0, 1.0, 0.0);
        cost.kernels.back().bytes = scores * (eb + 4.0);
    }
    // The softmax keeps its output; the context product keeps its input, which is a tensor of its own when
    // dropout or a cast came in between.
    double context_input = (dropout > 0 || fp32_softmax) ? scores * eb : 0.0;
    ops::add_gemm(cost, layer, p, "attention_context", batch * heads, q_len, v_dim, kv_len, false, true);
    cost.saved_activation_bytes += scores * activation_bytes(sp) + context_input +
                                   bh * (double(q_len) * qk_dim + double(kv_len) * (qk_dim + v_dim)) * eb;  // q,k,v
}

}  // namespace

FlashAttentionKernels flash_attention_kernels(const AttentionShape& s, Precision p) {
    double b = double(s.batch), bh = b * double(s.heads), bkv = b * double(s.kv_heads);
    double q = double(s.q_len), kv = double(s.kv_len), dqk = double(s.qk_dim), dv = double(s.v_dim);
    double eb = activation_bytes(p);
    // Causal masking: the kernel skips the tiles above the diagonal. Counted exactly, as the unmasked score
    // elements (the mask aligned to the last key, as SDPA's and FlashAttention-2's is): query i of q sees
    // kv - q + i keys, q x kv - q (q - 1) / 2 in all, (seq + 1) / (2 seq) of the full product in self-attention.
    // Not 0.5: at short sequences the diagonal is a large share (0.53 at 16 tokens). Tiles on the diagonal
    // are computed whole; that granularity is left to the fitted efficiency.
    double useful = 1.0;
    if (s.causal && q > 0 && kv > 0)
        useful = q <= kv ? 1.0 - (q - 1.0) / (2.0 * kv) : (kv + 1.0) / (2.0 * q);
    // A sliding window (FlashAttention-2's window_size): query i of a causal self-attention sees min(i + 1, w)
    // keys, so the kernel skips the tiles outside the band. Bidirectional windows see up to 2w - 1 keys.
    if (s.window > 0 && q > 0 && kv > 0) {
        double w = double(s.window), seen;
        if (s.chunked) {
            // Chunked attention (Llama 4): the sequence cut into chunks of w, each query seeing the keys of its own
            // chunk up to itself (causal) or all of them: about half the work of a sliding window of w.
            double full = std::floor(q / w), rest = q - full * w;
            seen = s.causal ? full * w * (w + 1.0) / 2.0 + rest * (rest + 1.0) / 2.0
                            : full * w * std::min(kv, w) + rest * std::min(kv, rest);
        } else if (s.causal) {
            seen = q <= w ? q * (q + 1.0) / 2.0 : w * (w + 1.0) / 2.0 + (q - w) * w;
        } else {
            seen = q * std::min(kv, 2.0 * w - 1.0);
        }
        useful = std::min(useful, seen / (q * kv));
    }
    double scores = bh * q * kv * useful;
    FlashAttentionKernels out;
    Kernel& f = out.forward;
    f.family = Family::attention;
    f.op = "flash_attention";
    f.precision = p == Precision::fp8 ? Precision::bf16 : p;  // no fp8 attention in SDPA: it runs in bf16
    f.attention = s;
    // The work decomposition of FlashAttention-2: one thread block per (batch x head, 128-query tile), each
    // producing a q-tile x v_dim output by streaming all kv_len keys: a GEMM view with m = queries, n = the
    // value head dim, k = keys (the features' tiles and waves count those blocks).
    f.batch = s.batch * s.heads;
    f.m = s.q_len;
    f.n = s.v_dim;
    f.k = s.kv_len;
    f.flops = 2.0 * scores * (dqk + dv);  // q k^T and p v
    // K and V are read once per key/value head (GQA/MQA share them across the query heads of a group).
    out.forward_bytes_read = (bh * q * dqk + bkv * kv * (dqk + dv)) * eb;
    out.forward_bytes_written = bh * q * dv * eb + bh * q * 4.0;  // the output and the fp32 log-sum-exp
    f.bytes = out.forward_bytes_read + out.forward_bytes_written;
    // FlashAttention-2's backward recomputes the scores: 5 matmuls (q k^T again, dV, dP, dQ, dK) against the
    // forward's 2, so 2.5x the FLOPs. It reads q, k, v, the output, its gradient and the log-sum-exp and writes
    // dq, dk, dv.
    Kernel& g = out.backward;
    g = f;
    g.phase = Phase::backward_input;
    g.op = "flash_attention_backward";
    g.flops = 2.5 * f.flops;  // flash_backward_recompute_flops takes the q k^T share back out
    g.bytes = (2.0 * bh * q * (dqk + dv) + 2.0 * bkv * kv * (dqk + dv)) * eb + bh * q * 4.0;
    out.saved_bytes = (bh * q * (dqk + dv) + bkv * kv * (dqk + dv)) * eb + bh * q * 4.0;
    return out;
}

double flash_generation_slowdown(const Kernel& k) {
    if (k.family != Family::attention || !k.attention || k.attention->generation != 1) return 1.0;
    // FlashAttention-2 against its first generation on the A100, as its author published them: FlashAttention
    // "reaching only 25-40% of the theoretical maximum FLOPs/s (e.g. up to 124 TFLOPs/s on A100 GPU)",
    // FlashAttention-2 "about 2x faster than its previous version, reaching up to 230 TFLOPs/s on A100 GPUs"
    // (T. Dao, "FlashAttention-2: Faster Attention with Better Parallelism and Work Partitioning", blog post of
    // 2023-07-17 and arXiv:2307.08691). The Triton FlashAttention of 2022 is timed as the first generation: its
    // header (flash_attn/flash_attn_triton.py) says "Overall Triton forward + backward is slightly slower than CUDA
    // forward + backward" (the CUDA kernel being FlashAttention 1). One ratio for the forward and the backward;
    // no per-pass figures were published.
    return 230.0 / 124.0;
}

double flash_backward_recompute_flops(const Kernel& k) {
    if (k.op != "flash_attention_backward" || !k.attention) return 0.0;
    // backward = 2.5 x forward = 2.5 x 2 x scores x (qk_dim + v_dim); the recomputed q k^T is 2 x scores x qk_dim.
    double qk = double(k.attention->qk_dim), v = double(k.attention->v_dim);
    return k.flops / 2.5 * qk / (qk + v);
}

namespace {

// The output projection keeps its input, the attention's output O, for its weight gradient. The fused kernel
// keeps O for its own backward (FlashAttentionKernels::saved_bytes): one tensor, counted there, unless the
// projection keeps a copy of its own (fp8: its 1-byte cast beside the kernel's 16-bit O). Eager attention's
// context product does not keep its output, so there the projection owns it.
double output_projection_input_bytes(const Layer& layer, Precision p, double elements) {
    bool shared_with_kernel = ops::bool_attr(layer, "flash", false) && matmul_input_bytes(p) == activation_bytes(p);
    return shared_with_kernel ? 0.0 : elements * matmul_input_bytes(p);
}

void cost_attention(const Layer& layer, Precision p, LayerCost& cost) {
    Heads h = read_heads(layer);
    std::int64_t batch = layer.input[0], q_len = layer.input[1];
    std::int64_t kv_len = ops::int_attr(layer, "kv_tokens", q_len);
    bool bias = ops::bool_attr(layer, "bias", true);
    bool out_bias = ops::bool_attr(layer, "out_bias", bias);
    // Each factor is within limits::dimension (ModelBuilder); the sums of products can still pass 2^63.
    std::int64_t q_out = checked_mul(h.heads, h.qk_dim, "attention projection size"),
                 kv_out = checked_mul(h.kv_heads, checked_add(h.qk_dim, h.v_dim), "attention projection size");
    checked_add(q_out, kv_out, "attention projection size");
    std::int64_t rows = checked_mul(batch, q_len, "attention rows"), kv_rows = checked_mul(batch, kv_len, "attention rows");
    auto params = [&](std::int64_t in, std::int64_t out, bool b) {
        return checked_add(checked_mul(in, out, "parameter count"), b ? out : 0, "parameter count");
    };
    bool cross = kv_len != q_len || ops::bool_attr(layer, "cross", false);
    std::int64_t source = cross ? kv_hidden(layer) : h.hidden;
    cost.params = checked_add(checked_add(params(h.hidden, q_out, bias), params(source, kv_out, bias), "parameter count"),
                              params(h.heads * h.v_dim, h.out, out_bias), "parameter count");
    // Whisper's key projection has no bias while query and value have one.
    bool key_bias = bias && ops::bool_attr(layer, "key_bias", true);
    if (bias && !key_bias) cost.params -= h.kv_heads * h.qk_dim;
    // QK-norm: an RMSNorm over each query and key head with one weight of head_dim each (Qwen3, Gemma 3), one over
    // the whole query and key projections with a weight each as wide (OLMo 2), or Llama 4's L2 norm, weightless.
    if (ops::bool_attr(layer, "qk_norm", false)) {
        std::string weights = ops::string_attr(layer, "qk_norm_weights", "head");
        std::int64_t norm_params = weights == "head" ? 2 * h.qk_dim
                                   : weights == "projection" ? q_out + h.kv_heads * h.qk_dim : 0;
        cost.params = checked_add(cost.params, norm_params, "parameter count");
        ops::add_vector(cost, layer, p, Family::norm, "qk_norm", double(rows) * (q_out + h.kv_heads * h.qk_dim), 1.0,
                        1.0, 4.0);
    }
    if (cross) {
        // Queries from the decoder, keys and values from the encoder output (no gradient when that source is a
        // frozen encoder's: kv_input_grad false).
        ops::add_gemm(cost, layer, p, "q_proj", 1, rows, q_out, h.hidden, true, layer.needs_input_grad);
        ops::add_gemm(cost, layer, p, "kv_proj", 1, kv_rows, kv_out, source, true,
                      ops::bool_attr(layer, "kv_input_grad", true));
        if (bias) {
            ops::add_bias_grad(cost, p, "q_proj", double(rows), double(q_out));
            ops::add_bias_grad(cost, p, "kv_proj", double(kv_rows), double(kv_out));
        }
    } else if (ops::string_attr(layer, "projections", "fused") == "separate") {
        // Three linears read the input (Hugging Face's BERT, LLaMA, OPT, T5, ViT).
        ops::add_gemm(cost, layer, p, "q_proj", 1, rows, q_out, h.hidden, true, layer.needs_input_grad);
        ops::add_gemm(cost, layer, p, "k_proj", 1, rows, h.kv_heads * h.qk_dim, h.hidden, true, layer.needs_input_grad);
        ops::add_gemm(cost, layer, p, "v_proj", 1, rows, h.kv_heads * h.v_dim, h.hidden, true, layer.needs_input_grad);
        cost.input_uses = 3;
        if (bias) {
            ops::add_bias_grad(cost, p, "q_proj", double(rows), double(q_out));
            ops::add_bias_grad(cost, p, "k_proj", double(rows), double(h.kv_heads * h.qk_dim));
            ops::add_bias_grad(cost, p, "v_proj", double(rows), double(h.kv_heads * h.v_dim));
        }
    } else {
        ops::add_gemm(cost, layer, p, "qkv_proj", 1, rows, q_out + kv_out, h.hidden, true, layer.needs_input_grad);
        if (bias) ops::add_bias_grad(cost, p, "qkv_proj", double(rows), double(q_out + kv_out));
    }
    cost.macs += double(rows) * h.hidden * q_out + double(kv_rows) * source * kv_out;
    if (ops::string_attr(layer, "position", "none") == "rotary")
        ops::add_vector(cost, layer, p, Family::elementwise, "rotary", double(rows) * (q_out + h.kv_heads * h.qk_dim),
                        1.0, 1.0, 6.0);
    add_attention_core(cost, layer, p, batch, q_len, kv_len * context_shards(layer), h.heads, h.kv_heads, h.qk_dim,
                       h.v_dim);
    ops::add_gemm(cost, layer, p, "out_proj", 1, rows, h.out, h.heads * h.v_dim, true, true);
    if (out_bias) ops::add_bias_grad(cost, p, "out_proj", double(rows), double(h.out));
    cost.macs += double(rows) * h.heads * h.v_dim * h.out;
    // Under sequence parallelism Megatron keeps the input as its 1/tp shard and gathers it again for the
    // weight gradient (saved_input_shards, parallel/tensor_parallel.cpp).
    double input_shards = double(ops::int_attr(layer, "saved_input_shards", 1));
    cost.saved_activation_bytes += double(rows) * h.hidden * matmul_input_bytes(p) / input_shards +
                                   output_projection_input_bytes(layer, p, double(rows) * h.heads * h.v_dim);
}

// The projections PEFT can adapt: query, key, value (one fused module when the layer has one qkv linear; in
// cross-attention keys and values read the encoder's output) and the output projection.
std::vector<LinearModule> attention_modules(const Layer& layer) {
    Heads h = read_heads(layer);
    std::int64_t batch = layer.input[0], q_len = layer.input[1];
    std::int64_t kv_len = ops::int_attr(layer, "kv_tokens", q_len);
    std::int64_t rows = batch * q_len, kv_rows = batch * kv_len;
    std::int64_t q_out = h.heads * h.qk_dim, k_out = h.kv_heads * h.qk_dim, v_out = h.kv_heads * h.v_dim;
    std::vector<LinearModule> m;
    bool cross = kv_len != q_len || ops::bool_attr(layer, "cross", false);
    if (cross) {
        std::int64_t source = kv_hidden(layer);
        m = {{"q", h.hidden, q_out, rows, 1, true}, {"k", source, k_out, kv_rows, 1, false},
             {"v", source, v_out, kv_rows, 1, false}};
    } else if (ops::string_attr(layer, "projections", "fused") == "separate") {
        m = {{"q", h.hidden, q_out, rows, 1, true}, {"k", h.hidden, k_out, rows, 1, true},
             {"v", h.hidden, v_out, rows, 1, true}};
    } else {
        m = {{"qkv", h.hidden, q_out + k_out + v_out, rows, 1, true}};
    }
    m.push_back({"o", h.heads * h.v_dim, h.out, rows, 1, false});
    return m;
}

// Multi-head latent attention: queries and keys/values go through low-rank bottlenecks with their own norms.
// q_lora_rank is the one that may be 0 (or absent): DeepSeek-V2-Lite's null, one full-rank q_proj.
std::int64_t q_lora_rank(const Layer& layer) { return ops::int_attr(layer, "q_lora_rank", 0); }

void infer_mla(Layer& layer) {
    ops::require_rank(layer, 3, 3);
    for (const char* key : {"heads", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
        ops::int_attr(layer, key);
    q_lora_rank(layer);
    layer.output = layer.input;
}

void cost_mla(const Layer& layer, Precision p, LayerCost& cost) {
    std::int64_t hidden = layer.input.back(), heads = ops::int_attr(layer, "heads");
    std::int64_t q_rank = q_lora_rank(layer), kv_rank = ops::int_attr(layer, "kv_lora_rank");
    std::int64_t nope = ops::int_attr(layer, "qk_nope_head_dim"), rope = ops::int_attr(layer, "qk_rope_head_dim");
    std::int64_t v_dim = ops::int_attr(layer, "v_head_dim");
    std::int64_t batch = layer.input[0], tokens = layer.input[1], rows = batch * tokens;
    struct Proj { const char* name; std::int64_t in, out; };
    std::int64_t q_heads_out = checked_mul(heads, nope + rope, "attention projection size");
    // q_lora_rank 0 (DeepSeek-V2-Lite): the queries come from one full-rank q_proj, with no bottleneck norm.
    const Proj projections[] = {{q_rank ? "q_a_proj" : "q_proj", hidden, q_rank ? q_rank : q_heads_out},
                                {"q_b_proj", q_rank, q_rank ? q_heads_out : 0},
                                {"kv_a_proj", hidden, kv_rank + rope},
                                {"kv_b_proj", kv_rank, checked_mul(heads, nope + v_dim, "attention projection size")}};
    std::int64_t params = q_rank + kv_rank;  // the two bottleneck RMSNorm weights
    for (const auto& proj : projections) {
        if (proj.in == 0 || proj.out == 0) continue;
        params = checked_add(params, checked_mul(proj.in, proj.out, "parameter count"), "parameter count");
        ops::add_gemm(cost, layer, p, proj.name, 1, rows, proj.out, proj.in, true, true);
        cost.macs += double(rows) * proj.in * proj.out;
    }
    ops::add_vector(cost, layer, p, Family::norm, "bottleneck_rmsnorm", double(rows) * (q_rank + kv_rank), 1, 1, 4);
    // kv_b_proj expands the latent into keys and values for every head: as many key/value heads as query heads.
    add_attention_core(cost, layer, p, batch, tokens, tokens * context_shards(layer), heads, heads, nope + rope, v_dim);
    ops::add_gemm(cost, layer, p, "out_proj", 1, rows, hidden, heads * v_dim, true, true);
    cost.macs += double(rows) * heads * v_dim * hidden;
    cost.params = checked_add(params, checked_mul(heads * v_dim, hidden, "parameter count"), "parameter count");
    double input_shards = double(ops::int_attr(layer, "saved_input_shards", 1));  // as cost_attention's
    cost.saved_activation_bytes += double(rows) * (double(hidden) / input_shards + double(q_rank + kv_rank)) *
                                       matmul_input_bytes(p) +
                                   output_projection_input_bytes(layer, p, double(rows) * heads * v_dim);
}

// MLA's projections: the query bottleneck (target q), the key/value bottleneck (target kv: k or v) and the output.
std::vector<LinearModule> mla_modules(const Layer& layer) {
    std::int64_t hidden = layer.input.back(), heads = ops::int_attr(layer, "heads");
    std::int64_t q_rank = q_lora_rank(layer), kv_rank = ops::int_attr(layer, "kv_lora_rank");
    std::int64_t nope = ops::int_attr(layer, "qk_nope_head_dim"), rope = ops::int_attr(layer, "qk_rope_head_dim");
    std::int64_t v_dim = ops::int_attr(layer, "v_head_dim"), rows = layer.input[0] * layer.input[1];
    std::vector<LinearModule> m;
    if (q_rank) m = {{"q", hidden, q_rank, rows, 1, true}, {"q", q_rank, heads * (nope + rope), rows, 1, false}};
    else m = {{"q", hidden, heads * (nope + rope), rows, 1, true}};  // q_proj, as cost_mla counts it
    m.insert(m.end(), {{"kv", hidden, kv_rank + rope, rows, 1, true},
                       {"kv", kv_rank, heads * (nope + v_dim), rows, 1, false},
                       {"o", heads * v_dim, hidden, rows, 1, false}});
    return m;
}

// T5's bucketed relative position bias: a learned scalar per (bucket, head), expanded to [heads, q, kv].
void infer_relative_bias(Layer& layer) {
    ops::require_rank(layer, 3, 3);
    ops::int_attr(layer, "heads");
    ops::int_attr(layer, "buckets", 32);
    layer.output = layer.input;
}

void cost_relative_bias(const Layer& layer, Precision p, LayerCost& cost) {
    std::int64_t heads = ops::int_attr(layer, "heads"), tokens = layer.input[1];
    cost.params = checked_mul(ops::int_attr(layer, "buckets", 32), heads, "parameter count");
    ops::add_vector(cost, layer, p, Family::gather, "relative_position_bias", double(heads) * tokens * tokens, 0.0,
                    1.0, 1.0, false);
}

}  // namespace

bool is_attention_core(const Kernel& k) {
    static const char* const core[] = {"attention_scores", "attention_scale", "attention_mask", "softmax",
                                        "attention_dropout", "probabilities_cast", "attention_context",
                                        "flash_attention", "flash_attention_backward"};
    for (const char* op : core)
        if (k.op == op) return true;
    return false;
}

namespace {

// Scaled dot-product attention alone, on queries [batch, tokens, heads x head_dim] whose projections are layers
// of their own (an imported graph's Attention or MultiHeadAttention op).
void infer_attention_core(Layer& layer) {
    ops::require_rank(layer, 3, 3);
    std::int64_t heads = ops::int_attr(layer, "heads"), kv_heads = ops::int_attr(layer, "kv_heads", heads);
    if (kv_heads == 0 || heads % kv_heads)
        ops::fail(layer, "kv_heads " + std::to_string(kv_heads) + " must divide heads " + std::to_string(heads));
    if (layer.input.back() % heads) ops::fail(layer, "heads must divide the query width " + to_string(layer.input));
    std::int64_t v_dim = ops::int_attr(layer, "v_head_dim", layer.input.back() / heads);
    ops::int_attr(layer, "kv_tokens", layer.input[1]);
    ops::bool_attr(layer, "causal", false);
    ops::bool_attr(layer, "flash", false);
    check_flash_generation(layer);
    layer.output = {layer.input[0], layer.input[1], checked_mul(heads, v_dim, "attention width")};
}

void cost_attention_core(const Layer& layer, Precision p, LayerCost& cost) {
    std::int64_t heads = ops::int_attr(layer, "heads"), kv_heads = ops::int_attr(layer, "kv_heads", heads);
    std::int64_t qk_dim = layer.input.back() / heads, v_dim = layer.output.back() / heads;
    add_attention_core(cost, layer, p, layer.input[0], layer.input[1], ops::int_attr(layer, "kv_tokens", layer.input[1]),
                       heads, kv_heads, qk_dim, v_dim);
}

}  // namespace

void register_attention_ops(OpCatalogue& c) {
    // The projections run in half precision under autocast and keep their input; the softmax between them is
    // on autocast's fp32 list.
    const OpTraits attention = OpTraits::of(AutocastClass::half).saving_input().with_fp32_softmax_under_autocast()
                                  .split_by(TensorSplit::heads);
    c.add({"attention",
           "multi-head attention on [batch, tokens, hidden]: heads, kv_heads (= heads; fewer is GQA, 1 is MQA), "
           "head_dim (hidden / heads), causal (false), flash (absent: the requested --attention, flash by default), bias (true), out_bias (= bias), position "
           "(none | rotary | alibi | relative), dropout (0), kv_tokens and cross (cross-attention source length), "
           "projections (fused: one qkv linear | separate: query, key and value linears), kv_hidden (= hidden: "
           "the cross-attention source's width), kv_input_grad (true: the source needs a gradient), context_shards (1: context "
           "parallelism, the sequence shards whose keys and values this shard attends to), qk_norm (false: RMSNorm "
           "per query and key head), qk_norm_weights (head: one weight per head dim | projection: one over all heads, "
           "OLMo 2 | none: Llama 4's L2 norm), key_bias (= bias; Whisper's key projection has none), window (0: sliding-window "
           "attention over that many keys), chunked (false: the window is a fixed chunk, Llama 4), softcap (0: Gemma 2's "
           "logit soft-capping), out_features (= hidden: the output projection's width; Zamba2's shared attention reads "
           "2 x hidden and writes hidden)",
           infer_attention, cost_attention, OpTraits(attention).with_linear_modules(attention_modules)});
    c.add({"mla_attention",
           "multi-head latent attention (DeepSeek-V2/V3): heads, q_lora_rank (0: a full-rank q_proj), kv_lora_rank, qk_nope_head_dim, "
           "qk_rope_head_dim, v_head_dim, causal, flash",
           infer_mla, cost_mla, OpTraits(attention).with_linear_modules(mla_modules)});
    c.add({"attention_core",
           "scaled dot-product attention without projections on queries [batch, tokens, heads x head_dim]: heads, "
           "kv_heads (= heads), v_head_dim (= head_dim), kv_tokens (= tokens), causal (false), flash (false)",
           infer_attention_core, cost_attention_core,
           OpTraits::of(AutocastClass::half).saving_input().with_fp32_softmax_under_autocast()});
    c.add({"relative_position_bias", "T5 relative position bias shared by a stack: heads, buckets (32)",
           infer_relative_bias, cost_relative_bias, OpTraits::of(AutocastClass::fp32_output)});
}

}  // namespace prenet
