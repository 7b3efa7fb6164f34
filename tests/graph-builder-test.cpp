// The model builder (graph/builder.hpp): layers shaped by the inference it is given, blocks, repeats.
#include "graph/builder.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "ops/catalogue.hpp"

using namespace prenet;

TEST(ModelBuilder, ShapesEachLayerWithTheInferenceItIsGiven) {
    // graph/ knows no layer kinds: what validates and shapes a layer is the builder's callback.
    int calls = 0;
    ModelBuilder b("t", {2, 5}, [&](Layer& l) {
        ++calls;
        l.output = {l.input[0], l.input[1] + 1};
    });
    b.add("anything", "a");
    b.add("anything", "b");
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(b.shape(), (Shape{2, 7}));
    EXPECT_THROW(ModelBuilder("t", {2, 5}, ShapeInference()), Error);
}
