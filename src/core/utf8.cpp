#include "core/utf8.hpp"

namespace prenet {

std::string valid_utf8(std::string_view s) {
    static constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD
    std::string out;
    out.reserve(s.size());
    std::size_t i = 0;
    while (i < s.size()) {
        auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            out += char(c);
            ++i;
            continue;
        }
        // The well-formed sequences (Unicode Table 3-7): the lead byte fixes the length and the second byte's range.
        int continuation = 0;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) continuation = 1;
        else if (c >= 0xE0 && c <= 0xEF) continuation = 2, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        else if (c >= 0xF0 && c <= 0xF4) continuation = 3, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        if (!continuation) {  // not a lead byte: C0, C1, F5..FF or a stray continuation
            out += kReplacement;
            ++i;
            continue;
        }
        std::size_t j = i + 1;
        for (int k = 0; k < continuation && j < s.size(); ++k, ++j) {
            auto d = static_cast<unsigned char>(s[j]);
            if (d < (k == 0 ? lo : 0x80) || d > (k == 0 ? hi : 0xBF)) break;
        }
        if (j - i == std::size_t(continuation) + 1) out.append(s.substr(i, j - i));
        else out += kReplacement;  // the maximal subpart of a sequence cut short: one replacement
        i = j;
    }
    return out;
}

}  // namespace prenet
