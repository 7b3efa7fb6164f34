// Times the parse of every JSON file compiled into the binary (hardware catalogue, models/*.json) by nlohmann's
// json::parse and by core/embedded_json.hpp's reader, three rounds in one process (in each round nlohmann runs
// first, so the reader's first round finds the shared DOM-building code already compiled). Natively:
//   cmake --build build --target prenet_embedded_json_bench && build/prenet_embedded_json_bench
// As WebAssembly under Node, the page's case (em++ -O3 -fwasm-exceptions, as in cmake/Wasm.cmake):
//   em++ -O3 -DNDEBUG -std=c++17 -fwasm-exceptions -Isrc -I<folder holding nlohmann/> bench/embedded-json-bench.cpp
//        src/core/embedded_json.cpp build/generated/embedded_data.cpp -sALLOW_MEMORY_GROWTH=1 -sSINGLE_FILE=1
//        -o /tmp/embedded-json-bench.js && node /tmp/embedded-json-bench.js
#include <chrono>
#include <cstdio>

#include "core/embedded.hpp"
#include "core/embedded_json.hpp"

int main() {
    using clock = std::chrono::steady_clock;
    auto ms = [](clock::time_point since) { return std::chrono::duration<double, std::milli>(clock::now() - since).count(); };
    for (int round = 0; round < 3; ++round) {
        double nlohmann_ms = 0, reader_ms = 0;
        for (const auto& f : prenet::embedded_files()) {
            if (f.path.size() < 5 || f.path.compare(f.path.size() - 5, 5, ".json") != 0) continue;
            auto t = clock::now();
            auto by_nlohmann = nlohmann::json::parse(f.contents);
            nlohmann_ms += ms(t);
            t = clock::now();
            auto by_reader = prenet::parse_embedded_json(f.contents);
            reader_ms += ms(t);
        }
        std::printf("round %d, every embedded JSON file: json::parse %.1f ms, parse_embedded_json %.1f ms\n", round + 1,
                    nlohmann_ms, reader_ms);
    }
    return 0;
}
