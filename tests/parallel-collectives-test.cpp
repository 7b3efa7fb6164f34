// parallel/collectives.hpp: bus factors, ring volumes, where a group sits, hierarchical composition, and the
// shipped fit against the measurements it was fitted on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

#include "core/error.hpp"
#include "hardware/spec.hpp"
#include "parallel/collective_rows.hpp"
#include "parallel/collectives.hpp"

using namespace prenet;
using nlohmann::json;

namespace {

Cluster cluster_of(const std::string& id, std::int64_t gpus, std::optional<std::int64_t> per_node = std::nullopt) {
    return make_cluster(find_hardware(id), {gpus, per_node, std::nullopt});
}

// A model with round numbers, so the formulas can be checked by hand.
CollectiveModel simple_model() {
    CollectiveModel m;
    m.links[LinkKind::nvlink] = {0.5, 2.0, 10.0, 0.0, true};
    m.links[LinkKind::infiniband] = {0.8, 5.0, 20.0, 0.0, true};
    m.fallback = {0.5, 5.0, 10.0, 0.0, false};
    return m;
}

}  // namespace

TEST(BusFactor, NcclTestsConventions) {
    for (std::int64_t n : {2, 4, 8, 72}) {
        EXPECT_DOUBLE_EQ(bus_factor(Collective::all_reduce, n), 2.0 * double(n - 1) / double(n));
        EXPECT_DOUBLE_EQ(bus_factor(Collective::all_gather, n), double(n - 1) / double(n));
        EXPECT_DOUBLE_EQ(bus_factor(Collective::reduce_scatter, n), double(n - 1) / double(n));
        EXPECT_DOUBLE_EQ(bus_factor(Collective::all_to_all, n), double(n - 1) / double(n));
    }
    EXPECT_DOUBLE_EQ(bus_factor(Collective::all_reduce, 8), 1.75);
    EXPECT_DOUBLE_EQ(bus_factor(Collective::send_recv, 2), 1.0);
    EXPECT_DOUBLE_EQ(bus_factor(Collective::all_reduce, 1), 0.0);
}

TEST(RingTerms, AllReduceMovesTwiceNMinusOneOverNOfTheBuffer) {
    RingTerms t = ring_terms(Collective::all_reduce, 1e9, 8);
    EXPECT_DOUBLE_EQ(t.bus_bytes, 1.75e9);  // reduce-scatter then all-gather: 2 x 7/8 of the buffer
    EXPECT_DOUBLE_EQ(t.steps, 14);
    EXPECT_DOUBLE_EQ(ring_terms(Collective::all_gather, 1e9, 8).steps, 7);
    EXPECT_DOUBLE_EQ(ring_terms(Collective::all_to_all, 8e6, 4).bus_bytes, 6e6);
    EXPECT_DOUBLE_EQ(ring_terms(Collective::all_reduce, 1e9, 1).bus_bytes, 0);
}

TEST(Collectives, NamesRoundTripAndNcclSpelling) {
    for (Collective c : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                         Collective::all_to_all, Collective::send_recv})
        EXPECT_EQ(collective_from_string(to_string(c)), c);
    EXPECT_EQ(collective_from_string("alltoall"), Collective::all_to_all);
    EXPECT_FALSE(collective_from_string("broadcast"));
}

TEST(GroupSpan, RanksFillADomainFirst) {
    Cluster c = cluster_of("h100-sxm5-80gb", 64);  // 8 nodes of 8
    GroupSpan tp = group_span({8, 1}, c);
    EXPECT_EQ(tp.per_domain, 8);
    EXPECT_EQ(tp.domains, 1);
    GroupSpan dp = group_span({8, 8}, c);  // one rank per node: dp over tp=8
    EXPECT_EQ(dp.per_domain, 1);
    EXPECT_EQ(dp.domains, 8);
    GroupSpan mixed = group_span({16, 2}, c);  // stride 2: 4 per node over 4 nodes
    EXPECT_EQ(mixed.per_domain, 4);
    EXPECT_EQ(mixed.domains, 4);
    GroupSpan wide = group_span({32, 1}, c);
    EXPECT_EQ(wide.per_domain, 8);
    EXPECT_EQ(wide.domains, 4);
    // An NVL72 rack keeps 64 contiguous devices in one domain although they span 16 trays.
    GroupSpan rack = group_span({64, 1}, cluster_of("gb200", 72));
    EXPECT_EQ(rack.per_domain, 64);
    EXPECT_EQ(rack.domains, 1);
}

