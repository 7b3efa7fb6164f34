// parallel/topology.hpp: collectives inside a scale-up domain as it is wired (torus rings per dimension).
#include <gtest/gtest.h>

#include "hardware/spec.hpp"
#include "parallel/cluster.hpp"
#include "parallel/collectives.hpp"
#include "parallel/topology.hpp"

using namespace prenet;
using nlohmann::json;

namespace {

// A 3D-torus chip with round numbers: 6 links of 50 GB/s each way (600 GB/s both directions added), pods of 4096,
// hosts of 4, closed rings.
HardwareSpec torus_chip(bool wraparound = true) {
    json sheet = json::parse(R"({"id": "t", "peak_tflops": {"bf16": 200}, "memory": {"capacity_gb": 32,
        "bandwidth_gbps": 1000}, "interconnect": {"intra_node_gbps": 600, "scale_up_link": "ici",
        "scale_up_domain": 4096, "gpus_per_node": 4, "topology": "torus", "links_per_device": 6,
        "torus_dims": 3}})");
    sheet["interconnect"]["torus_wraparound"] = wraparound;
    return parse_hardware(sheet, "t.json");
}

Cluster slice(const std::string& shape, std::int64_t gpus, bool wraparound = true) {
    ClusterRequest r;
    r.gpus = gpus;
    r.topology = shape;
    return make_cluster(torus_chip(wraparound), r);
}

}  // namespace

TEST(TorusExtents, TensorGroupsRunAlongXThenY) {
    Cluster c = slice("4x4x4", 64);
    EXPECT_EQ(torus_span({8, 1}, c).extents, (std::vector<std::int64_t>{4, 2, 1}));
    // A whole side's ring closes; 2 of 4 along y is an open line.
    EXPECT_EQ(torus_span({8, 1}, c).closed, (std::vector<bool>{true, false, false}));
    EXPECT_EQ(torus_span({4, 1}, c).extents, (std::vector<std::int64_t>{4, 1, 1}));
    // Data-parallel groups step over the 8 ranks of a replica: ranks 0, 8, ..., 56 sit at y 0/2, z 0..3.
    EXPECT_EQ(torus_span({8, 8}, c).extents, (std::vector<std::int64_t>{1, 2, 4}));
    EXPECT_EQ(torus_span({64, 1}, c).extents, (std::vector<std::int64_t>{4, 4, 4}));
    // Without wrap-around links no ring closes.
    EXPECT_EQ(torus_span({64, 1}, slice("4x4x4", 64, false)).closed, (std::vector<bool>{false, false, false}));
}

TEST(TorusTerms, AllReduceIsARingPerDimensionOverEveryDimensionsLinks) {
    const double s = 1e9;
    // Reduce-scatter 4 x 4 x 4: S x 3/4, then S/4 x 3/4, then S/16 x 3/4 = S x 63/64 in all, (n-1)/n as a flat
    // ring; the all-gather moves it back. The data split over 3 orders of the dimensions, each ring closed and
    // used both ways: 3 x 2 links each way carry it.
    RingTerms t = torus_terms(Collective::all_reduce, s, {{4, 4, 4}, {true, true, true}});
    EXPECT_DOUBLE_EQ(t.steps, 18.0);
    EXPECT_DOUBLE_EQ(t.bus_bytes, 2 * s * 63.0 / 64.0 / 6.0);
    // Open lines: half the links each way.
    EXPECT_DOUBLE_EQ(torus_terms(Collective::all_reduce, s, {{4, 4, 4}, {false, false, false}}).bus_bytes, 2 * s * 63.0 / 64.0 / 3.0);
    // One dimension: a closed ring of 8 is two rings (one each way) of 7 steps.
    RingTerms ring = torus_terms(Collective::all_gather, s, {{8, 1, 1}, {true, false, false}});
    EXPECT_DOUBLE_EQ(ring.steps, 7.0);
    EXPECT_DOUBLE_EQ(ring.bus_bytes, s * 7.0 / 8.0 / 2.0);
    EXPECT_DOUBLE_EQ(torus_terms(Collective::reduce_scatter, s, {{1, 1, 1}, {false, false, false}}).bus_bytes, 0.0);
}

TEST(TorusTerms, AllToAllPaysTheMeanDistance) {
    const double s = 1e9;
    // A closed ring of 8: peers 0,1,2,3,4,3,2,1 links away, mean 2; out on 2 links: S x 2 / 2 per link.
    EXPECT_DOUBLE_EQ(torus_terms(Collective::all_to_all, s, {{8, 1, 1}, {true, false, false}}).bus_bytes, s);
    // An open line of 4: mean distance (16 - 1) / 12 = 1.25.
    EXPECT_DOUBLE_EQ(torus_terms(Collective::all_to_all, s, {{4, 1, 1}, {false, false, false}}).bus_bytes, s * 1.25 / 2.0);
    // Two dimensions of 4 (closed: mean 1 each) share 4 links: S x 2 / 4.
    EXPECT_DOUBLE_EQ(torus_terms(Collective::all_to_all, s, {{4, 4, 1}, {true, true, false}}).bus_bytes, s * 2.0 / 4.0);
    // A neighbour's send: one link.
    EXPECT_DOUBLE_EQ(torus_terms(Collective::send_recv, s, {{2, 1, 1}, {false, false, false}}).bus_bytes, s);
}

TEST(TorusCollectives, BoundedByTheLinksTheGroupUses) {
    CollectiveModel m;
    m.fallback = {0.5, 1.0, 5.0, 0.0, false};
    Cluster c = slice("4x4x4", 64);
    EXPECT_DOUBLE_EQ(c.link_gbps, 50.0);
    const double s = 1e9;
    // A tensor-parallel group of 4 along x: a closed ring each way, 2 links of 50 GB/s at efficiency 0.5.
    double t = m.time_ms(Collective::all_reduce, s, {4, 1}, c);
    double expected = 5e-3 + 6 * 1e-3 + 2 * s * 0.75 / 2.0 / 50e9 * 1e3 / 0.5;
    EXPECT_NEAR(t, expected, 1e-9);
    // The whole slice: more bytes but every dimension's links: faster per byte than the line of 4 would be.
    double whole = m.time_ms(Collective::all_reduce, s, {64, 1}, c);
    EXPECT_LT(whole, 2 * t);
    // Never faster than the bytes over all 6 links at full speed.
    EXPECT_GT(whole, 2 * s * 63.0 / 64.0 / (6 * 50e9) * 1e3);
}

TEST(TorusCollectives, SlicesJoinOverTheScaleOutNetwork) {
    CollectiveModel m;
    m.fallback = {0.5, 1.0, 5.0, 0.0, false};
    Cluster one = slice("4x4x4", 64), two = slice("4x4x4", 128);
    EXPECT_EQ(two.scale_up_domain, 64);
    // A data-parallel group across the two slices pays the data-centre network too.
    EXPECT_GT(m.time_ms(Collective::all_reduce, 1e9, {128, 1}, two), m.time_ms(Collective::all_reduce, 1e9, {64, 1}, one));
}
