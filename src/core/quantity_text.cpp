#include "core/quantity_text.hpp"

#include <cstdio>

namespace prenet {

std::string gib_text(double bytes, int decimals) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*f GiB", decimals, to_gib(bytes));
    return buf;
}

std::string duration_text(double ms) {
    char buf[48];
    if (ms < 999.5) std::snprintf(buf, sizeof buf, "%.3g ms", ms);
    else if (ms < 999.5e3) std::snprintf(buf, sizeof buf, "%.3g s", ms / 1e3);
    else return grouped(std::int64_t(ms / 1e3 + 0.5)) + " s";
    return buf;
}

std::string grouped(std::int64_t n) {
    std::string digits = std::to_string(n), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') out += ',';
        out += digits[i];
    }
    return out;
}

std::string count_words(double n) {
    static const struct { double scale; const char* word; } kScales[] = {
        {1e15, "quadrillion"}, {1e12, "trillion"}, {1e9, "billion"}, {1e6, "million"}};
    for (const auto& s : kScales)
        if (n >= s.scale) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.3g %s", n / s.scale, s.word);
            return buf;
        }
    return grouped(std::int64_t(n));
}

}  // namespace prenet
