#pragma once
// A request's `model` as a program outside the API gets it from its user: a zoo id stays a name, and an ONNX
// file's bytes travel base64-encoded in a JSON document, as the page sends them (docs/importers.md). The CLI
// asks here instead of reaching into importers/.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace prenet {

bool is_zoo_id(const std::string& name);

// {"onnx_base64": ..., "name": name}: the model document the API's ONNX importer reads.
nlohmann::json onnx_model_document(std::string_view bytes, const std::string& name);

}  // namespace prenet
