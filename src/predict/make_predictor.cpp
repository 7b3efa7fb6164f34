#include "core/error.hpp"
#include "predict/embedded_models.hpp"
#include "predict/learned.hpp"
#include "predict/predictor.hpp"

namespace prenet {

const std::vector<std::string>& predictor_names() {
    static const std::vector<std::string> names = {"learned", "roofline"};
    return names;
}

std::string default_predictor_name() { return embedded_kernel_model_data() ? "learned" : "roofline"; }

std::unique_ptr<KernelPredictor> make_predictor(const std::string& name) {
    if (name == "roofline") return std::make_unique<RooflinePredictor>();
    if (name == "learned") {
        // Reading the trees takes a few milliseconds: the predictor is built once and shared.
        const LearnedPredictor* shared = embedded_learned_predictor();
        if (!shared) throw Error("no fitted kernel models are built in (models/kernels.json); run `prenet fit`");
        return std::make_unique<SharedPredictor>(*shared);
    }
    throw Error("unknown predictor '" + name + "' (available: learned, roofline)");
}

std::unique_ptr<KernelPredictor> make_predictor(const std::string& name, const nlohmann::json& kernel_models) {
    if (!kernel_models.is_null()) return std::make_unique<LearnedPredictor>(kernel_models);
    return make_predictor(name);
}

}  // namespace prenet
