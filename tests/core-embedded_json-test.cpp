#include "core/embedded_json.hpp"

#include <cstdio>
#include <cmath>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "core/embedded.hpp"

namespace prenet {
namespace {

using nlohmann::json;

// dump() tells 1 from 1.0 and prints every double to 17 digits, so equal dumps mean the same types and bits.
void expect_same_as_nlohmann(const std::string& text) {
    SCOPED_TRACE(text);
    EXPECT_EQ(parse_embedded_json(text).dump(), json::parse(text).dump());
}

TEST(EmbeddedJson, EveryEmbeddedFileParsesAsNlohmannParsesIt) {
    ASSERT_FALSE(embedded_files().empty());
    for (const auto& f : embedded_files())
        if (f.path.size() > 5 && f.path.compare(f.path.size() - 5, 5, ".json") == 0) {
            SCOPED_TRACE(f.path);
            EXPECT_EQ(parse_embedded_json(f.contents).dump(), json::parse(f.contents).dump());
        }
}

TEST(EmbeddedJson, NumbersKeepNlohmannsTypesAndBits) {
    for (const char* text : {"0", "-0", "-0.0", "7", "-12", "123456789012345678", "-123456789012345678",
                             "1234567890123456789012", "0.5", "0.000123", "8.93748e-17", "1e22", "1e23", "1E-22",
                             "4.9e-324", "1.7976931348623157e308", "0.1234567890123456789", "1.5e+300",
                             "100000000000000000000000.5", "12e3", "1e-400"})
        expect_same_as_nlohmann(std::string("[") + text + "]");
    EXPECT_TRUE(parse_embedded_json("[-0]")[0].is_number_integer());
    EXPECT_TRUE(parse_embedded_json("[7]")[0].is_number_unsigned());
    EXPECT_TRUE(parse_embedded_json("[7.0]")[0].is_number_float());
}

// The fast path (at most 15 digits, exponent within +-22) against strtod, at the precisions the fit writes (9
// digits), shortest round trips and beyond.
TEST(EmbeddedJson, DecimalsMatchStrtodBitForBit) {
    std::mt19937_64 random(24);
    std::uniform_real_distribution<double> mantissa(-10, 10);
    std::uniform_int_distribution<int> exponent(-30, 30);
    char text[64];
    for (int i = 0; i < 5000; ++i) {
        double x = mantissa(random) * std::pow(10.0, exponent(random));
        for (const char* format : {"%.9g", "%.15g", "%.17g", "%.6f"}) {
            std::snprintf(text, sizeof text, format, x);
            double parsed = parse_embedded_json(std::string("[") + text + "]")[0].get<double>();
            double expected = std::strtod(text, nullptr);
            ASSERT_EQ(std::memcmp(&parsed, &expected, sizeof parsed), 0) << text;
        }
    }
}

TEST(EmbeddedJson, StringsObjectsAndLiterals) {
    expect_same_as_nlohmann(R"({"b": [true, false, null], "a": "x\"y\\z\/\n\t", "a": {"nested": []}, "e": {}})");
    expect_same_as_nlohmann(R"("caf\u00e9 \ud83d\ude00")");  // \u escapes: nlohmann's own parse
    expect_same_as_nlohmann(" \n[ 1 , 2 ]\t");
}

TEST(EmbeddedJson, MalformedTextFailsAsNlohmannFails) {
    for (const char* text : {"[1,]", "[01]", "[1.]", "[.5]", "[1e]", "{\"a\" 1}", "[1e400]", "tru", "[1] x", ""}) {
        SCOPED_TRACE(text);
        EXPECT_THROW(parse_embedded_json(text), json::exception);
        EXPECT_TRUE(parse_embedded_json(text, false).is_discarded());
    }
}

}  // namespace
}  // namespace prenet