TEST(GroupSpan, RunsOfAdjacentRanksSpreadByTheirStride) {
    Cluster c = cluster_of("h100-sxm5-80gb", 64);  // 8 nodes of 8
    // Runs of 4 adjacent ranks, 8 apart (an expert group over tp 4 with cp 2): one run per node.
    GroupSpan two = group_span({8, 8, 4, 1}, c);
    EXPECT_EQ(two.per_domain, 4);
    EXPECT_EQ(two.domains, 2);
    // Runs of 2, 4 apart: two runs per node.
    GroupSpan packed = group_span({8, 4, 2, 1}, c);
    EXPECT_EQ(packed.per_domain, 4);
    EXPECT_EQ(packed.domains, 2);
    // Runs of 2 members 4 apart (cp ranks over tp 4), runs 16 apart: each run's two members share a node.
    GroupSpan cp_runs = group_span({8, 16, 2, 4}, c);
    EXPECT_EQ(cp_runs.per_domain, 2);
    EXPECT_EQ(cp_runs.domains, 4);
    // Runs of one are plain strided groups.
    EXPECT_EQ(group_span({16, 2, 1, 1}, c).per_domain, group_span({16, 2}, c).per_domain);
}

TEST(CollectiveTime, AllToAllAcrossDomainsPaysAStepPerPeer) {
    CollectiveModel m = simple_model();
    m.links[LinkKind::infiniband].pipeline = 0.5;
    Cluster c = cluster_of("h100-sxm5-80gb", 16);  // 2 nodes of 8, 8x400g-ib: 50 GB/s per device
    const double s = 16e6;
    // 16 members, 8 per node: S/16 to each peer. Inside: 7 peers, 7/16 S over NVLink (450 GB/s, efficiency 0.5,
    // 2 us a step); across: 8 peers (n - P, not D - 1 = 1), 8/16 S over the NIC share (50 GB/s, efficiency 0.8,
    // 5 us a step, pipelining 0.5 x sqrt(steps x 1 us x transfer)). Both at once; one base cost (20 us).
    const double inside = 7 * 2e-3 + (7.0 / 16) * s / (0.5 * 450e9) * 1e3;
    const double transfer = (8.0 / 16) * s / 50e9 * 1e3;
    const double across = 8 * 5e-3 + transfer / 0.8 + 0.5 * std::sqrt(8 * 1e-3 * transfer);
    ASSERT_GT(across, inside);
    EXPECT_NEAR(m.time_ms(Collective::all_to_all, s, {16, 1}, c), 20e-3 + across, 1e-12);
}

TEST(CollectiveTime, OneDomainIsBasePlusStepsPlusBandwidth) {
    CollectiveModel m = simple_model();
    Cluster c = cluster_of("h100-sxm5-80gb", 8);  // 450 GB/s one direction
    double bytes = 1e9;
    double expected = 10e-3 + 14 * 2e-3 + 1.75e9 / (0.5 * 450e9) * 1e3;
    EXPECT_NEAR(m.time_ms(Collective::all_reduce, bytes, {8, 1}, c), expected, 1e-12);
}

TEST(CollectiveTime, GroupOfOneOrNothingCostsZero) {
    const CollectiveModel& m = CollectiveModel::shipped();
    Cluster c = cluster_of("h100-sxm5-80gb", 16);
    for (Collective op : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                          Collective::all_to_all, Collective::send_recv}) {
        EXPECT_EQ(m.time_ms(op, 1e9, {1, 1}, c), 0.0);
        EXPECT_EQ(m.time_ms(op, 0, {8, 1}, c), 0.0);
    }
}

