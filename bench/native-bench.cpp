// In-process timing of one API request in the native build, for bench/run.mjs's wasm-vs-native comparison:
// the same prenet::handle_request_text the CLI and the wasm module call, so no process start-up is counted.
//   native-bench '<request JSON>' [runs=30]   ->   {"cold_ms": first call, "warm_ms": [each later call]}
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "api/api.hpp"

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s '<request JSON>' [runs]\n", argv[0]);
        return 2;
    }
    const std::string request = argv[1];
    const int runs = argc > 2 ? std::atoi(argv[2]) : 30;
    using clock = std::chrono::steady_clock;
    auto ms = [](clock::time_point a, clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    auto t0 = clock::now();
    std::string reply = prenet::handle_request_text(request);
    double cold = ms(t0, clock::now());
    if (reply.rfind("{\"error\"", 0) == 0) {
        std::fprintf(stderr, "%s\n", reply.c_str());
        return 1;
    }
    std::printf("{\"cold_ms\": %.4f, \"reply_bytes\": %zu, \"warm_ms\": [", cold, reply.size());
    for (int i = 0; i < runs; ++i) {
        auto t = clock::now();
        reply = prenet::handle_request_text(request);
        std::printf("%s%.4f", i ? ", " : "", ms(t, clock::now()));
    }
    std::printf("]}\n");
    return 0;
}
