// libFuzzer target: the API's request entry point (entry_points.hpp), which promises never to throw and never to
// abort, whatever the text: invalid JSON goes through too (its reply is an error), only the known classes of
// known_limits.hpp are skipped.
#include "entry_points.hpp"
#include "known_limits.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (prenet::fuzz::too_deep(data, size)) return -1;
    nlohmann::json request = nlohmann::json::parse(data, data + size, nullptr, false);
    if (!request.is_discarded() && prenet::fuzz::out_of_range(request)) return -1;
    if (!prenet::fuzz::api_request(std::string(reinterpret_cast<const char*>(data), size))) __builtin_trap();
    return 0;
}
