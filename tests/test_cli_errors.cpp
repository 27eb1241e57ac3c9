// Data-driven bad-input cases (tests/cases/cli_errors.yaml): exit code 2 and the expected text.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "support.hpp"

namespace ftplan {
namespace {

std::string substitute(std::string s) {
  const std::string key = "{src}";
  for (auto at = s.find(key); at != std::string::npos; at = s.find(key))
    s.replace(at, key.size(), FTPLAN_SOURCE_DIR);
  return s;
}

TEST(CliErrors, EveryCaseExitsWith2AndSaysWhy) {
  const YAML::Node cases =
      YAML::LoadFile(std::string(FTPLAN_SOURCE_DIR) + "/tests/cases/cli_errors.yaml")["cases"];
  ASSERT_GT(cases.size(), 10u);
  for (const auto& c : cases) {
    std::vector<std::string> args;
    for (const auto& a : c["args"])
      args.push_back(substitute(a.as<std::string>()));
    const auto r = test::run_cli(args);
    const std::string name = c["name"].as<std::string>();
    EXPECT_EQ(r.code, 2) << name << "\nstderr: " << r.err;
    const std::string want = c["error"].as<std::string>();
    EXPECT_NE(r.err.find(want), std::string::npos)
        << name << "\nwanted: " << want << "\nstderr: " << r.err;
    EXPECT_TRUE(r.out.empty()) << name << ": nothing on stdout for an error, got: " << r.out;
  }
}

}  // namespace
}  // namespace ftplan
