// parallel/cluster.hpp: the cluster a sheet and a request make, and the errors of impossible ones.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "hardware/spec.hpp"
#include "parallel/cluster.hpp"
#include "test-helpers.hpp"

using namespace prenet;
using nlohmann::json;

namespace {

using prenet::testing::error_field;

// A user's sheet with no interconnect section at all.
HardwareSpec bare_sheet() {
    return parse_hardware(json::parse(R"({"id": "mine", "peak_tflops": {"fp32": 10},
        "memory": {"capacity_gb": 16, "bandwidth_gbps": 500}})"),
                          "mine.json");
}

}  // namespace

TEST(MakeCluster, DefaultsComeFromTheSheet) {
    const HardwareSpec& h100 = find_hardware("h100-sxm5-80gb");
    Cluster c = make_cluster(h100, {16, std::nullopt, std::nullopt});
    EXPECT_EQ(c.gpus, 16);
    EXPECT_EQ(c.gpus_per_node, 8);
    EXPECT_EQ(c.nodes(), 2);
    EXPECT_EQ(c.scale_up_domain, 8);
    EXPECT_EQ(c.scale_up.kind, LinkKind::nvlink);
    EXPECT_DOUBLE_EQ(c.scale_up.gbps, 450.0);  // 900 GB/s both directions on the sheet
    EXPECT_EQ(c.scale_out.kind, LinkKind::infiniband);
    EXPECT_DOUBLE_EQ(c.scale_out.gbps, 400.0);  // DGX H100: 8 x 400 Gb/s
    // The per-device share the sheets used to list, one direction.
    EXPECT_DOUBLE_EQ(h100.inter_node_gbps, 50.0);
}

TEST(MakeCluster, RackScaleDomainSpansNodes) {
    Cluster c = make_cluster(find_hardware("gb200"), {72, std::nullopt, std::nullopt});
    EXPECT_EQ(c.gpus_per_node, 4);
    EXPECT_EQ(c.nodes(), 18);
    EXPECT_EQ(c.scale_up_domain, 72);
    // Inside the rack part of a tray is fine; beyond it, whole trays.
    EXPECT_EQ(make_cluster(find_hardware("gb200"), {18, std::nullopt, std::nullopt}).gpus, 18);
    EXPECT_EQ(error_field([] { make_cluster(find_hardware("gb200"), {74, std::nullopt, std::nullopt}); }), "gpus");
    EXPECT_EQ(error_field([] { make_cluster(find_hardware("gb200"), {72, 5, std::nullopt}); }), "gpus_per_node");
}

TEST(MakeCluster, PcieDomainIsTheNode) {
    Cluster c = make_cluster(find_hardware("l40s"), {8, std::nullopt, std::nullopt});
    EXPECT_EQ(c.scale_up.kind, LinkKind::pcie);
    EXPECT_EQ(c.scale_up_domain, 8);
    EXPECT_DOUBLE_EQ(c.scale_up.gbps, 32.0);  // PCIe 4.0 x16, one direction
    EXPECT_EQ(c.scale_out.kind, LinkKind::ethernet);  // no reference network on the sheet: 100 GbE
    EXPECT_EQ(make_cluster(find_hardware("l40s"), {8, 4, std::nullopt}).scale_up_domain, 4);
}

TEST(MakeCluster, UserSheetWithoutInterconnectGetsStatedDefaults) {
    HardwareSpec mine = bare_sheet();
    Cluster c = make_cluster(mine, {4, std::nullopt, std::nullopt});
    EXPECT_EQ(c.gpus_per_node, 1);
    EXPECT_EQ(c.nodes(), 4);
    EXPECT_EQ(c.scale_up.kind, LinkKind::pcie);
    EXPECT_EQ(c.scale_out.kind, LinkKind::ethernet);
    EXPECT_DOUBLE_EQ(c.scale_out.gbps, 12.5);
    EXPECT_GT(c.scale_up.gbps, 0);
}

