// cli/args.hpp: the command, flags with values, switches and their words; anything else is an error.
#include "cli/args.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace prenet::cli {
namespace {

Args parse(const std::vector<std::string>& argv) {
    return parse_args(argv, {"model", "batch"}, {"json", "checkpointing"}, {{"checkpointing", {"selective"}}});
}

TEST(Args, CommandValuesAndSwitches) {
    Args a = parse({"predict", "--model", "gpt2", "--json", "--batch", "4"});
    EXPECT_EQ(a.command, "predict");
    EXPECT_EQ(a.get("model"), "gpt2");
    EXPECT_EQ(a.get("batch"), "4");
    EXPECT_TRUE(a.has("json"));
    EXPECT_FALSE(a.has("checkpointing"));
    EXPECT_EQ(a.get("checkpointing", "none"), "none");
}

TEST(Args, ASwitchTakesOnlyItsWords) {
    EXPECT_EQ(parse({"predict", "--checkpointing", "selective"}).get("checkpointing"), "selective");
    Args alone = parse({"predict", "--checkpointing", "--json"});
    EXPECT_TRUE(alone.has("checkpointing"));
    EXPECT_TRUE(alone.has("json"));
}

TEST(Args, UnknownFlagsAndMissingValuesAreErrors) {
    EXPECT_THROW(parse({"predict", "--nonsense", "1"}), Error);
    EXPECT_THROW(parse({"predict", "--model"}), Error);
    EXPECT_THROW(parse({"predict", "--batch", "1", "--batch", "2"}), Error);
    EXPECT_THROW(parse({"predict", "stray"}), Error);
}

}  // namespace
}  // namespace prenet::cli
