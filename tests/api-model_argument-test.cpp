// api/model_argument.hpp: a zoo id is known by name, and an ONNX file becomes the document the API imports.
#include "api/model_argument.hpp"

#include <gtest/gtest.h>

#include "api/api.hpp"

namespace prenet {
namespace {

TEST(ModelArgument, ZooIds) {
    EXPECT_TRUE(is_zoo_id("gpt2"));
    EXPECT_FALSE(is_zoo_id("gpt2.json"));
    EXPECT_FALSE(is_zoo_id(""));
}

TEST(ModelArgument, AnOnnxFileTravelsAsBase64TheApiReads) {
    nlohmann::json doc = onnx_model_document("hello", "m.onnx");
    EXPECT_EQ(doc["onnx_base64"], "aGVsbG8=");
    EXPECT_EQ(doc["name"], "m.onnx");
    // Not an ONNX file, but read as one: the importer's error, not a request error.
    nlohmann::json reply = handle_request({{"command", "features"}, {"model", doc}});
    EXPECT_EQ(reply["error"]["code"], "invalid_model");
}

}  // namespace
}  // namespace prenet
