// Attribute readers of the op families (ops/op_support.hpp): what a layer's attrs may be, and errors naming
// the layer and the field.
#include "ops/op_support.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace prenet {
namespace {

Layer layer(json attrs) {
    Layer l;
    l.kind = "conv2d";
    l.name = "stem";
    l.attrs = std::move(attrs);
    l.input = {2, 3, 8, 8};
    return l;
}

std::string message(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    ADD_FAILURE() << "no error";
    return "";
}

TEST(OpSupport, RequiredAndOptionalIntegers) {
    EXPECT_EQ(ops::int_attr(layer({{"out_channels", 16}}), "out_channels"), 16);
    EXPECT_EQ(ops::int_attr(layer({}), "padding", 0), 0);
    std::string missing = message([] { ops::int_attr(layer({}), "out_channels"); });
    EXPECT_NE(missing.find("stem"), std::string::npos) << missing;
    EXPECT_NE(missing.find("out_channels"), std::string::npos) << missing;
    EXPECT_THROW(ops::int_attr(layer({{"out_channels", 0}}), "out_channels"), Error);
    EXPECT_THROW(ops::int_attr(layer({{"padding", -1}}), "padding", 0), Error);
}

TEST(OpSupport, AnIntOrAListOfRankInts) {
    EXPECT_EQ(ops::ints_attr(layer({{"kernel_size", 3}}), "kernel_size", 2, 1), (std::vector<std::int64_t>{3, 3}));
    EXPECT_EQ(ops::ints_attr(layer({{"kernel_size", {3, 5}}}), "kernel_size", 2, 1), (std::vector<std::int64_t>{3, 5}));
    EXPECT_EQ(ops::ints_attr(layer({}), "stride", 2, 1), (std::vector<std::int64_t>{1, 1}));
    EXPECT_THROW(ops::ints_attr(layer({{"kernel_size", {3, 5, 7}}}), "kernel_size", 2, 1), Error);
}

TEST(OpSupport, RanksAndDims) {
    EXPECT_NO_THROW(ops::require_rank(layer({}), 4, 4));
    EXPECT_THROW(ops::require_rank(layer({}), 2, 3), Error);
    EXPECT_EQ(ops::last_dim({2, 3, 8}), 8);
    EXPECT_EQ(ops::leading_elements({2, 3, 8}), 6);
}

}  // namespace
}  // namespace prenet
