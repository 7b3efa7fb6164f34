// The sliding-window length (ops/window.hpp) that the op catalogue, the Keras importer and the ONNX importer
// all read.
#include "ops/window.hpp"

#include <gtest/gtest.h>

namespace prenet::ops {
namespace {

TEST(Window, FloorModeCountsTheWindowsThatFitThePaddedInput) {
    EXPECT_EQ(window_output(224, 7, 2, 6, false), 112);  // ResNet's stem: (224 + 6 - 7) / 2 + 1
    EXPECT_EQ(window_output(5, 2, 2, 0, false), 2);       // the last element is left over
    EXPECT_EQ(window_output(3, 3, 1, 0, false), 1);       // exactly one window
}

TEST(Window, AWindowLargerThanThePaddedInputGivesNothing) {
    EXPECT_EQ(window_output(2, 3, 1, 0, false), std::nullopt);
    EXPECT_EQ(window_output(2, 5, 1, 2, true), std::nullopt);
    EXPECT_EQ(window_output(2, 4, 1, 2, false), 1);  // the padding makes it fit
}

TEST(Window, CeilModeKeepsAPartialLastWindowUnlessItStartsInTheEndPadding) {
    EXPECT_EQ(window_output(5, 2, 2, 0, true), 3);  // a last window over the last element alone
    EXPECT_EQ(window_output(6, 2, 2, 0, true), 3);  // nothing partial: as floor mode
    EXPECT_EQ(window_output(112, 3, 2, 2, true), 57);  // ceil(111 / 2) + 1; floor mode gives 56
    // 5 + 2 - 2 = 5 -> ceil(5 / 2) + 1 = 4, but the 4th window would start at 6, in the end padding: dropped.
    EXPECT_EQ(window_output(5, 2, 2, 2, true), 3);
}

TEST(Window, SamePaddingIsTheCeilingOfInputOverStride) {
    EXPECT_EQ(same_padding_output(7, 2), 4);
    EXPECT_EQ(same_padding_output(8, 2), 4);
    EXPECT_EQ(same_padding_output(5, 1), 5);
}

}  // namespace
}  // namespace prenet::ops
