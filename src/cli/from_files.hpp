// --from FILE: the settings of trainer files (workload/trainer_file.hpp) as the command's
// options. A flag given on the command line beside --from wins over the file; of several files,
// a later one wins over an earlier one.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cli/cli.hpp"

namespace ftplan::cli {

// Adds --from (repeatable) to a command that describes a run.
void add_from_option(CLI::App& app, std::vector<std::string>& files);

// The trainer file at `path` and, right after it, the DeepSpeed configs it names by path (read
// where files may be read: through the API they stay ignored keys), each with what named it.
std::vector<Context::FromFile> read_from_file(Context& ctx, const std::string& path);

// After parsing: reads the files given with --from and sets every option the command line left
// unset from them; records what was used and ignored in ctx.from_report.
void apply_from_files(CLI::App& app, Context& ctx);

// The JSON object {"file", "format", "files", "used", "ignored"} of what --from read; null when
// no file was given.
nlohmann::json from_json(const Context& ctx);

// `j` with the "from" object added when --from was given.
nlohmann::json& with_from(const Context& ctx, nlohmann::json& j);

}  // namespace ftplan::cli
