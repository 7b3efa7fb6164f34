#include "api/hardware_selection.hpp"

#include "core/error.hpp"

namespace prenet {

using nlohmann::json;

std::vector<HardwareSpec> select_hardware(const RequestOptions& o) {
    std::vector<HardwareSpec> out;
    attribute_errors("hardware", ErrorCode::invalid_hardware, [&] {
        const json& arg = o.value("hardware");
        auto add_id = [&](const std::string& id) {
            if (id == "all") out.insert(out.end(), hardware_catalogue().begin(), hardware_catalogue().end());
            else out.push_back(find_hardware(id));
        };
        if (arg.is_string()) {
            add_id(arg.get<std::string>());
        } else if (arg.is_array()) {
            for (const auto& a : arg) {
                if (a.is_string()) add_id(a.get<std::string>());
                else out.push_back(parse_hardware(a, "hardware spec"));
            }
        } else if (arg.is_object()) {
            out.push_back(parse_hardware(arg, "hardware spec"));
        }
    });
    attribute_errors("custom_hardware", ErrorCode::invalid_hardware, [&] {
        for (const auto& sheet : o.value("custom_hardware")) out.push_back(parse_hardware(sheet, "custom hardware spec"));
    });
    if (out.empty()) throw Error("no hardware selected", ErrorCode::missing, "hardware");
    return out;
}

}  // namespace prenet
