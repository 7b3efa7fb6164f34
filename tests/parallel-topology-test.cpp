// parallel/topology.hpp: collectives inside a scale-up domain as it is wired (torus rings per dimension; a full
// mesh's links to the other members, docs/parallel.md "Inside a full mesh", worked by hand: MI300X has 7 Infinity
// Fabric links of 64 GB/s each way, one to each of the 7 other GPUs of its board).
#include <gtest/gtest.h>

#include <optional>
#include <set>

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

// ---- full mesh ----

namespace {

constexpr double kGiB = 1073741824.0;

// No latency, no base, the link's whole rate: time = bus bytes / rate.
const LinkFit kIdeal{1.0, 0.0, 0.0, 0.0, true};

Cluster mi300x(std::int64_t gpus, std::optional<std::int64_t> per_node = std::nullopt) {
    return make_cluster(find_hardware("mi300x"), {gpus, per_node, std::nullopt});
}

// A Gaudi-2-like board: 21 RoCE ports of 100 Gb/s (12.5 GB/s each way) for scale-up, 3 to each of 7 peers.
HardwareSpec three_links_per_peer() {
    return parse_hardware(json::parse(R"({"id": "mesh3", "peak_tflops": {"bf16": 400},
        "memory": {"capacity_gb": 96, "bandwidth_gbps": 2400},
        "interconnect": {"intra_node_gbps": 525, "scale_up_link": "roce", "topology": "full_mesh",
                         "links_per_device": 21, "scale_up_domain": 8, "gpus_per_node": 8}})"),
                          "mesh3.json");
}

double inside_ms(Collective op, double bytes, std::int64_t members, const Cluster& c, const LinkFit& f = kIdeal) {
    return inside_phase_ms(op, bytes, members, CollectiveGroup{members, 1}, c, f);
}

}  // namespace

TEST(FullMeshCluster, MI300XHasOneLinkOfSixtyFourGBpsPerPeer) {
    Cluster c = mi300x(8);
    EXPECT_EQ(c.topology, HardwareSpec::Topology::full_mesh);
    EXPECT_EQ(c.links_per_device, 7);
    EXPECT_DOUBLE_EQ(c.link_gbps, 64.0);  // 896 GB/s both ways / 2 / 7 links
    EXPECT_EQ(c.links_per_peer, 1);
    // A node of 2 (a pair measured inside the 8-GPU board) keeps one link between the two, not all 7.
    EXPECT_EQ(mi300x(2, 2).links_per_peer, 1);
    Cluster g = make_cluster(three_links_per_peer(), {8, std::nullopt, std::nullopt});
    EXPECT_EQ(g.links_per_peer, 3);
    EXPECT_DOUBLE_EQ(g.link_gbps, 12.5);
    // Switched fabrics have no per-peer links.
    EXPECT_EQ(make_cluster(find_hardware("h100-sxm5-80gb"), {8, std::nullopt, std::nullopt}).links_per_peer, 0);
}

TEST(FullMeshTopology, EightMI300XAllGatherOfOneGiBUsesAllSevenLinks) {
    // Bus bytes 7/8 x 2^30 over 7 x 64 GB/s = 2^30 / 512e9 s = 2.097152 ms.
    Cluster c = mi300x(8);
    auto m = full_mesh_phase(Collective::all_gather, kGiB, 8, c);
    ASSERT_TRUE(m.has_value());
    EXPECT_DOUBLE_EQ(m->terms.steps, 7.0);
    EXPECT_DOUBLE_EQ(m->terms.bus_bytes, kGiB * 7 / 8);
    EXPECT_DOUBLE_EQ(m->gbps, 448.0);
    EXPECT_NEAR(inside_ms(Collective::all_gather, kGiB, 8, c), 2.097152, 1e-9);
    // Eight members reach the whole scale-up bandwidth: the same as a switch would give.
    EXPECT_NEAR(inside_ms(Collective::reduce_scatter, kGiB, 8, c), 2.097152, 1e-9);
    EXPECT_NEAR(inside_ms(Collective::all_reduce, kGiB, 8, c), 4.194304, 1e-9);
}

