// Native speed of the two things issue #3 times: loading the fitted models, and predicting one training step of
// a 36-layer transformer (GPT-2 large) on one accelerator. Prints medians over repeated runs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "hardware/spec.hpp"
#include "importers/zoo.hpp"
#include "ops/features.hpp"
#include "predict/learned.hpp"
#include "run/step.hpp"

using namespace prenet;

template <class F>
double median_ms(int runs, F&& f) {
    std::vector<double> t;
    for (int i = 0; i < runs; ++i) {
        auto start = std::chrono::steady_clock::now();
        f();
        t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main() {
    if (!embedded_learned_predictor()) {
        std::fprintf(stderr, "no fitted models built in\n");
        return 1;
    }
    double load = median_ms(20, [&] { read_embedded_learned_predictor(); });
    const LearnedPredictor& predictor = *embedded_learned_predictor();
    const HardwareSpec& hw = find_hardware("h100-sxm5-80gb");
    double sink = 0;
    double step = median_ms(50, [&] {
        Model m = build_zoo_model("gpt2-large", {8, 1024, 0});
        ModelFeatures f = compute_features(m, Precision::bf16);
        sink += predict_step(f, hw, predictor, Precision::bf16, find_optimizer("adamw")).total_ms();
    });
    double all = median_ms(10, [&] {
        Model m = build_zoo_model("llama2-70b", {1, 4096, 0});
        ModelFeatures f = compute_features(m, Precision::bf16);
        for (const auto& h : hardware_catalogue())
            sink += predict_step(f, h, predictor, Precision::bf16, find_optimizer("adamw")).total_ms();
    });
    std::printf("load fitted models:                          %.2f ms\n", load);
    std::printf("gpt2-large (36 layers) step on one device:   %.3f ms\n", step);
    std::printf("llama2-70b step on all %zu catalogue devices: %.2f ms\n", hardware_catalogue().size(), all);
    return sink > 0 ? 0 : 1;
}
