// api/kernels_command.hpp: a kernel table comes back with the precision each matrix row ran at and its time.
#include "api/kernels_command.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "core/error.hpp"

namespace prenet {
namespace {

struct TempCsv {
    std::string path = ::testing::TempDir() + "kernels-command-test.csv";
    explicit TempCsv(const std::string& text) { std::ofstream(path) << text; }
    ~TempCsv() { std::remove(path.c_str()); }
};

KernelsRequest on(const char* hardware, const std::string& csv) {
    KernelsRequest r;
    r.hardware = nlohmann::json::array({hardware});
    r.hardware_origin = hardware;
    r.predictor = "roofline";
    r.csv_path = csv;
    return r;
}

TEST(KernelsCommand, EachRowGainsItsPrecisionAndItsTime) {
    TempCsv csv("op,m,n,k\ngemm,1024,1024,1024\ngemm,4096,4096,4096\n");
    KernelsRequest r = on("a100-sxm4-80gb", csv.path);
    r.precision = Precision::bf16;
    std::string out = kernel_predictions_csv(r);
    ASSERT_EQ(out.rfind("op,m,n,k,matmul_precision_used,predicted_ms\ngemm,1024,1024,1024,bf16,", 0), 0u) << out;
    double small = 0, large = 0;
    ASSERT_EQ(std::sscanf(out.c_str(), "%*[^\n]\ngemm,1024,1024,1024,bf16,%lf\ngemm,4096,4096,4096,bf16,%lf", &small,
                          &large), 2) << out;
    EXPECT_GT(small, 0);
    EXPECT_GT(large, 32 * small);  // 64 x the work, once past launch overheads
}

TEST(KernelsCommand, OneAcceleratorOnly) {
    TempCsv csv("op,m,n,k\ngemm,8,8,8\n");
    KernelsRequest r = on("t4", csv.path);
    r.hardware = nlohmann::json::array({"t4", "a10"});
    EXPECT_THROW(kernel_predictions_csv(r), Error);
    r.hardware = nlohmann::json::array({"no-such-chip"});
    EXPECT_THROW(kernel_predictions_csv(r), Error);
}

}  // namespace
}  // namespace prenet
