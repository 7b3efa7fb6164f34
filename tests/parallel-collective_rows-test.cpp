// parallel/collective_rows.hpp: a measurement table's collective row as a group on a cluster: where its devices
// sit, and the field at fault for a row no cluster can hold.
#include "parallel/collective_rows.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "hardware/spec.hpp"
#include "test-helpers.hpp"

using namespace prenet;

TEST(CollectiveRows, RowOps) {
    EXPECT_TRUE(is_collective_row_op("all_reduce"));
    EXPECT_TRUE(is_collective_row_op("alltoall"));  // nccl-tests' name
    EXPECT_FALSE(is_collective_row_op("gemm"));
}

TEST(CollectiveRows, NodesAndDefaults) {
    const HardwareSpec& h100 = find_hardware("h100-sxm5-80gb");
    CollectiveRow one = collective_row("all_reduce", 1e6, 8, std::nullopt, std::nullopt, h100);
    EXPECT_EQ(group_span(one.group, one.cluster).domains, 1);
    CollectiveRow two = collective_row("all_reduce", 1e6, 16, 2, std::nullopt, h100);
    EXPECT_EQ(two.cluster.gpus_per_node, 8);
    EXPECT_EQ(group_span(two.group, two.cluster).domains, 2);
    // Without nodes, a PCIe card's row is one machine, not one card per node.
    const HardwareSpec& a10 = find_hardware("a10");
    EXPECT_EQ(collective_row("all_gather", 1e6, 4, std::nullopt, std::nullopt, a10).cluster.gpus_per_node, 4);
    auto field = [](auto f) { return prenet::testing::error_field(f); };
    EXPECT_EQ(field([&] { collective_row("all_reduce", 1e6, 12, 5, std::nullopt, h100); }), "nodes");
    EXPECT_EQ(field([&] { collective_row("all_reduce", -1, 8, std::nullopt, std::nullopt, h100); }), "message_size");
    EXPECT_EQ(field([&] { collective_row("send_recv", 1e6, 4, std::nullopt, std::nullopt, h100); }), "gpus");
    EXPECT_EQ(field([&] { collective_row("broadcast", 1e6, 4, std::nullopt, std::nullopt, h100); }), "op");
}
