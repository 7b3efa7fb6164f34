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

}  // namespace
}  // namespace prenet
