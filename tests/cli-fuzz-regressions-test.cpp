// The CLI fuzz target's findings as regression tests: every file under tests/fixtures/fuzz/cli_args/ is an argument
// list, one argument a line, run unfiltered through the same function the target calls (fuzz/cli_entry_point.hpp)
// with the output kept in memory. Under build-sanitize/ (ASan + UBSan) a crash, a sanitizer report or an escaped
// exception fails the run. Native only (the wasm build has no CLI). A finding that needs files the run would read
// or write becomes a case in tests/cli/ instead, which runs the binary in a scratch folder.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "../fuzz/cli_entry_point.hpp"
#include "../fuzz/cluster_entry_point.hpp"

namespace prenet {
namespace {

namespace fs = std::filesystem;

// The .txt files of one target's folder, which must hold some (see tests/fixtures/fuzz/README.md).
std::vector<fs::path> argument_files(const std::string& target) {
    const fs::path folder = fs::path(PRENET_SOURCE_DIR "/tests/fixtures/fuzz") / target;
    std::vector<fs::path> files;
    EXPECT_TRUE(fs::is_directory(folder)) << folder.string();
    if (fs::is_directory(folder))
        for (const auto& entry : fs::directory_iterator(folder))
            if (entry.is_regular_file() && entry.path().extension() == ".txt") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    EXPECT_FALSE(files.empty()) << "no cases in " << folder.string();
    return files;
}

std::string text_of(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(CliFuzzRegressions, EveryArgumentListEndsAsAnErrorOrAStatus) {
    for (const auto& file : argument_files("cli_args")) {
        SCOPED_TRACE(file.string());
        std::vector<std::string> argv = fuzz::argument_lines(text_of(file));
        ASSERT_FALSE(!argv.empty() && (argv[0] == "fit" || argv[0] == "kernels")) << "writes files: a tests/cli/ case";
        EXPECT_NO_THROW(fuzz::cli_args(argv));
    }
}

// The cluster-arguments target's files (fuzz/cluster_entry_point.hpp): cluster options and documents through
// `prenet predict`; each must end as an error or a reply whose times are plausible (issue #27: 9.7e35 ms).
TEST(CliFuzzRegressions, ClusterArgumentsEndAsAnErrorOrPlausibleTimes) {
    for (const auto& file : argument_files("cluster_args")) {
        SCOPED_TRACE(file.string());
        bool plausible = false;
        EXPECT_NO_THROW(plausible = fuzz::cluster_args(text_of(file)));
        EXPECT_TRUE(plausible);
    }
}

}  // namespace
}  // namespace prenet
