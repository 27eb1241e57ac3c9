#include <gtest/gtest.h>

#include <sstream>

#include "cli/cli.hpp"

TEST(Smoke, CatalogLoads) {
  std::ostringstream out, err;
  int code = ftplan::cli::run({"gpus"}, out, err);
  EXPECT_EQ(code, 0) << err.str();
}
