// predict/cached_predictor.hpp: a kernel of its accelerator is predicted once, then remembered; another
// accelerator's kernels pass through.
#include "predict/cached_predictor.hpp"

#include <gtest/gtest.h>

#include "test-helpers.hpp"

namespace prenet {
namespace {

struct Counting : KernelPredictor {
    mutable int calls = 0;
    std::string name() const override { return "counting"; }
    double kernel_ms(const Kernel& k, const HardwareSpec&) const override {
        ++calls;
        return double(k.flops) * 1e-9;
    }
    std::optional<double> relative_uncertainty(const std::map<Family, double>&, const HardwareSpec&) const override {
        return 0.25;
    }
};

TEST(CachedPredictor, EachKernelOfItsAcceleratorIsPredictedOnce) {
    Counting inner;
    HardwareSpec t4 = find_hardware("t4"), a10 = find_hardware("a10");
    CachedPredictor cached(inner, t4);
    Kernel small = testing::conv_row(16, 16, 3, Precision::fp16), large = testing::conv_row(64, 64, 3, Precision::fp16);
    double first = cached.kernel_ms(small, t4);
    EXPECT_EQ(cached.kernel_ms(small, t4), first);
    EXPECT_EQ(inner.calls, 1);
    EXPECT_NE(cached.kernel_ms(large, t4), first);
    EXPECT_EQ(inner.calls, 2);
    cached.kernel_ms(small, a10);
    cached.kernel_ms(small, a10);
    EXPECT_EQ(inner.calls, 4);  // not this cache's accelerator
    EXPECT_EQ(cached.name(), "counting");
    EXPECT_EQ(cached.relative_uncertainty({}, t4), 0.25);
}

}  // namespace
}  // namespace prenet