TEST(FullMeshTopology, TwoMembersShareOneLink) {
    // All-gather of 1 GiB between two MI300X: half of it crosses their one link, 2^29 / 64e9 s = 8.388608 ms, 7x
    // what the aggregate (448 GB/s) would allow.
    Cluster c = mi300x(2, 2);
    EXPECT_NEAR(inside_ms(Collective::all_gather, kGiB, 2, c), 8.388608, 1e-9);
    EXPECT_NEAR(inside_ms(Collective::all_reduce, kGiB, 2, c), 16.777216, 1e-9);
    EXPECT_NEAR(inside_ms(Collective::all_to_all, kGiB, 2, c), 8.388608, 1e-9);
    // A send crosses one link whole: 2^30 / 64e9 s.
    EXPECT_NEAR(inside_ms(Collective::send_recv, kGiB, 2, c), 16.777216, 1e-9);
}

TEST(FullMeshTopology, FourMembersUseThreeLinksEach) {
    // All-reduce of 1 GiB among 4: bus bytes 2 x 3/4 x 2^30 over 3 x 64 GB/s = 8.388608 ms.
    Cluster c = mi300x(4, 4);
    EXPECT_NEAR(inside_ms(Collective::all_reduce, kGiB, 4, c), 8.388608, 1e-9);
    // Four members of a full board (the rest busy with their own groups) still reach only each other.
    EXPECT_NEAR(inside_ms(Collective::all_reduce, kGiB, 4, mi300x(8)), 8.388608, 1e-9);
}

TEST(FullMeshTopology, AllToAllSendsEachPeerItsShareOverItsOwnLink) {
    // 8 members, 1 GiB sent in all: 2^27 to each of 7 peers, each over its own 64 GB/s link, all at once.
    Cluster c = mi300x(8);
    EXPECT_NEAR(inside_ms(Collective::all_to_all, kGiB, 8, c), kGiB / 8 / 64e9 * 1e3, 1e-9);
}

TEST(FullMeshTopology, SeveralLinksPerPeer) {
    Cluster c = make_cluster(three_links_per_peer(), {8, std::nullopt, std::nullopt});
    // A pair: 3 links of 12.5 GB/s; all-gather of 1 GiB moves 2^29 over them.
    EXPECT_NEAR(inside_ms(Collective::all_gather, kGiB, 2, c), kGiB / 2 / 37.5e9 * 1e3, 1e-9);
    EXPECT_NEAR(inside_ms(Collective::send_recv, kGiB, 2, c), kGiB / 37.5e9 * 1e3, 1e-9);
    // All 8: 7 x 3 = 21 links, the whole 262.5 GB/s each way.
    EXPECT_NEAR(inside_ms(Collective::all_gather, kGiB, 8, c), kGiB * 7 / 8 / 262.5e9 * 1e3, 1e-9);
}

TEST(FullMeshTopology, LatencyIsPaidPerRingStep) {
    Cluster c = mi300x(8);
    LinkFit f{1.0, 2.0, 100.0, 0.0, true};
    // 1 KiB: the transfer is ~2 ns; 7 steps of 2 us for all-gather, 14 for all-reduce, and the base once in time_ms.
    EXPECT_NEAR(inside_ms(Collective::all_gather, 1024, 8, c, f), 0.014, 1e-5);
    EXPECT_NEAR(inside_ms(Collective::all_reduce, 1024, 8, c, f), 0.028, 1e-5);
    CollectiveModel model;
    model.links[LinkKind::infinity_fabric] = f;
    EXPECT_NEAR(model.time_ms(Collective::all_gather, 1024, {8, 1}, c), 0.114, 1e-5);
}

TEST(FullMeshTopology, CollectiveTimeGoesThroughTheMesh) {
    CollectiveModel model;
    model.links[LinkKind::infinity_fabric] = kIdeal;
    model.fallback = kIdeal;
    // One domain: the pair's all-gather is the one-link time.
    EXPECT_NEAR(model.time_ms(Collective::all_gather, kGiB, {2, 1}, mi300x(2, 2)), 8.388608, 1e-9);
    // Across two boards, a group of 8 with stride 2 has 4 members per board: its reduce-scatter and all-gather
    // inside run on 3 links, slower than the 8-member group's, which reaches all 7.
    Cluster two = mi300x(16);
    double spread = model.time_ms(Collective::all_reduce, kGiB, {8, 2}, two);
    double inside = inside_ms(Collective::reduce_scatter, kGiB, 4, two) + inside_ms(Collective::all_gather, kGiB, 4, two);
    EXPECT_GT(spread, inside);
    EXPECT_NEAR(inside, 2 * kGiB * 3 / 4 / 192e9 * 1e3, 1e-9);
}