TEST(CollectiveTime, HierarchicalAllReduceFollowsItsFormula) {
    CollectiveModel m = simple_model();
    Cluster c = cluster_of("h100-sxm5-80gb", 16);  // 2 nodes of 8, 8x400g-ib: 50 GB/s per device
    double s = 8e9;
    // reduce-scatter inside (7 steps, 7/8 S), all-reduce of S/8 across 2 nodes (2 steps, 1 x S/8 per member,
    // the ring beating the tree), all-gather inside; one base cost (the larger of the two links').
    double inside = 7 * 2e-3 + (7.0 / 8.0) * s / (0.5 * 450e9) * 1e3;
    double across = 2 * 5e-3 + (s / 8) / (0.8 * 50e9) * 1e3;
    EXPECT_NEAR(m.time_ms(Collective::all_reduce, s, {16, 1}, c), 20e-3 + 2 * inside + across, 1e-9);
}

TEST(CollectiveTime, SpanningDomainsIsSlowerThanOneDomain) {
    const CollectiveModel& m = CollectiveModel::shipped();
    // The same 8-member group: inside one HGX node, or one member on each of 8 nodes.
    Cluster c = cluster_of("h100-sxm5-80gb", 64);
    for (Collective op : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                          Collective::all_to_all}) {
        for (double bytes : {1e6, 1e8, 1e9}) {
            double inside = m.time_ms(op, bytes, {8, 1}, c), across = m.time_ms(op, bytes, {8, 8}, c);
            EXPECT_GT(across, inside) << to_string(op) << " " << bytes;
        }
    }
    // 16 devices over two nodes take longer than 8 in one, per byte of buffer.
    EXPECT_GT(m.time_ms(Collective::all_reduce, 1e9, {16, 1}, c), m.time_ms(Collective::all_reduce, 1e9, {8, 1}, c));
    // A slower network makes the cross-node collective slower, the in-node one not.
    Cluster slow = make_cluster(find_hardware("h100-sxm5-80gb"), {64, std::nullopt, std::string("ethernet-100g")});
    EXPECT_GT(m.time_ms(Collective::all_reduce, 1e9, {8, 8}, slow), m.time_ms(Collective::all_reduce, 1e9, {8, 8}, c));
    EXPECT_DOUBLE_EQ(m.time_ms(Collective::all_reduce, 1e9, {8, 1}, slow),
                     m.time_ms(Collective::all_reduce, 1e9, {8, 1}, c));
}

TEST(CollectiveTime, MonotonicInSizeAndGroup) {
    const CollectiveModel& m = CollectiveModel::shipped();
    for (const char* id : {"a100-sxm4-80gb", "l40s", "mi300x", "gb200"}) {
        Cluster c = cluster_of(id, 64, std::string(id) == "gb200" ? std::nullopt : std::optional<std::int64_t>(8));
        for (Collective op : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                              Collective::all_to_all}) {
            for (CollectiveGroup g : {CollectiveGroup{4, 1}, CollectiveGroup{8, 1}, CollectiveGroup{16, 1},
                                      CollectiveGroup{8, 8}}) {
                double last = 0;
                for (double bytes = 256; bytes <= 4e9; bytes *= 4) {
                    double t = m.time_ms(op, bytes, g, c);
                    EXPECT_GT(t, last) << id << " " << to_string(op) << " " << bytes;
                    last = t;
                }
            }
        }
    }
}

TEST(CollectiveModel, JsonRoundTripAndBadDocuments) {
    CollectiveModel m = simple_model();
    CollectiveModel back = CollectiveModel::from_json(m.to_json());
    Cluster c = cluster_of("h100-sxm5-80gb", 16);
    EXPECT_DOUBLE_EQ(back.time_ms(Collective::all_gather, 1e8, {16, 1}, c),
                     m.time_ms(Collective::all_gather, 1e8, {16, 1}, c));
    EXPECT_THROW(CollectiveModel::from_json(json::object()), Error);
    EXPECT_THROW(CollectiveModel::from_json(json::parse(R"({"links": {"warp": {"efficiency": 1, "latency_us": 1}}})")),
                 Error);
    EXPECT_THROW(CollectiveModel::from_json(json::parse(R"({"links": {"nvlink": {"efficiency": 0, "latency_us": 1}}})")),
                 Error);
}

