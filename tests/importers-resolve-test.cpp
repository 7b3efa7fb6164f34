// Which importer a model argument needs (importers/resolve.hpp).
#include "importers/resolve.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace prenet {
namespace {

TEST(ResolveModel, ZooIdsConfigsAndLayersDocumentsEachFindTheirImporter) {
    EXPECT_EQ(resolve_model("gpt2", ModelInputs{}).name, "gpt2");
    json config = {{"model_type", "gpt2"}, {"n_layer", 2}, {"n_embd", 64}, {"n_head", 2}, {"vocab_size", 100},
                   {"n_positions", 32}};
    EXPECT_EQ(resolve_model(config, ModelInputs{}).domain, "language");
    json layers = {{"name", "tiny"}, {"input", {{"shape", {4, 8}}}}, {"layers", {{{"type", "linear"}, {"out_features", 2}}}}};
    EXPECT_EQ(resolve_model(layers, ModelInputs{}).name, "tiny");
}

TEST(ResolveModel, AnythingElseIsAnErrorSayingWhatIsAccepted) {
    try {
        resolve_model(json{{"hello", 1}}, ModelInputs{});
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("zoo id"), std::string::npos) << e.what();
    }
    ModelInputs no_batch;
    no_batch.batch = 0;
    EXPECT_THROW(resolve_model("gpt2", no_batch), Error);
}

}  // namespace
}  // namespace prenet
