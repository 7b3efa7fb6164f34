// Precision support per device (hardware/precision_support.hpp): the precision a step runs as where the sheet
// has no units for the asked one, and why; and the peak HardwareSpec::matmul_flops reads for it.
#include "hardware/precision_support.hpp"

#include <gtest/gtest.h>

#include "hardware/spec.hpp"

namespace prenet {
namespace {

PrecisionSupport support(const char* id, Precision p) { return precision_support(find_hardware(id), p); }

TEST(PrecisionSupport, Fp8WithoutFp8UnitsRunsAsBf16) {
    PrecisionSupport s = support("a100-sxm4-80gb", Precision::fp8);
    EXPECT_TRUE(s.fallback());
    EXPECT_EQ(s.requested, Precision::fp8);
    EXPECT_EQ(s.used, Precision::bf16);
    EXPECT_NE(s.reason.find("FP8"), std::string::npos) << s.reason;
    EXPECT_EQ(s.note("a100-sxm4-80gb"), "a100-sxm4-80gb: no FP8 units, predicted as bf16");
    // Never faster than the fallback: the peak is bf16's.
    const HardwareSpec& h = find_hardware("a100-sxm4-80gb");
    EXPECT_DOUBLE_EQ(h.matmul_flops(Precision::fp8), h.matmul_flops(Precision::bf16));
}

TEST(PrecisionSupport, Fp8WithUnitsIsFp8) {
    for (const char* id : {"h100-sxm5-80gb", "h200-sxm-141gb", "l40s", "mi300x", "b200"}) {
        PrecisionSupport s = support(id, Precision::fp8);
        EXPECT_FALSE(s.fallback()) << id;
        EXPECT_EQ(s.used, Precision::fp8) << id;
        EXPECT_TRUE(s.reason.empty()) << id;
        EXPECT_EQ(s.note(id), "") << id;
    }
}

TEST(PrecisionSupport, Fp8WithoutBf16RunsAsFp16AndWithoutEitherAsFp32) {
    for (const char* id : {"v100-sxm2-16gb", "t4"}) EXPECT_EQ(support(id, Precision::fp8).used, Precision::fp16) << id;
    HardwareSpec h = find_hardware("v100-sxm2-16gb");
    h.peak_tflops.erase("fp16");
    EXPECT_EQ(precision_support(h, Precision::fp8).used, Precision::fp32);
}

TEST(PrecisionSupport, Bf16WithoutBf16UnitsRunsAsFp32) {
    for (const char* id : {"v100-sxm2-16gb", "v100-pcie-32gb", "t4", "p100-pcie-16gb", "titan-xp", "m40"}) {
        PrecisionSupport s = support(id, Precision::bf16);
        EXPECT_EQ(s.used, Precision::fp32) << id;
        EXPECT_NE(s.reason.find("never faster than fp32"), std::string::npos) << s.reason;
    }
    EXPECT_EQ(support("a100-sxm4-80gb", Precision::bf16).used, Precision::bf16);
    EXPECT_EQ(support("mi250", Precision::bf16).used, Precision::bf16);
}

TEST(PrecisionSupport, Tf32WithoutTf32UnitsRunsAsFp32) {
    for (const char* id : {"v100-sxm2-16gb", "mi250", "arc-pro-b60"}) {
        PrecisionSupport s = support(id, Precision::tf32);
        EXPECT_EQ(s.used, Precision::fp32) << id;
        EXPECT_NE(s.reason.find("allow_tf32"), std::string::npos) << s.reason;
    }
    EXPECT_EQ(support("a100-sxm4-80gb", Precision::tf32).used, Precision::tf32);
}

TEST(PrecisionSupport, Fp32IsNeverAFallbackEvenWhereItIsEmulated) {
    for (const auto& h : hardware_catalogue()) {
        PrecisionSupport s = precision_support(h, Precision::fp32);
        EXPECT_FALSE(s.fallback()) << h.id;
        EXPECT_EQ(s.used, Precision::fp32) << h.id;
    }
}

TEST(PrecisionSupport, NeverFasterThanTheFallbackOnAnyDevice) {
    for (const auto& h : hardware_catalogue())
        for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp8}) {
            PrecisionSupport s = precision_support(h, p);
            std::string used;
            h.matmul_flops(p, &used);
            EXPECT_DOUBLE_EQ(h.matmul_flops(p), h.matmul_flops(s.used)) << h.id << " " << to_string(p);
            // A precision with no peak on the sheet has no units: it is never the one used.
            if (s.used != Precision::fp32) EXPECT_TRUE(h.has_peak(to_string(s.used))) << h.id;
        }
}

}  // namespace
}  // namespace prenet

TEST(Nf4Kernels, BitsandbytesBackendsOnly) {
    // bitsandbytes (v0.50) runs on NVIDIA, AMD and Intel (XPU, Gaudi); not on TPUs or Trainium.
    for (const char* id : {"a100-sxm4-80gb", "mi300x", "gaudi2", "gaudi3"}) EXPECT_TRUE(prenet::has_nf4_kernels(prenet::find_hardware(id))) << id;
    for (const char* id : {"tpu-v4", "tpu-v6e", "trainium2"}) EXPECT_FALSE(prenet::has_nf4_kernels(prenet::find_hardware(id))) << id;
}
