// The fitting data's folders (fit/dataset.hpp): data/*/ops/ is fitted, data/*/excluded/ is kept out of every fit
// and only predicted.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fit/dataset.hpp"

using namespace prenet;

TEST(Dataset, ExcludedRowsAreFoundApartFromTheFittedOnes) {
    namespace fs = std::filesystem;
    fs::path root = fs::path(::testing::TempDir()) / "prenet-dataset";
    fs::remove_all(root);
    fs::create_directories(root / "src" / "ops");
    fs::create_directories(root / "src" / "excluded");
    std::ofstream(root / "src" / "ops" / "gemm.csv") << "source,device,op,m,n,k,latency_ms\nx,t4,gemm,64,64,64,0.01\n";
    std::ofstream(root / "src" / "excluded" / "gemm.csv")
        << "source,device,op,m,n,k,latency_ms\nx,t4,gemm,128,128,128,0.02\nx,t4,gemm,256,256,256,0.05\n";
    ASSERT_EQ(data_files(root.string()).size(), 1u);
    ASSERT_EQ(excluded_data_files(root.string()).size(), 1u);
    EXPECT_NE(data_files(root.string())[0], excluded_data_files(root.string())[0]);
    EXPECT_EQ(load_data_folder(root.string()).size(), 1u);  // the fitted rows only
    EXPECT_EQ(load_samples(excluded_data_files(root.string())[0]).size(), 2u);
    fs::remove_all(root);
}
