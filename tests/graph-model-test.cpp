// Shapes (graph/model.hpp): their element counts are checked, and they print as a list.
#include "graph/model.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace prenet {
namespace {

TEST(Shape, ElementsIsTheCheckedProduct) {
    EXPECT_EQ(elements({8, 1024, 768}), 8 * 1024 * 768);
    EXPECT_EQ(elements({}), 1);
    EXPECT_THROW(elements({std::int64_t{1} << 32, std::int64_t{1} << 32}), Error);
}

TEST(Shape, PrintsBatchFirstInBrackets) { EXPECT_EQ(to_string(Shape{2, 3, 4}), "[2,3,4]"); }

}  // namespace
}  // namespace prenet
