// Inputs the fuzzers once crashed on: each must now be accepted or rejected with a UserError.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "comm/link_calibration.hpp"
#include "core/error.hpp"
#include "memory/measured_runs.hpp"
#include "mig/pack_file.hpp"
#include "model/config_reader.hpp"
#include "perf/bench_results.hpp"
#include "plan/measured_step.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

TEST(FuzzRegressions, EveryStoredInputIsHandled) {
  const std::filesystem::path dir =
      std::filesystem::path(FTPLAN_SOURCE_DIR) / "tests/cases/fuzz-regressions";
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string name = entry.path().filename().string();
    try {
      if (name.starts_with("config_json"))
        read_hf_config(buf.str(), name, "x");
      else if (name.starts_with("gpu_yaml"))
        parse_gpu_file({name, buf.str(), {}}, test::catalog().sources());
      else if (name.starts_with("pack_yaml"))
        parse_pack_file(buf.str(), name);
      else if (name.starts_with("bench_results"))
        parse_bench_results({name, buf.str(), {}}, FailedBenchmarks::kKeep);
      else if (name.starts_with("step_results"))
        parse_step_results({name, buf.str(), {}});
      else if (name.starts_with("nccl_results"))
        parse_nccl_results({name, buf.str(), {}});
      else if (name.starts_with("link_calibration"))
        parse_link_calibration({name, buf.str(), {}}, test::catalog().sources());
      else if (name.starts_with("measured_yaml"))
        validate_runs(parse_measured_runs({name, buf.str(), {}}, test::catalog(), test::overheads(),
                                          test::stacks()));
      else
        ADD_FAILURE() << "unknown prefix: " << name;
    } catch (const UserError&) {
    }
    ++count;
  }
  EXPECT_GT(count, 0);
}

}  // namespace
}  // namespace ftplan
