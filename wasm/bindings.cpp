// Embind surface of the wasm module: thin wrappers only, all behaviour lives in prenet_core (src/api).
//   const prenet = await createPrenet();
//   JSON.parse(prenet.handleRequest(JSON.stringify({command: "zoo"})));
#include <string>

#include <emscripten/bind.h>

#include "api/api.hpp"

#ifndef PRENET_VERSION
#define PRENET_VERSION "unknown"
#endif

namespace {

std::string handle_request(const std::string& request) { return prenet::handle_request_text(request); }
std::string version() { return PRENET_VERSION; }

}  // namespace

EMSCRIPTEN_BINDINGS(prenet) {
    emscripten::function("handleRequest", &handle_request);
    emscripten::function("version", &version);
}