TEST(CollectiveModel, ShippedIsFittedOnMeasuredLinks) {
    const CollectiveModel& m = CollectiveModel::shipped();
    for (LinkKind k : {LinkKind::nvlink, LinkKind::pcie, LinkKind::infinity_fabric}) {
        ASSERT_TRUE(m.links.count(k)) << to_string(k);
        EXPECT_TRUE(m.links.at(k).fitted);
        EXPECT_GT(m.links.at(k).efficiency, 0.1);
        EXPECT_LT(m.links.at(k).efficiency, 1.5);
    }
    EXPECT_FALSE(m.fit(LinkKind::infiniband).fitted);  // no measured cross-node rows: the pooled fallback
    // Each measured collective has its own fit on NVLink; send/recv (not measured) uses the kind's.
    for (Collective op : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                          Collective::all_to_all})
        EXPECT_NE(&m.fit(LinkKind::nvlink, op), &m.fit(LinkKind::nvlink)) << to_string(op);
    EXPECT_EQ(&m.fit(LinkKind::nvlink, Collective::send_recv), &m.fit(LinkKind::nvlink));
    EXPECT_FALSE(m.fit(LinkKind::roce, Collective::all_reduce).fitted);
}

TEST(CollectiveModel, PerCollectiveFitsRoundTrip) {
    CollectiveModel m = simple_model();
    m.by_op[LinkKind::nvlink][Collective::all_to_all] = {0.25, 1.0, 30.0, 0.0, true};
    m.fallback_by_op[Collective::all_gather] = {0.4, 3.0, 7.0, 1.0, false};
    Cluster c = cluster_of("h100-sxm5-80gb", 8);
    // The all-to-all uses its own fit: base 30 us, a quarter of the link.
    double expected = 30e-3 + 7 * 1e-3 + (7.0 / 8.0) * 1e9 / (0.25 * 450e9) * 1e3;
    EXPECT_NEAR(m.time_ms(Collective::all_to_all, 1e9, {8, 1}, c), expected, 1e-12);
    CollectiveModel back = CollectiveModel::from_json(m.to_json());
    EXPECT_DOUBLE_EQ(back.time_ms(Collective::all_to_all, 1e9, {8, 1}, c), m.time_ms(Collective::all_to_all, 1e9, {8, 1}, c));
    EXPECT_DOUBLE_EQ(back.fit(LinkKind::roce, Collective::all_gather).efficiency, 0.4);
}

// The shipped model against the NCCL rows it was fitted on (data/collectives/nccl.csv, in-sample): within
// reason means a median error under 25% for the NVLink parts and every row within 3x.
TEST(CollectiveModel, ShippedReproducesFittedNvlinkData) {
    std::string path = std::string(PRENET_SOURCE_DIR) + "/data/collectives/nccl.csv";
    ASSERT_TRUE(std::filesystem::exists(path));
    CsvTable t = read_csv_file(path);
    int dev = t.column("device"), ms = t.column("latency_ms");
    std::vector<double> ape;
    double worst = 1;
    for (size_t r = 0; r < t.rows.size(); ++r) {
        const HardwareSpec& hw = find_hardware(t.rows[r][dev]);
        if (hw.scale_up_link != "nvlink") continue;
        CollectiveRow row = collective_row_of(t, r, hw, "row");
        double p = CollectiveModel::shipped().time_ms(row.op, row.message_bytes, row.group, row.cluster);
        double m = std::stod(t.rows[r][ms]);
        ape.push_back(std::abs(p - m) / m);
        worst = std::max(worst, std::max(p / m, m / p));
    }
    ASSERT_GT(ape.size(), 500u);
    std::sort(ape.begin(), ape.end());
    EXPECT_LT(ape[ape.size() / 2], 0.25);
    EXPECT_LT(worst, 3.0);
}
