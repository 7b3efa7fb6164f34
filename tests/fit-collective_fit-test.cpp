// The collective model's fit (fit/collective_fit.hpp): how a device alone on its link kind is held out.
#include <gtest/gtest.h>

#include <vector>

#include "fit/collective_fit.hpp"

using namespace prenet;

// A device alone on its link kind is scored held out by message size: its distinct sizes in order alternate
// between the two halves, each of its rows is in exactly one, and other devices' rows in neither (always fitted).
TEST(CollectiveFit, MessageSizeHalvesAlternateOverTheDevicesOwnSizes) {
    std::vector<CollectiveSample> rows;
    for (double bytes : {4096.0, 1024.0, 65536.0, 16384.0})
        for (const char* op : {"all_reduce", "all_gather"}) rows.push_back({"xla", "mi300x", op, 8, bytes, 1.0});
    rows.push_back({"nccl", "a100-sxm4-80gb", "all_reduce", 8, 1024.0, 1.0});
    std::vector<int> half = message_size_halves(rows, "mi300x");
    ASSERT_EQ(half.size(), rows.size());
    auto half_of = [&](double bytes) {
        for (size_t i = 0; i < rows.size(); ++i)
            if (rows[i].device == "mi300x" && rows[i].message_bytes == bytes) return half[i];
        return -2;
    };
    // Sizes in order: 1024, 4096, 16384, 65536 -> 0, 1, 0, 1; both ops of a size in the same half.
    EXPECT_EQ(half_of(1024.0), 0);
    EXPECT_EQ(half_of(4096.0), 1);
    EXPECT_EQ(half_of(16384.0), 0);
    EXPECT_EQ(half_of(65536.0), 1);
    for (size_t i = 0; i < rows.size(); ++i)
        if (rows[i].device == "mi300x") EXPECT_EQ(half[i], half_of(rows[i].message_bytes));
    EXPECT_EQ(half.back(), -1);  // the other device's row is fitted in both halves
}
