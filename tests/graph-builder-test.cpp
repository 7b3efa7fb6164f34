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

// A shape set without a layer (an importer's branch input, a Keras ZeroPadding's output) meets the same limits as
// a layer's output: a dimension of 2^31 + 32 was carried on unchecked.
TEST(ModelBuilder, SetShapeMeetsTheShapeLimits) {
    ModelBuilder b("t", {2, 5}, infer_shape);
    b.set_shape({2, std::int64_t{1} << 31});
    EXPECT_EQ(b.shape(), (Shape{2, std::int64_t{1} << 31}));
    try {
        b.set_shape({2, (std::int64_t{1} << 31) + 32}, "layer 'pad' output");
        ADD_FAILURE() << "a dimension over 2^31 was set";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("layer 'pad' output [2,2147483680] has a dimension over the limit"),
                  std::string::npos) << e.what();
    }
    EXPECT_THROW(b.set_shape({std::int64_t{1} << 30, std::int64_t{1} << 30}), Error);  // 2^60 elements
    EXPECT_EQ(b.shape(), (Shape{2, std::int64_t{1} << 31}));  // a refused shape is not kept
    EXPECT_EQ(b.layer_count(), 0);
}

// Every importer's names pass the builder, which makes them valid UTF-8 (core/utf8.hpp): the model's, a block's, a
// layer's, its string attributes and an unknown op's. Unknown ops are counted by name and listed in name order.
TEST(ModelBuilder, NamesBecomeValidUtf8AndUnknownOpsAreCountedByName) {
    const std::string r = "\xEF\xBF\xBD";
    ModelBuilder b("m\xFF", {2, 4}, infer_shape);
    b.begin_block("blk\xC3", 2);
    b.add("memory_bound", "op\x80", {{"op", "Frob\xFE"}, {"output_shape", {2, 4}}, {"reads", 1}, {"flops_per_element", 1},
                                     {"saves", false}});
    b.end_block();
    b.count_unknown("Zeta");
    b.count_unknown("Frob\xFE");
    b.count_unknown("Frob\xFF", 2);  // another invalid byte, the same name once replaced
    Model m = b.finish("custom", 0);
    EXPECT_EQ(m.name, "m" + r);
    ASSERT_EQ(m.blocks.size(), 1u);
    EXPECT_EQ(m.blocks[0].name, "blk" + r);
    EXPECT_EQ(m.blocks[0].layers[0].name, "op" + r);
    EXPECT_EQ(m.blocks[0].layers[0].attrs["op"], "Frob" + r);
    ASSERT_EQ(m.unknown_ops.size(), 2u);
    EXPECT_EQ(m.unknown_ops[0], (std::pair<std::string, std::int64_t>{"Frob" + r, 3}));
    EXPECT_EQ(m.unknown_ops[1], (std::pair<std::string, std::int64_t>{"Zeta", 1}));
}
