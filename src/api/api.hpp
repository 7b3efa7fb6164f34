#pragma once
// The one entry point shared by the CLI and the wasm module: a JSON request in, a JSON document out.
// Every number the page shows comes from here, so `prenet ... --json` and the page agree by construction.
//
// Request: {"command": "zoo" | "hardware" | "features" | "predict" | "version", ...options}
// Reply:   the command's document, or {"error": "message"} for bad input (never throws, never aborts).
#include <string>

#include <nlohmann/json.hpp>

namespace prenet {

nlohmann::json handle_request(const nlohmann::json& request);
std::string handle_request_text(const std::string& request);  // for bindings: parse, handle, dump

}  // namespace prenet
