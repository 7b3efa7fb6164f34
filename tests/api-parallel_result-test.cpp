// api/parallel_result.hpp: one accelerator's answer for several devices: the layout fills the devices, the
// throughput and the run count every device, and an impossible cluster is an error of its field.
#include "api/parallel_result.hpp"

#include <gtest/gtest.h>

#include "api/api.hpp"
#include "api/request_context.hpp"
#include "core/error.hpp"
#include "hardware/spec.hpp"
#include "test-helpers.hpp"

namespace prenet {
namespace {

using nlohmann::json;

// The plan keeps a pointer to the model argument (it rebuilds the model per layout): one that outlives it.
const json kGpt2 = "gpt2";

RequestContext plan(json request) { return make_request_context(kGpt2, json(), read_settings(RequestOptions(request, kPredict))); }

TEST(ParallelResult, TheLayoutFillsTheDevicesAndTheRunCountsThemAll) {
    json r = parallel_device_result(plan({{"gpus", 8}, {"batch", 2}, {"tokens", 1e9}}), find_hardware("a100-sxm4-80gb"));
    const json& p = r["plan"];
    EXPECT_EQ(p["dp"].get<int>() * p["tp"].get<int>() * p["pp"].get<int>() * p["cp"].get<int>(), 8);
    double tokens = r["throughput"]["tokens_per_s"].get<double>();
    EXPECT_NEAR(r["throughput"]["tokens_per_s_per_device"].get<double>(), tokens / 8, 1e-9 * tokens);
    EXPECT_NEAR(r["run"]["gpu_hours"].get<double>(), r["run"]["hours"].get<double>() * 8,
                1e-9 * r["run"]["gpu_hours"].get<double>());
    EXPECT_GT(r["throughput"]["mfu"].get<double>(), 0.0);
    EXPECT_LT(r["throughput"]["mfu"].get<double>(), 1.0);
}

TEST(ParallelResult, DevicesThatDoNotFillNodesAreAnErrorOfGpus) {
    RequestContext twelve = plan({{"gpus", 12}});
    EXPECT_EQ(testing::error_field([&] { parallel_device_result(twelve, find_hardware("a100-sxm4-80gb")); }), "gpus");
}


// A plan search's sharded models are kept between requests for the same model at the same sizes (the page asks
// one accelerator per request): a request answers the same whether it was asked first, after another model or
// sequence, or after the cache has dropped it; and the others' answers are their own.
TEST(ParallelResult, SearchesKeptBetweenRequestsAnswerAsIfAskedFirst) {
    const json gpt2 = "gpt2", llama = "llama3.2-1b";
    const HardwareSpec& h100 = find_hardware("h100-sxm5-80gb");
    auto ask = [&](const json& model, std::int64_t seq) {
        RequestContext c = make_request_context(model, json(),
                                                read_settings(RequestOptions({{"gpus", 8}, {"seq", seq}}, kPredict)));
        return parallel_device_result(c, h100).dump();
    };
    std::string a = ask(gpt2, 128), b = ask(gpt2, 256), c = ask(llama, 128);
    EXPECT_NE(a, b);
    EXPECT_NE(a, c);
    const json copy = "gpt2";  // the same model named by another document
    EXPECT_EQ(ask(copy, 128), a);  // a third model and sequence came between: dropped and rebuilt
    EXPECT_EQ(ask(llama, 128), c);
    EXPECT_EQ(ask(gpt2, 128), a);
    EXPECT_EQ(ask(gpt2, 256), b);
}


// Each layout's memory is kept between the accelerators of one question (it does not depend on the accelerator,
// only whether it fits does): the answers of a request over several accelerators, of capacities that make other
// layouts fit, are those of each accelerator's search on its own with nothing kept.
TEST(ParallelResult, MemoryKeptBetweenAcceleratorsChangesNoAnswer) {
    const json llama = "llama3.2-1b";
    json asked = {{"command", "predict"}, {"model", llama}, {"gpus", 8}, {"seq", 4096}, {"global_batch", 64}};
    std::vector<std::string> ids = {"rtx-4090", "a100-sxm4-40gb", "h100-sxm5-80gb", "rtx-4090"};
    asked["hardware"] = ids;
    json reply = handle_request(asked);
    ASSERT_FALSE(reply.contains("error")) << reply.dump();
    json alone = asked;
    alone.erase("command");
    alone.erase("hardware");
    alone.erase("model");
    RequestContext fresh = make_request_context(llama, json(), read_settings(RequestOptions(alone, kPredict)));
    ASSERT_TRUE(fresh.question.empty());  // nothing kept for it
    ASSERT_EQ(reply["results"].size(), ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
        json own = parallel_device_result(fresh, find_hardware(ids[i]));
        const json& kept = reply["results"][i];
        for (const char* part : {"plan", "memory", "step"}) EXPECT_EQ(kept[part], own[part]) << ids[i] << " " << part;
    }
}

}  // namespace
}  // namespace prenet
