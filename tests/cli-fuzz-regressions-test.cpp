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

namespace prenet {
namespace {

namespace fs = std::filesystem;

TEST(CliFuzzRegressions, EveryArgumentListEndsAsAnErrorOrAStatus) {
    const fs::path folder = PRENET_SOURCE_DIR "/tests/fixtures/fuzz/cli_args";
    std::vector<fs::path> files;
    ASSERT_TRUE(fs::is_directory(folder)) << folder.string();
    for (const auto& entry : fs::directory_iterator(folder))
        if (entry.is_regular_file() && entry.path().extension() == ".txt") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    ASSERT_FALSE(files.empty());
    for (const auto& file : files) {
        SCOPED_TRACE(file.string());
        std::ifstream in(file, std::ios::binary);
        std::stringstream text;
        text << in.rdbuf();
        std::vector<std::string> argv = fuzz::argument_lines(text.str());
        ASSERT_FALSE(!argv.empty() && (argv[0] == "fit" || argv[0] == "kernels")) << "writes files: a tests/cli/ case";
        EXPECT_NO_THROW(fuzz::cli_args(argv));
    }
}

}  // namespace
}  // namespace prenet
