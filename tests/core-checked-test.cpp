// Checked 64-bit arithmetic (core/checked.hpp): counts that overflow are errors naming what overflowed.
#include "core/checked.hpp"

#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

namespace prenet {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

TEST(Checked, ExactWithinRange) {
    EXPECT_EQ(checked_mul(std::int64_t{1} << 31, std::int64_t{1} << 31), std::int64_t{1} << 62);
    EXPECT_EQ(checked_add(kMax - 1, 1), kMax);
    EXPECT_EQ(checked_mul(-3, 4), -12);
}

TEST(Checked, OverflowIsAnErrorNamingTheQuantity) {
    try {
        checked_mul(std::int64_t{1} << 32, std::int64_t{1} << 32, "parameter count");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("parameter count"), std::string::npos) << e.what();
    }
    EXPECT_THROW(checked_add(kMax, 1), Error);
}

}  // namespace
}  // namespace prenet
