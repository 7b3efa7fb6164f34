// fit/svg_plot.hpp: a scatter is an SVG with its title and a point per measured/predicted pair.
#include "fit/svg_plot.hpp"

#include <gtest/gtest.h>

namespace prenet {
namespace {

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

TEST(SvgPlot, OnePointPerPairUnderItsTitle) {
    std::string svg = scatter_svg("gemm on t4", {{"t4", {1.0, 10.0, 100.0}, {1.1, 9.0, 120.0}}});
    EXPECT_EQ(svg.rfind("<svg", 0), 0u);
    EXPECT_NE(svg.find("gemm on t4"), std::string::npos);
    EXPECT_EQ(count(svg, "r='1.3'"), 3u);  // the points; the legend has its own marker
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

}  // namespace
}  // namespace prenet
