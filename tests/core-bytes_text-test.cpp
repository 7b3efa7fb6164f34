#include "core/bytes_text.hpp"

#include <gtest/gtest.h>

namespace prenet {

TEST(BytesText, GiBAreBinary) {
    // nvidia-smi's 81920MiB on an A100 80GB is 80 GiB; 80e9 bytes (decimal GB) is 74.5 GiB.
    EXPECT_EQ(gib_text(81920.0 * 1048576.0), "80.0 GiB");
    EXPECT_EQ(gib_text(80e9), "74.5 GiB");
    EXPECT_DOUBLE_EQ(to_gib(3.0 * 1073741824.0), 3.0);
}

TEST(BytesText, DecimalsAsAsked) {
    EXPECT_EQ(gib_text(1.5 * kBytesPerGiB, 2), "1.50 GiB");
    EXPECT_EQ(gib_text(2.25 * kBytesPerGiB, 0), "2 GiB");
}

}  // namespace prenet