TEST(FullMeshTopology, NotAMeshWithoutPublishedLinks) {
    // A switched sheet, or a mesh without links, takes the ring on the scale-up bandwidth.
    Cluster h100 = make_cluster(find_hardware("h100-sxm5-80gb"), {8, std::nullopt, std::nullopt});
    EXPECT_FALSE(full_mesh_phase(Collective::all_gather, kGiB, 8, h100).has_value());
    EXPECT_NEAR(inside_ms(Collective::all_gather, kGiB, 2, h100), kGiB / 2 / 450e9 * 1e3, 1e-9);
    Cluster c = mi300x(8);
    c.links_per_peer = 0;
    EXPECT_FALSE(full_mesh_phase(Collective::all_gather, kGiB, 8, c).has_value());
}

namespace {

// The places a group takes along each dimension, counted member by member (what torus_span computes in closed
// form where it can).
std::vector<std::int64_t> counted_extents(const CollectiveGroup& g, const Cluster& c) {
    std::vector<std::set<std::int64_t>> seen(c.torus_shape.size());
    for (std::int64_t i = 0; i < g.size; ++i) {
        std::int64_t rank = g.run <= 1 ? i * g.stride : (i / g.run) * g.stride + (i % g.run) * g.run_stride;
        if (rank >= c.scale_up_domain) break;
        for (std::size_t k = 0; k < c.torus_shape.size(); ++k) {
            seen[k].insert(rank % c.torus_shape[k]);
            rank /= c.torus_shape[k];
        }
    }
    std::vector<std::int64_t> out;
    for (const auto& s : seen) out.push_back(std::max<std::int64_t>(1, std::int64_t(s.size())));
    return out;
}

}  // namespace

TEST(TorusExtents, ClosedFormsAgreeWithCountingEveryMember) {
    for (const char* shape : {"12x16x16", "4x4x8", "5x7x3", "6x10"}) {
        std::vector<std::int64_t> dims = parse_torus_shape(shape);
        std::int64_t n = 1;
        for (std::int64_t d : dims) n *= d;
        Cluster c = slice(shape, n);
        for (std::int64_t stride = 1; stride <= 40; ++stride)
            for (std::int64_t size : {std::int64_t{2}, std::int64_t{3}, std::int64_t{8}, std::int64_t{12}, n / 2, n}) {
                CollectiveGroup g{size, stride};
                EXPECT_EQ(torus_span(g, c).extents, counted_extents(g, c)) << shape << " stride " << stride << " size " << size;
                CollectiveGroup runs{size, stride, 2, 1};
                EXPECT_EQ(torus_span(runs, c).extents, counted_extents(runs, c)) << shape << " runs, stride " << stride;
            }
    }
}

TEST(TorusExtents, AGroupOfMillionsOnAUsersPodIsSpannedWithoutVisitingEachMember) {
    // A user's sheet may describe a pod of 2^24 chips: its data-parallel group's span comes in closed form.
    Cluster c;
    c.torus_shape = {256, 256, 256};
    c.scale_up_domain = std::int64_t{1} << 24;
    c.torus_closed = {true, true, true};
    EXPECT_EQ(torus_span({std::int64_t{1} << 24, 1}, c).extents, (std::vector<std::int64_t>{256, 256, 256}));
    EXPECT_EQ(torus_span({std::int64_t{1} << 16, 256}, c).extents, (std::vector<std::int64_t>{1, 256, 256}));
    // Neither stride nor side divides the other: counted up to 65,536 members, the rest extrapolated.
    std::vector<std::int64_t> e = torus_span({std::int64_t{1} << 23, 2, 2, 1}, c).extents;
    for (std::size_t k = 0; k < e.size(); ++k) EXPECT_TRUE(e[k] >= 1 && e[k] <= 256) << k;
}
