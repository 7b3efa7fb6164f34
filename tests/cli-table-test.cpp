// cli/table.hpp: user strings cannot drive the terminal, and a listing shows what its document holds.
#include "cli/table.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace prenet::cli {
namespace {

TEST(Table, ControlCharactersAreWrittenOut) {
    EXPECT_EQ(terminal_safe("plain\nlines"), "plain\nlines");
    std::string escaped = terminal_safe("a\x1b]0;title\x07z");
    EXPECT_EQ(escaped.find('\x1b'), std::string::npos);
    EXPECT_EQ(escaped.find('\x07'), std::string::npos);
    EXPECT_NE(escaped.find("title"), std::string::npos);
    EXPECT_EQ(terminal_safe("\xc2\x9b").find("\xc2\x9b"), std::string::npos);  // C1 CSI as UTF-8
    EXPECT_EQ(terminal_safe("caf\xc3\xa9"), "caf\xc3\xa9");                    // other UTF-8 stays
}

TEST(Table, TheZooListingNamesEachModel) {
    std::ostringstream out;
    print_zoo_table(out, {{"models", {{{"id", "tiny-net"}, {"domain", "vision"}, {"description", "a test"}}}}});
    EXPECT_NE(out.str().find("tiny-net"), std::string::npos);
    EXPECT_NE(out.str().find("a test"), std::string::npos);
}

}  // namespace
}  // namespace prenet::cli
