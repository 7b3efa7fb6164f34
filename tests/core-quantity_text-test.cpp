#include "core/quantity_text.hpp"

#include <gtest/gtest.h>

namespace prenet {

TEST(QuantityText, GiBAreBinary) {
    // nvidia-smi's 81920MiB on an A100 80GB is 80 GiB; 80e9 bytes (decimal GB) is 74.5 GiB.
    EXPECT_EQ(gib_text(81920.0 * 1048576.0), "80.0 GiB");
    EXPECT_EQ(gib_text(80e9), "74.5 GiB");
    EXPECT_DOUBLE_EQ(to_gib(3.0 * 1073741824.0), 3.0);
}

TEST(QuantityText, DecimalsAsAsked) {
    EXPECT_EQ(gib_text(1.5 * kBytesPerGiB, 2), "1.50 GiB");
    EXPECT_EQ(gib_text(2.25 * kBytesPerGiB, 0), "2 GiB");
}

TEST(QuantityText, GroupedThousands) {
    EXPECT_EQ(grouped(16384), "16,384");
    EXPECT_EQ(grouped(-1234567), "-1,234,567");
    EXPECT_EQ(grouped(999), "999");
}

TEST(QuantityText, DurationsWithoutExponents) {
    EXPECT_EQ(duration_text(64.81), "64.8 ms");
    EXPECT_EQ(duration_text(0.45), "0.45 ms");
    EXPECT_EQ(duration_text(1670.2), "1.67 s");
    EXPECT_EQ(duration_text(999.7), "1 s");
    EXPECT_EQ(duration_text(23000), "23 s");
    EXPECT_EQ(duration_text(1234567), "1,235 s");
}

TEST(QuantityText, CountsInWords) {
    EXPECT_EQ(count_words(1.6384e9), "1.64 billion");
    EXPECT_EQ(count_words(4.1e8), "410 million");
    EXPECT_EQ(count_words(65536), "65,536");
}

}  // namespace prenet
