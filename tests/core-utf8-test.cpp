// The one sanitiser of imported text (core/utf8.hpp): valid UTF-8 passes unchanged, each maximal ill-formed
// subsequence becomes one U+FFFD (the Unicode Standard's recommended practice), and the result is always text
// nlohmann can dump.
#include "core/utf8.hpp"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace prenet {
namespace {

const std::string R = "\xEF\xBF\xBD";  // U+FFFD

TEST(Utf8, ValidTextIsUnchanged) {
    for (std::string s : {std::string(""), std::string("conv1.weight"), std::string("caf\xC3\xA9"),
                          std::string("\xE2\x82\xAC 5"), std::string("\xF0\x9F\x98\x80"), std::string("a\0b", 3),
                          std::string("\xED\x9F\xBF"), std::string("\xF4\x8F\xBF\xBF"), std::string("\xEF\xBF\xBD")})
        EXPECT_EQ(valid_utf8(s), s);
}

TEST(Utf8, IllFormedSequencesAreReplaced) {
    EXPECT_EQ(valid_utf8("a\xFF" "b"), "a" + R + "b");             // never a UTF-8 byte
    EXPECT_EQ(valid_utf8("\x80\x80"), R + R);                      // stray continuations: one each
    EXPECT_EQ(valid_utf8("\xC0\xAF"), R + R);                      // overlong '/' (C0 is never a lead byte)
    EXPECT_EQ(valid_utf8("\xE0\x80\xAF"), R + R + R);              // overlong 3-byte: E0 needs A0..BF next
    EXPECT_EQ(valid_utf8("\xED\xA0\x80"), R + R + R);              // a surrogate (U+D800)
    EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), R + R + R + R);      // past U+10FFFF
    EXPECT_EQ(valid_utf8("\xF5\x80"), R + R);                      // F5..FF are never lead bytes
    EXPECT_EQ(valid_utf8("x\xC3"), "x" + R);                       // cut short at the end
    EXPECT_EQ(valid_utf8("\xE2\x82" "x"), R + "x");                // cut short: its maximal subpart, one U+FFFD
    EXPECT_EQ(valid_utf8("\xF0\x9F\x98" "\xC3\xA9"), R + "\xC3\xA9");  // and what follows is read afresh
}

TEST(Utf8, TheResultAlwaysDumps) {
    // Every two-byte string: the sanitised text is JSON nlohmann can write (raw bytes make it throw 316).
    for (int a = 0; a < 256; ++a)
        for (int b = 0; b < 256; b += 7) {
            std::string s{char(a), char(b), '\xE2'};
            EXPECT_NO_THROW(nlohmann::json(valid_utf8(s)).dump()) << a << " " << b;
        }
    EXPECT_THROW(nlohmann::json(std::string("\xFF")).dump(), nlohmann::json::type_error);  // why it exists
}

}  // namespace
}  // namespace prenet
