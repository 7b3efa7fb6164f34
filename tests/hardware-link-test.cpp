// hardware/link.hpp: link kinds by name, and network specs ("8x400g-ib") in GB/s per node, or an error of the
// network field.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "hardware/link.hpp"
#include "hardware/spec.hpp"
#include "test-helpers.hpp"

using namespace prenet;

using prenet::testing::error_field;

TEST(ParseNetwork, NicsTimesGbpsInGBps) {
    Link ib = parse_network("8x400g-ib");
    EXPECT_EQ(ib.kind, LinkKind::infiniband);
    EXPECT_DOUBLE_EQ(ib.gbps, 400.0);  // 8 x 400 Gb/s = 3200 Gb/s = 400 GB/s
    EXPECT_EQ(ib.name, "8x400g-ib");
    Link roce = parse_network("roce-3200g");
    EXPECT_EQ(roce.kind, LinkKind::roce);
    EXPECT_DOUBLE_EQ(roce.gbps, 400.0);
    Link eth = parse_network("ethernet-100g");
    EXPECT_EQ(eth.kind, LinkKind::ethernet);
    EXPECT_DOUBLE_EQ(eth.gbps, 12.5);
}

TEST(ParseNetwork, ObviousVariants) {
    EXPECT_DOUBLE_EQ(parse_network("4x200g-roce").gbps, 100.0);
    EXPECT_EQ(parse_network("4x200g-roce").kind, LinkKind::roce);
    EXPECT_DOUBLE_EQ(parse_network("ib-1600g").gbps, 200.0);
    EXPECT_DOUBLE_EQ(parse_network("IB-8x400G").gbps, 400.0);
    EXPECT_DOUBLE_EQ(parse_network("infiniband-3.2t").gbps, 400.0);
    EXPECT_DOUBLE_EQ(parse_network("8x400gb-ib").gbps, 400.0);
    EXPECT_EQ(parse_network("eth-25g").kind, LinkKind::ethernet);
}

TEST(ParseNetwork, BadSpecsAreErrorsOfTheNetworkField) {
    for (const char* bad : {"", "400g", "ib", "8x400g-nvlink", "x400g-ib", "8x-ib", "8x400q-ib", "0x400g-ib",
                            "8x400g-ib-roce", "1.5x400g-ib", "400g-ib-extra", "ib-0g", "1.2.3g-ib",
                            "8x9999999t-ib", "999999x800000g-ib"}) {
        EXPECT_EQ(error_field([&] { parse_network(bad); }), "network") << bad;
    }
}

// Issue #27: 8 NICs of 10^-31 Gb/s gave a step of 9.7e35 ms, and "-8x400g-ib" read its sign as a separator.
// A node's network has the range of any bandwidth on a sheet (kMinPlausibleGBps .. kPlausibleGBps GB/s).
TEST(ParseNetwork, NodeRatesHaveTheSheetsBandwidthRange) {
    EXPECT_DOUBLE_EQ(parse_network("ib-0.008g").gbps, kMinPlausibleGBps);  // 8 Mb/s: the slowest network
    EXPECT_DOUBLE_EQ(parse_network("ib-800t").gbps, kPlausibleGBps);       // 800 Tb/s: the fastest
    for (const char* bad : {"ib-0.007g", "8x0.0000000000000000000000000000001g-ib", "999999x0.000000001g-ib",
                            "ib-800.1t", "-8x400g-ib", "8x400g-ib-", "8x400g--ib", "ib--8x400g", "-ib-400g"})
        EXPECT_EQ(error_field([&] { parse_network(bad); }), "network") << bad;
}

TEST(ParseNetwork, MessagesNameTheNetworkAsTheUserGaveIt) {
    try {
        parse_network("8x0.00000001g-ib", "--network");
        FAIL() << "accepted";
    } catch (const Error& e) {
        std::string m = e.what();
        EXPECT_EQ(m.rfind("--network '8x0.00000001g-ib' is slower than any network", 0), 0u) << m;
        EXPECT_NE(m.find("0.001"), std::string::npos) << m;  // the limit
    }
    try {
        parse_network("-8x400g-ib", "cluster.network");
        FAIL() << "accepted";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()).rfind("cluster.network '-8x400g-ib' has an empty part", 0), 0u) << e.what();
    }
}

TEST(LinkKind, NamesRoundTrip) {
    for (LinkKind k : {LinkKind::nvlink, LinkKind::infinity_fabric, LinkKind::ici, LinkKind::pcie,
                       LinkKind::infiniband, LinkKind::roce, LinkKind::ethernet})
        EXPECT_EQ(link_kind_from_string(to_string(k)), k);
    EXPECT_FALSE(link_kind_from_string("token-ring"));
}
