// Limits on user input (core/limits.hpp): the nesting scan on raw text and on values, and documents past them.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "core/limits.hpp"

using namespace prenet;

TEST(Limits, TextDepthCountsBracketsOutsideStrings) {
    EXPECT_EQ(json_text_depth("{}"), 1);
    EXPECT_EQ(json_text_depth(R"({"a": [[1], {"b": 2}]})"), 3);
    EXPECT_EQ(json_text_depth(R"({"a": "[[[[\"{{"})"), 1);  // brackets and an escaped quote inside a string
    std::string deep(1000, '[');
    EXPECT_GT(json_text_depth(deep, 10), 10);  // stops early, past the limit
    EXPECT_LE(json_text_depth(deep, 10), 11);
}

TEST(Limits, DocumentsNestedPastTheLimitAreRefusedBeforeParsing) {
    std::string ok = std::string(limits::json_depth, '[') + std::string(limits::json_depth, ']');
    EXPECT_NO_THROW(parse_json_document(ok, "request"));
    std::string deep = "[" + ok + "]";
    EXPECT_THROW(parse_json_document(deep, "request"), Error);
    EXPECT_EQ(json_depth(parse_json_document(ok, "request")), limits::json_depth);
}
