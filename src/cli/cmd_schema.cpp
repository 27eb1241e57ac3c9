// ftplan schema [NAME]: the JSON Schemas of ftplan's JSON outputs (schemas/*.schema.json), so that
// scripts can check what they read.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "embedded_files.hpp"

namespace ftplan::cli {
namespace {

constexpr std::string_view kPrefix = "schemas/";
constexpr std::string_view kSuffix = ".schema.json";

const bool registered_schema = register_command(
    {"schema",
     "JSON Schemas of the --json outputs and of errors: list them, or print one (e.g. fit)",
     [](CLI::App& app, Context& ctx) {
       auto name = std::make_shared<std::string>();
       app.add_option("name", *name, "The output's name (none: list them)");
       return [&ctx, name] {
         std::vector<std::string> names;
         for (const auto& f : embedded::files()) {
           if (!f.path.starts_with(kPrefix) || !f.path.ends_with(kSuffix)) continue;
           const std::string n(
               f.path.substr(kPrefix.size(), f.path.size() - kPrefix.size() - kSuffix.size()));
           if (n == *name) {
             ctx.out << f.text;
             return;
           }
           names.push_back(n);
         }
         if (!name->empty()) throw_unknown_name("schema", "name", *name, names);
         ctx.out << fmt::format(
             "JSON outputs (schema_version {}); print one with ftplan schema NAME:\n",
             kJsonSchemaVersion);
         for (const auto& n : names)
           ctx.out << "  " << n << "\n";
       };
     },
     96});

}  // namespace
}  // namespace ftplan::cli
