#pragma once
// Parsing the JSON compiled into the binary (core/embedded.hpp): the hardware catalogue and the fitted kernel
// models, ~1.9 MB that every process parses on its first request. nlohmann's parser reads a character at a time
// through its input adapter and converts every decimal with strtod; under WebAssembly that start-up took
// ~640 ms of the page's first request (docs/performance.md). This reader takes the same text in one pass and
// converts most numbers exactly without strtod (Clinger's fast path), building the same document.
#include <string_view>

#include <nlohmann/json.hpp>

namespace prenet {

// The document json::parse(text, nullptr, allow_exceptions) gives (same values, same number types, bit for bit):
// read here when the text is plain JSON of the kind the catalogue holds, and by json::parse itself otherwise
// (\u escapes, integers beyond 18 digits, malformed text), so its errors are json::parse's too.
nlohmann::json parse_embedded_json(std::string_view text, bool allow_exceptions = true);

}  // namespace prenet
