// api/parallel_result.hpp: one accelerator's answer for several devices: the layout fills the devices, the
// throughput and the run count every device, and an impossible cluster is an error of its field.
#include "api/parallel_result.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace prenet
