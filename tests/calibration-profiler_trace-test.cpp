// calibration/profiler_trace.hpp: GPU kernels of a PyTorch profiler trace by family, per profiled step.
#include "calibration/profiler_trace.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace prenet {
namespace {

using nlohmann::json;

json kernel(const std::string& name, double us) {
    return {{"ph", "X"}, {"cat", "kernel"}, {"name", name}, {"ts", 0}, {"dur", us}};
}

TEST(ProfilerTrace, KernelNamesFindTheirFamilies) {
    EXPECT_EQ(kernel_family_from_name("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn"), Family::gemm);
    EXPECT_EQ(kernel_family_from_name("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"), Family::gemm);
    EXPECT_EQ(kernel_family_from_name("sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc"), Family::conv);
    EXPECT_EQ(kernel_family_from_name("flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>"), Family::attention);
    EXPECT_EQ(kernel_family_from_name("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float>"),
              Family::norm);
    EXPECT_EQ(kernel_family_from_name("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>"),
              Family::softmax);
    EXPECT_EQ(kernel_family_from_name("void at::native::multi_tensor_apply_kernel<FusedAdamMathFunctor>"),
              Family::optimizer);
    EXPECT_EQ(kernel_family_from_name("void at::native::vectorized_elementwise_kernel<4, GeluCUDAKernelImpl>"),
              Family::elementwise);
    EXPECT_EQ(kernel_family_from_name("nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>"), Family::loss);
    EXPECT_EQ(kernel_family_from_name("indexSelectLargeIndex<float, long, unsigned int, 2, 2, -2, true>"), Family::gather);
    EXPECT_EQ(kernel_family_from_name("mystery_kernel_v2"), std::nullopt);
}

TEST(ProfilerTrace, SumsPerFamilyPerProfiledStep) {
    json events = json::array({kernel("ampere_sgemm_128x64_tn", 3000), kernel("ampere_sgemm_128x64_nn", 1000),
                                kernel("vectorized_layer_norm_kernel", 400), kernel("mystery_kernel_v2", 200),
                                {{"ph", "X"}, {"cat", "cpu_op"}, {"name", "aten::mm"}, {"dur", 99999}},
                                {{"ph", "X"}, {"cat", "user_annotation"}, {"name", "ProfilerStep#3"}, {"dur", 1}},
                                {{"ph", "X"}, {"cat", "user_annotation"}, {"name", "ProfilerStep#4"}, {"dur", 1}}});
    ProfiledKernels k = read_profiler_trace({{"traceEvents", events}}, "row 1");
    EXPECT_DOUBLE_EQ(k.steps, 2.0);
    EXPECT_EQ(k.kernels, 4);
    EXPECT_EQ(k.unrecognised, 1);
    EXPECT_DOUBLE_EQ(k.ms_per_step.at(Family::gemm), 2.0);  // 4000 us over 2 steps
    EXPECT_DOUBLE_EQ(k.ms_per_step.at(Family::norm), 0.2);
    EXPECT_DOUBLE_EQ(k.ms_per_step.at(Family::elementwise), 0.1);  // the unrecognised kernel
}

// A CPU operator event as torch.profiler records it with record_shapes=True.
json cpu_op(const std::string& name, std::int64_t id, const json& dims, const json& types, const json& concrete) {
    return {{"ph", "X"},
            {"cat", "cpu_op"},
            {"name", name},
            {"dur", 5},
            {"args", {{"External id", id}, {"Input Dims", dims}, {"Input type", types}, {"Concrete Inputs", concrete}}}};
}

json launched(const std::string& name, double us, std::int64_t id) {
    json k = kernel(name, us);
    k["args"] = {{"External id", id}, {"correlation", id + 1000}};
    return k;
}

TEST(ProfilerTrace, OperatorShapesNameTheirKernels) {
    const json none = json::array();
    auto gemm = shaped_operator_kernels("aten::addmm", {{4096}, {8192, 4096}, {4096, 11008}},
                                        {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16"}, none);
    ASSERT_TRUE(gemm);
    EXPECT_EQ(gemm->precision, Precision::bf16);
    ASSERT_EQ(gemm->kernels.size(), 1u);
    EXPECT_EQ(gemm->kernels[0].op, "gemm");
    EXPECT_EQ(gemm->kernels[0].dims, (DimMap{{"m", 8192}, {"n", 11008}, {"k", 4096}}));
    auto bmm = shaped_operator_kernels("aten::bmm", {{32, 2048, 128}, {32, 128, 2048}}, {"c10::Half", "c10::Half"}, none);
    ASSERT_TRUE(bmm);
    EXPECT_EQ(bmm->precision, Precision::fp16);
    EXPECT_EQ(bmm->kernels[0].dims, (DimMap{{"b", 32}, {"m", 2048}, {"n", 2048}, {"k", 128}}));
    // Mismatched inner dimensions are not a product PreNeT can time.
    EXPECT_FALSE(shaped_operator_kernels("aten::mm", {{64, 32}, {16, 8}}, {"float", "float"}, none));

    auto norm = shaped_operator_kernels("aten::native_layer_norm", {{4, 2048, 4096}, {4096}, {4096}, {}},
                                        {"float", "float", "float", "Scalar"}, none);
    ASSERT_TRUE(norm);
    EXPECT_EQ(norm->kernels[0].op, "ln");
    EXPECT_EQ(norm->kernels[0].dims, (DimMap{{"b", 8192}, {"h", 4096}}));
    // A softmax over the last dimension only, and only where the trace says which.
    EXPECT_TRUE(shaped_operator_kernels("aten::_softmax", {{8, 16, 128}, {}, {}}, {"float", "Scalar", "Scalar"},
                                        {"", "-1", "False"}));
    EXPECT_FALSE(shaped_operator_kernels("aten::_softmax", {{8, 16, 128}, {}, {}}, {"float", "Scalar", "Scalar"},
                                         {"", "1", "False"}));
    EXPECT_FALSE(shaped_operator_kernels("aten::_softmax", {{8, 16, 128}, {}, {}}, {"float", "Scalar", "Scalar"}, none));
    // Element-wise: same shapes, or a scalar operand; broadcasting is not the kernel the row op times.
    auto add = shaped_operator_kernels("aten::add_", {{4, 512}, {4, 512}, {}}, {"float", "float", "Scalar"}, none);
    ASSERT_TRUE(add);
    EXPECT_EQ(add->kernels[0].op, "add");
    auto scaled = shaped_operator_kernels("aten::mul", {{4, 512}, json::array()}, {"float", "Scalar"}, none);
    ASSERT_TRUE(scaled);
    EXPECT_EQ(scaled->kernels[0].op, "mulu");
    EXPECT_FALSE(shaped_operator_kernels("aten::add", {{4, 512}, {512}, {}}, {"float", "float", "Scalar"}, none));
    EXPECT_FALSE(shaped_operator_kernels("aten::mm", {{64, 32}, {32, 8}}, {"long int", "long int"}, none));
    EXPECT_FALSE(shaped_operator_kernels("aten::embedding", {{50257, 768}, {4, 512}}, {"float", "long int"}, none));
}

TEST(ProfilerTrace, ConvolutionAndAttentionReadTheirScalarArguments) {
    // cudnn_convolution(self, weight, padding, stride, dilation, groups, ...)
    auto conv = shaped_operator_kernels("aten::cudnn_convolution", {{32, 64, 56, 56}, {128, 64, 3, 3}, {}, {}, {}, {}},
                                        {"c10::Half", "c10::Half", "ScalarList", "ScalarList", "ScalarList", "Scalar"},
                                        {"", "", "[1, 1]", "[2, 2]", "[1, 1]", "1"});
    ASSERT_TRUE(conv);
    EXPECT_EQ(conv->kernels[0].op, "conv2d");
    EXPECT_EQ(conv->kernels[0].dims.at("stride_h"), 2);
    EXPECT_EQ(conv->kernels[0].dims.at("pad_w"), 1);
    EXPECT_EQ(conv->kernels[0].dims.at("k"), 128);
    // Arguments that are not what the schema says, and shapes the kernel table refuses, are not matched.
    EXPECT_FALSE(shaped_operator_kernels("aten::cudnn_convolution", {{32, 64, 56, 56}, {128, 64, 3, 3}},
                                         {"float", "float"}, {"", "", "[1, 1]", "[--2, 2]", "[1, 1]", "1"}));
    EXPECT_FALSE(shaped_operator_kernels("aten::cudnn_convolution", {{32, 64, 2, 2}, {128, 64, 7, 7}},
                                         {"float", "float"}, {"", "", "[0, 0]", "[1, 1]", "[1, 1]", "1"}));
    EXPECT_FALSE(shaped_operator_kernels("aten::mm", {{64, std::int64_t(4e15)}, {std::int64_t(4e15), 8}}, {"float", "float"}, json::array()));
    // Grouped (depth-wise) convolutions are not the kernel the conv2d rows time.
    EXPECT_FALSE(shaped_operator_kernels("aten::cudnn_convolution", {{32, 64, 56, 56}, {64, 1, 3, 3}},
                                         {"float", "float"}, {"", "", "[1, 1]", "[1, 1]", "[1, 1]", "64"}));
    // convolution_backward: the data and weight gradients the output mask asks for.
    json bwd_concrete = {"", "", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1", "[False, True, True]"};
    auto bwd = shaped_operator_kernels("aten::convolution_backward",
                                       {{32, 128, 56, 56}, {32, 64, 56, 56}, {128, 64, 1, 1}}, {"float", "float", "float"},
                                       bwd_concrete);
    ASSERT_TRUE(bwd);
    ASSERT_EQ(bwd->kernels.size(), 1u);  // the first layer: no data gradient
    EXPECT_EQ(bwd->kernels[0].op, "conv2d_grad_weight");
    bwd_concrete[10] = "[True, True, False]";
    bwd = shaped_operator_kernels("aten::convolution_backward", {{32, 128, 56, 56}, {32, 64, 56, 56}, {128, 64, 1, 1}},
                                  {"float", "float", "float"}, bwd_concrete);
    ASSERT_TRUE(bwd);
    ASSERT_EQ(bwd->kernels.size(), 2u);
    EXPECT_EQ(bwd->kernels[0].op, "conv2d_grad_input");

    // _flash_attention_forward(query [b, seq, heads, d], key, value, cum_seq_q, cum_seq_k, max_q, max_k,
    // dropout_p, is_causal, ...): grouped-query attention, causal.
    json q = {2, 4096, 32, 128}, kv = {2, 4096, 8, 128};
    auto fwd = shaped_operator_kernels("aten::_flash_attention_forward", {q, kv, kv, {}, {}, {}, {}, {}, {}, {}},
                                       {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16"},
                                       {"", "", "", "", "", "4096", "4096", "0.", "True", "False"});
    ASSERT_TRUE(fwd);
    EXPECT_EQ(fwd->kernels[0].op, "flash_attention");
    EXPECT_EQ(fwd->kernels[0].phase, Phase::forward);
    EXPECT_EQ(fwd->kernels[0].dims, (DimMap{{"b", 2}, {"seq", 4096}, {"heads", 32}, {"kv_seq", 4096}, {"kv_heads", 8},
                                            {"head_dim", 128}, {"causal", 1}}));
    // Its backward(grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p,
    // is_causal, ...).
    auto back = shaped_operator_kernels(
        "aten::_flash_attention_backward", {q, q, kv, kv, q, {2, 32, 4096}, {}, {}, {}, {}, {}, {}},
        {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16"},
        {"", "", "", "", "", "", "", "", "4096", "4096", "0.", "False"});
    ASSERT_TRUE(back);
    EXPECT_EQ(back->kernels[0].phase, Phase::backward_input);
    EXPECT_EQ(back->kernels[0].dims.at("causal"), 0);
    // The memory-efficient kernel (q [b, seq, heads, d], custom_mask_type 1: causal) and cuDNN's (q [b, heads,
    // seq, d]), timed as FlashAttention-2 of the same shape.
    auto efficient = shaped_operator_kernels("aten::_efficient_attention_forward", {q, kv, kv},
                                             {"c10::Half", "c10::Half", "c10::Half"},
                                             {"", "", "", "", "", "", "", "", "0.", "1", "True"});
    ASSERT_TRUE(efficient);
    EXPECT_EQ(efficient->kernels[0].dims, fwd->kernels[0].dims);
    EXPECT_EQ(efficient->precision, Precision::fp16);
    json qh = {2, 32, 4096, 128}, kvh = {2, 8, 4096, 128};
    auto cudnn = shaped_operator_kernels("aten::_scaled_dot_product_cudnn_attention_backward",
                                         {qh, qh, kvh, kvh, qh}, {"c10::BFloat16", "c10::BFloat16"},
                                         {"", "", "", "", "", "", "", "", "", "", "", "4096", "4096", "0.", "True"});
    ASSERT_TRUE(cudnn);
    EXPECT_EQ(cudnn->kernels[0].phase, Phase::backward_input);
    EXPECT_EQ(cudnn->kernels[0].dims, fwd->kernels[0].dims);
    // Without the is_causal argument the kernel is not known.
    EXPECT_FALSE(shaped_operator_kernels("aten::_flash_attention_forward", {q, kv, kv}, {"c10::BFloat16"}, json::array()));
}

TEST(ProfilerTrace, KernelsOfAShapedOperatorAreItsCallsPerStep) {
    json gemm_dims = {{1024, 1024}, {1024, 1024}};
    json events = json::array();
    for (int s = 0; s < 2; ++s) {
        events.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"name", "ProfilerStep#" + std::to_string(s)}, {"dur", 1}});
        for (int call = 0; call < 3; ++call) {
            std::int64_t id = 10 * s + call;
            events.push_back(cpu_op("aten::mm", id, gemm_dims, {"float", "float"}, {"", ""}));
            // A split-K GEMM: its GEMM and the reduction after it, both the call's.
            events.push_back(launched("ampere_sgemm_64x64_nn", 90, id));
            events.push_back(launched("splitKreduce_kernel", 10, id));
        }
        // A GEMM launched outside any recorded operator, and one whose operator recorded no shapes.
        events.push_back(kernel("ampere_sgemm_128x64_tn", 400));
        events.push_back({{"ph", "X"}, {"cat", "cpu_op"}, {"name", "aten::mm"}, {"args", {{"External id", 100 + s}}}});
        events.push_back(launched("ampere_sgemm_32x32_nn", 200, 100 + s));
    }
    ProfiledKernels k = read_profiler_trace({{"traceEvents", events}}, "row 1");
    EXPECT_EQ(k.kernels, 16);
    ASSERT_EQ(k.shaped.size(), 1u);
    EXPECT_EQ(k.shaped[0].name, "aten::mm");
    EXPECT_DOUBLE_EQ(k.shaped[0].calls_per_step, 3.0);
    EXPECT_DOUBLE_EQ(k.shaped[0].ms_per_step, 0.3);  // 3 calls x 100 us
    EXPECT_EQ(k.shaped[0].gpu_kernels, 12);
    EXPECT_DOUBLE_EQ(k.ms_per_step.at(Family::gemm), 0.6);  // the two matched by name only
    EXPECT_EQ(k.unrecognised, 0);
}

TEST(ProfilerTrace, ADocumentWithoutKernelsIsRefused) {
    auto message = [](const json& trace) {
        try {
            read_profiler_trace(trace, "row 2");
        } catch (const Error& e) {
            EXPECT_EQ(e.field(), "measurements");
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(message(json::object()).find("row 2: a profiler trace needs 'traceEvents'"), std::string::npos);
    EXPECT_NE(message({{"traceEvents", 3}}).find("must be a list"), std::string::npos);
    EXPECT_NE(message({{"traceEvents", json::array()}}).find("no GPU kernel events"), std::string::npos);
    json bad = {{"ph", "X"}, {"cat", "kernel"}, {"name", "gemm"}};
    EXPECT_NE(message({{"traceEvents", json::array({bad})}}).find("no duration"), std::string::npos);
}

// Found by the API fuzz target: an event without a name (or with a number for one, or for 'ph'/'cat') read through
// a missing key. Such events are skipped or matched as unnamed, never a crash.
TEST(ProfilerTrace, EventsWithoutTextFieldsAreReadAsUnnamed) {
    json events = json::array({
        {{"ph", "X"}, {"cat", "kernel"}, {"dur", 100}},                                 // no name
        {{"ph", "X"}, {"cat", "kernel"}, {"name", 7}, {"dur", 100}},                    // a number for a name
        {{"ph", 1}, {"cat", "kernel"}, {"name", "gemm"}, {"dur", 100}},                 // not an 'X' event
        {{"ph", "X"}, {"cat", json::array()}, {"name", "gemm"}, {"dur", 100}},          // no category
        {{"ph", "X"}, {"cat", "cpu_op"}, {"args", {{"External id", 1}, {"Input Dims", json::array()}}}},  // no name
        {{"ph", "X"}, {"cat", "kernel"}, {"name", "sm80_gemm"}, {"dur", 200}, {"args", {{"External id", 1}}}},
    });
    ProfiledKernels k = read_profiler_trace({{"traceEvents", events}}, "row 1");
    EXPECT_EQ(k.kernels, 3);
    EXPECT_EQ(k.unrecognised, 2);
    EXPECT_TRUE(k.shaped.empty());
    EXPECT_DOUBLE_EQ(k.ms_per_step.at(Family::gemm), 0.2);  // the unnamed operator's kernel, matched by its name
    EXPECT_DOUBLE_EQ(k.ms_per_step.at(Family::elementwise), 0.2);
}

}  // namespace
}  // namespace prenet