TEST(MakeCluster, ImpossibleRequestsNameTheirField) {
    const HardwareSpec& h100 = find_hardware("h100-sxm5-80gb");
    EXPECT_EQ(error_field([&] { make_cluster(h100, {0, std::nullopt, std::nullopt}); }), "gpus");
    EXPECT_EQ(error_field([&] { make_cluster(h100, {12, std::nullopt, std::nullopt}); }), "gpus");  // 1.5 nodes
    EXPECT_EQ(error_field([&] { make_cluster(h100, {16, 16, std::nullopt}); }), "gpus_per_node");  // > NVLink domain
    EXPECT_EQ(error_field([&] { make_cluster(h100, {16, 0, std::nullopt}); }), "gpus_per_node");
    EXPECT_EQ(error_field([&] { make_cluster(h100, {16, std::nullopt, std::string("fast")}); }), "network");
    // A partial single node is fine; a smaller node than the board is allowed (4-GPU HGX).
    EXPECT_EQ(make_cluster(h100, {4, std::nullopt, std::nullopt}).nodes(), 1);
    EXPECT_EQ(make_cluster(h100, {8, 4, std::nullopt}).scale_up_domain, 4);
    // A node of another size than the sheet's keeps each device's share of the reference network ...
    EXPECT_DOUBLE_EQ(make_cluster(h100, {8, 4, std::nullopt}).scale_out.gbps, 200.0);
    // ... unless the network is given: it is the node's, whatever its size.
    EXPECT_DOUBLE_EQ(make_cluster(h100, {8, 4, std::string("8x400g-ib")}).scale_out.gbps, 400.0);
    EXPECT_DOUBLE_EQ(make_cluster(h100, {16, std::nullopt, std::string("ethernet-100g")}).scale_out.gbps, 12.5);
}

TEST(HardwareSheets, InterconnectFieldsParse) {
    const HardwareSpec& b200 = find_hardware("b200");
    EXPECT_EQ(b200.scale_up_link, "nvlink");
    EXPECT_EQ(b200.scale_up_domain, 8);
    EXPECT_EQ(b200.gpus_per_node, 8);
    EXPECT_EQ(b200.scale_out_network, "8x400g-ib");
    EXPECT_DOUBLE_EQ(b200.scale_up_gbps_one_way(), 900.0);
    json j = to_json(b200);
    EXPECT_EQ(j["scale_up_domain"], 8);
    EXPECT_EQ(j["scale_out_network"], "8x400g-ib");
    // A bad link kind or network on a sheet is an error naming the sheet.
    json sheet = json::parse(R"({"id": "x", "peak_tflops": {"fp32": 1}, "memory": {"capacity_gb": 1,
        "bandwidth_gbps": 1}, "interconnect": {"scale_up_link": "smoke-signals"}})");
    EXPECT_THROW(parse_hardware(sheet, "x.json"), Error);
    sheet["interconnect"] = {{"scale_out_network", "fast"}};
    EXPECT_THROW(parse_hardware(sheet, "x.json"), Error);
    sheet["interconnect"] = {{"gpus_per_node", 2.5}};
    EXPECT_THROW(parse_hardware(sheet, "x.json"), Error);
}

// Issue #27: every link a cluster uses is within the range of any bandwidth. A sheet's reference network shared
// by its node (up to 10^9 devices on a sheet) and given to a node of another size must stay in it, and a sheet's
// own scale-up figure has the same minimum as its memory bandwidth.
TEST(MakeCluster, ANodesShareOfTheSheetsNetworkIsPlausible) {
    json sheet = json::parse(R"({"id": "x", "peak_tflops": {"fp32": 10}, "memory": {"capacity_gb": 16,
        "bandwidth_gbps": 500}, "interconnect": {"gpus_per_node": 100000, "scale_out_network": "ethernet-100g"}})");
    HardwareSpec wide = parse_hardware(sheet, "x.json");
    EXPECT_EQ(error_field([&] { make_cluster(wide, {2, 1, std::nullopt}); }), "network");  // 1.25e-4 GB/s
    EXPECT_DOUBLE_EQ(make_cluster(wide, {2, 1, std::string("ethernet-100g")}).scale_out.gbps, 12.5);  // given: fine
    sheet["interconnect"] = {{"gpus_per_node", 1}, {"scale_out_network", "ib-800t"}};
    HardwareSpec fast = parse_hardware(sheet, "x.json");
    EXPECT_EQ(error_field([&] { make_cluster(fast, {8, 8, std::nullopt}); }), "network");  // 8 x 10^5 GB/s
    EXPECT_DOUBLE_EQ(make_cluster(fast, {8, 1, std::nullopt}).scale_out.gbps, kPlausibleGBps);
    sheet["interconnect"] = {{"intra_node_gbps", 1e-9}};
    EXPECT_THROW(parse_hardware(sheet, "x.json"), Error);
    sheet["interconnect"] = {{"intra_node_gbps", kMinPlausibleGBps}};
    EXPECT_NO_THROW(parse_hardware(sheet, "x.json"));
}

