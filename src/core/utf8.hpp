#pragma once
// The one sanitiser of imported text. An ONNX file's names, op types and domains are protobuf bytes no JSON parser
// has validated, and a reply carrying invalid UTF-8 made nlohmann's dump throw ("[json.exception.type_error.316]")
// instead of answering. Every importer's names pass through graph/builder.cpp, which applies this to them.
// Replaced, not refused: a name is only a label, and a file whose names are Latin-1 still describes a model.
// Inside the ONNX importer the raw bytes stay the tensors' identifiers (two invalid names must not become one).
#include <string>
#include <string_view>

namespace prenet {

// `text` with each maximal ill-formed subsequence replaced by U+FFFD, as the Unicode Standard recommends (and
// WHATWG's decoder does): overlong forms, surrogates, code points past U+10FFFF, stray continuation bytes and
// truncated sequences. Valid text is returned unchanged.
std::string valid_utf8(std::string_view text);

}  // namespace prenet
