// hardware/link.hpp: link kinds by name, and network specs ("8x400g-ib") in GB/s per node, or an error of the
// network field.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "hardware/link.hpp"
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

TEST(LinkKind, NamesRoundTrip) {
    for (LinkKind k : {LinkKind::nvlink, LinkKind::infinity_fabric, LinkKind::ici, LinkKind::pcie,
                       LinkKind::infiniband, LinkKind::roce, LinkKind::ethernet})
        EXPECT_EQ(link_kind_from_string(to_string(k)), k);
    EXPECT_FALSE(link_kind_from_string("token-ring"));
}
