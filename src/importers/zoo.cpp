#include "importers/zoo.hpp"

#include "core/error.hpp"

namespace prenet {

const std::vector<ZooEntry>& zoo() {
    static const std::vector<ZooEntry> entries = [] {
        std::vector<ZooEntry> all;
        for (auto part : {cnn_zoo(), transformer_zoo(), recurrent_zoo(), state_space_zoo()})
            for (auto& e : part) all.push_back(std::move(e));
        return all;
    }();
    return entries;
}

const ZooEntry& find_zoo_entry(const std::string& id) {
    for (const auto& e : zoo())
        if (e.id == id) return e;
    std::string close;
    for (const auto& e : zoo())
        if (e.id.find(id.substr(0, 3)) != std::string::npos) close += (close.empty() ? "" : ", ") + e.id;
    throw Error("unknown model '" + id + "'" + (close.empty() ? "" : " (did you mean: " + close + "?)") +
                "; `prenet zoo` lists them");
}

Model build_zoo_model(const std::string& id, ModelInputs inputs) {
    const ZooEntry& e = find_zoo_entry(id);
    if (inputs.batch <= 0) throw Error("batch size must be positive");
    if (inputs.seq < 0 || inputs.image < 0) throw Error("sequence length and image size must be positive");
    if (inputs.seq == 0) inputs.seq = e.default_seq;
    if (inputs.image == 0) inputs.image = e.default_image;
    return e.build(inputs);
}

}  // namespace prenet
