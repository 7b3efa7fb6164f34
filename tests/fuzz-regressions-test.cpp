// Fuzz findings as regression tests: every file under tests/fixtures/fuzz/<target>/ is fed, unfiltered, to the
// function the libFuzzer target of that name calls (fuzz/entry_points.hpp). Under build-sanitize/ (ASan + UBSan,
// scripts/test.sh) a crash, a sanitizer report or an escaped exception fails the run; the API target's reply must
// also be JSON. docs/robustness.md: how a fuzz crash becomes a file here. (The CLI target's files: see
// cli-fuzz-regressions-test.cpp.)
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "../fuzz/entry_points.hpp"

namespace prenet {
namespace {

namespace fs = std::filesystem;
const fs::path kRoot = PRENET_SOURCE_DIR "/tests/fixtures/fuzz";

std::string read_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The files of one target's folder. Each target has a folder with at least one case (an input that once crashed
// it, or one of its parser's known bad-input classes), so a renamed or missing folder fails here instead of
// passing with nothing to feed.
std::vector<fs::path> cases(const std::string& target) {
    std::vector<fs::path> out;
    if (fs::is_directory(kRoot / target))
        for (const auto& entry : fs::directory_iterator(kRoot / target))
            if (entry.is_regular_file()) out.push_back(entry.path());
    std::sort(out.begin(), out.end());
    EXPECT_FALSE(out.empty()) << "no cases in " << (kRoot / target).string();
    return out;
}

void feed_json(const std::string& target, void (*entry)(const nlohmann::json&)) {
    for (const auto& file : cases(target)) {
        SCOPED_TRACE(file.string());
        nlohmann::json document = nlohmann::json::parse(read_bytes(file), nullptr, false);
        // The target skips invalid JSON, so no finding is one: a file that does not parse is a broken case.
        ASSERT_FALSE(document.is_discarded()) << "not JSON";
        EXPECT_NO_THROW(entry(document));
    }
}

TEST(FuzzRegressions, LayersJson) { feed_json("layers_json", fuzz::layers_json); }
TEST(FuzzRegressions, HfConfig) { feed_json("hf_config", fuzz::hf_config); }
TEST(FuzzRegressions, KerasJson) { feed_json("keras_json", fuzz::keras_json); }
TEST(FuzzRegressions, HardwareSpec) { feed_json("hardware_spec", fuzz::hardware_spec); }

TEST(FuzzRegressions, Onnx) {
    for (const auto& file : cases("onnx")) {
        SCOPED_TRACE(file.string());
        EXPECT_NO_THROW(fuzz::onnx(read_bytes(file)));
    }
}

TEST(FuzzRegressions, ApiRequest) {
    for (const auto& file : cases("api_request")) {
        SCOPED_TRACE(file.string());
        EXPECT_TRUE(fuzz::api_request(read_bytes(file)));
    }
}

}  // namespace
}  // namespace prenet
