#include "api/model_argument.hpp"

#include "importers/onnx.hpp"
#include "importers/zoo.hpp"

namespace prenet {

bool is_zoo_id(const std::string& name) {
    for (const auto& e : zoo())
        if (e.id == name) return true;
    return false;
}

nlohmann::json onnx_model_document(std::string_view bytes, const std::string& name) {
    return {{"onnx_base64", base64_encode(bytes)}, {"name", name}};
}

}  // namespace prenet
