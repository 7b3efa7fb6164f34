// The CSV reader (core/csv.hpp).
#include "core/csv.hpp"

#include <sstream>

#include <gtest/gtest.h>

#include "core/error.hpp"

using namespace prenet;

TEST(Csv, RaggedRowsAreErrors) {
    std::istringstream in("a,b\n1,2\n3\n");
    EXPECT_THROW(read_csv(in, "x"), Error);
}
