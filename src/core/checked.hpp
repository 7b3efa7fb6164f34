#pragma once
// Checked 64-bit arithmetic for counts (parameters, tensor elements). A model whose counts do not fit in
// int64 is bad input, reported as an Error rather than silently wrapping.
#include <cstdint>
#include <string>

#include "core/error.hpp"

namespace prenet {

inline std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what = "count") {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) throw Error(std::string(what) + " overflows a 64-bit integer");
    return r;
}

inline std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* what = "count") {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) throw Error(std::string(what) + " overflows a 64-bit integer");
    return r;
}

}  // namespace prenet
