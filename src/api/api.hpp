#pragma once
// The one entry point shared by the CLI and the wasm module: a JSON request in, a JSON document out.
// Every number the page shows comes from here, so `prenet ... --json` and the page agree by construction.
//
// Request: {"command": "zoo" | "hardware" | "layers" | "options" | "features" | "predict" | "version", ...options}
//          (the options of each command: api/options.hpp, `prenet options`)
// Reply:   the command's document, or {"error": {"message", "field", "code", "path", "attr"}} for bad input,
//          where field is the request option at fault (or null), code one of core/error.hpp's ErrorCode names,
//          and path and attr the layer ("layers[1][0]") and its attribute inside a layers JSON model (or null).
//          Never throws, never aborts.
#include <string>

#include <nlohmann/json.hpp>

namespace prenet {

nlohmann::json handle_request(const nlohmann::json& request);
// The predict command's reply, throwing Error where handle_request answers {"error"} (calibrate predicts its rows
// through it and names the row in the error).
nlohmann::json predict_reply(const nlohmann::json& request);
std::string handle_request_text(const std::string& request);  // for bindings: parse, handle, dump

}  // namespace prenet
