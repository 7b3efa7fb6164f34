// libFuzzer target: the Keras model.to_json() importer (entry_points.hpp) on any JSON document.
#include "entry_points.hpp"
#include "known_limits.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    nlohmann::json document;
    if (!prenet::fuzz::parse_in_limits(data, size, document)) return -1;  // -1: not kept in the corpus
    prenet::fuzz::keras_json(document);
    return 0;
}
