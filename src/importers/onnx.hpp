#pragma once
// ONNX models (and so PyTorch's, through torch.onnx.export): the graph's nodes mapped to the op catalogue's layer
// kinds, with every shape inferred from the sizes the user asks for where the file leaves them symbolic
// (docs/importers.md). The API carries the file base64-encoded: {"onnx_base64": "...", "name": "model.onnx"}.
#include <string>
#include <string_view>

#include "graph/model.hpp"
#include "importers/zoo.hpp"

namespace prenet {

bool looks_like_onnx_document(const json& document);
Model model_from_onnx_document(const json& document, const ModelInputs& inputs);
// From the file's bytes; `name` names the model (the file name without .onnx).
Model model_from_onnx(std::string_view bytes, const std::string& name, const ModelInputs& inputs);

// Standard base64 (RFC 4648, with padding); decoding ignores whitespace and throws Error on anything else.
std::string base64_encode(std::string_view bytes);
std::string base64_decode(std::string_view text);

}  // namespace prenet
