#include "api/api.hpp"

#include "core/error.hpp"
#include "importers/zoo.hpp"

namespace prenet {

nlohmann::json handle_request(const nlohmann::json& request) {
    try {
        if (!request.is_object() || !request.contains("command") || !request["command"].is_string())
            throw Error("request must be a JSON object with a string field 'command'");
        const std::string command = request["command"];
        if (command == "version") return {{"version", "0.1.0"}};
        if (command == "zoo") {
            nlohmann::json out = nlohmann::json::array();
            for (const auto& e : zoo()) out.push_back({{"id", e.id}, {"domain", e.domain}});
            return {{"models", out}};
        }
        throw Error("unknown command '" + command + "'");
    } catch (const std::exception& e) {
        return {{"error", e.what()}};
    }
}

std::string handle_request_text(const std::string& request) {
    auto parsed = nlohmann::json::parse(request, nullptr, false);
    if (parsed.is_discarded()) return nlohmann::json{{"error", "request is not valid JSON"}}.dump();
    return handle_request(parsed).dump();
}

}  // namespace prenet