TEST(TorusShape, MostEvenSidesInWholeBlocksWhereTheyFit) {
    EXPECT_EQ(even_torus_shape(3072, 3, 4), (std::vector<std::int64_t>{12, 16, 16}));
    EXPECT_EQ(even_torus_shape(128, 3, 4), (std::vector<std::int64_t>{4, 4, 8}));
    EXPECT_EQ(even_torus_shape(8, 3, 4), (std::vector<std::int64_t>{2, 2, 2}));
    EXPECT_EQ(even_torus_shape(1024, 2, 4), (std::vector<std::int64_t>{32, 32}));
    EXPECT_EQ(even_torus_shape(7, 3, 4), (std::vector<std::int64_t>{1, 1, 7}));
    EXPECT_EQ(even_torus_shape(1, 3, 4), (std::vector<std::int64_t>{1, 1, 1}));
    EXPECT_EQ(parse_torus_shape("4x4x8"), (std::vector<std::int64_t>{4, 4, 8}));
    for (const char* bad : {"", "4x", "x4", "4x4x4x4", "0x4", "4.5", "-4", "4y4", "99999999"})
        EXPECT_EQ(error_field([&] { parse_torus_shape(bad); }), "topology") << bad;
}

TEST(MakeCluster, TorusPodsAreCutIntoEqualSlices) {
    json sheet = json::parse(R"({"id": "t", "name": "T", "peak_tflops": {"bf16": 200}, "memory": {"capacity_gb": 32,
        "bandwidth_gbps": 1000}, "interconnect": {"intra_node_gbps": 600, "scale_up_link": "ici",
        "scale_up_domain": 4096, "gpus_per_node": 4, "topology": "torus", "links_per_device": 6,
        "torus_dims": 3, "torus_wraparound": true}})");
    HardwareSpec chip = parse_hardware(sheet, "t.json");
    // 6,144 chips: two slices of 3,072 (12 x 16 x 16), joined by the data-centre network.
    Cluster c = make_cluster(chip, {6144, std::nullopt, std::nullopt});
    EXPECT_EQ(c.scale_up_domain, 3072);
    EXPECT_EQ(c.torus_shape, (std::vector<std::int64_t>{12, 16, 16}));
    EXPECT_DOUBLE_EQ(c.link_gbps, 50.0);
    EXPECT_EQ(c.torus_closed, (std::vector<bool>{true, true, true}));
    // Without optical switches only the pod's own axes close: a 32 x 32 pod's full side, not a slice's 16.
    json flat = sheet;
    flat["interconnect"]["torus_dims"] = 2;
    flat["interconnect"]["scale_up_domain"] = 1024;
    flat["interconnect"]["torus_wraparound"] = false;
    ClusterRequest half{512, std::nullopt, std::nullopt, std::string("16x32")};
    EXPECT_EQ(make_cluster(parse_hardware(flat, "t.json"), half).torus_closed, (std::vector<bool>{false, true}));
    ClusterRequest shaped{256, std::nullopt, std::nullopt, std::string("4x4x8")};
    EXPECT_EQ(make_cluster(chip, shaped).scale_up_domain, 128);
    // Chips that are not whole slices, slices past the pod, too many dimensions, odd splits: refused by name.
    EXPECT_EQ(error_field([&] { make_cluster(chip, {200, std::nullopt, std::nullopt, std::string("4x4x8")}); }), "gpus");
    EXPECT_EQ(error_field([&] { make_cluster(chip, {8192, std::nullopt, std::nullopt, std::string("16x16x32")}); }),
              "topology");
    EXPECT_EQ(error_field([&] { make_cluster(chip, {4097, std::nullopt, std::nullopt}); }), "gpus");
    sheet["interconnect"]["torus_dims"] = 2;
    EXPECT_EQ(error_field([&] { make_cluster(parse_hardware(sheet, "t.json"), shaped); }), "topology");
    // --topology on a switched fabric says why.
    EXPECT_EQ(error_field([&] { make_cluster(find_hardware("h100-sxm5-80gb"), {16, std::nullopt, std::nullopt,
                                                                               std::string("4x4")}); }),
              "topology");
}
