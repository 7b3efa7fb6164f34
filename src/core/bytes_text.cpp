#include "core/bytes_text.hpp"

#include <cstdio>

namespace prenet {

std::string gib_text(double bytes, int decimals) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*f GiB", decimals, to_gib(bytes));
    return buf;
}

}  // namespace prenet
