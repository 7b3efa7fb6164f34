#pragma once
// Quantities in the words the CLI and the API's messages print them in, one rule each.
//
// Memory as people read it: in GiB (2^30 bytes). Frameworks report peaks in GiB (torch.cuda.memory_summary,
// nvidia-smi's MiB) and vendors' "80GB" parts hold 80 GiB (hardware/spec.cpp), so a capacity prints as the
// number on the box and a peak as the number a user's profiler shows. Every memory figure the CLI and the API's
// messages print goes through here; the page's format.js says the same in JS (`gib`).
#include <cstdint>
#include <string>

namespace prenet {

inline constexpr double kBytesPerGiB = 1073741824.0;

// bytes / 2^30, as a number.
inline double to_gib(double bytes) { return bytes / kBytesPerGiB; }

// "12.3 GiB" (`decimals` after the point).
std::string gib_text(double bytes, int decimals = 1);

// A duration from milliseconds, three significant digits, as the page prints step times: "64.8 ms", "1.67 s",
// "1,234 s" (never an exponent).
std::string duration_text(double ms);

// A whole number with its thousands grouped: 16384 as "16,384".
std::string grouped(std::int64_t n);

// A large count in words, three significant digits: 1.64e9 as "1.64 billion", 410e6 as "410 million"; below
// a million, grouped ("65,536").
std::string count_words(double n);

}  // namespace prenet
