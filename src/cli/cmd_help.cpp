// ftplan help [COMMAND]: the overview, or a command's --help. ftplan version (and --version):
// the version CMake's project() declares.
#include "cli/cli.hpp"

#ifndef FTPLAN_VERSION
#error "FTPLAN_VERSION (CMake's project version) must be defined for this file"
#endif

namespace ftplan::cli {

std::string version() {
  return FTPLAN_VERSION;
}

namespace {

const bool registered_help = register_command(
    {"help", "The commands, or one command's options: ftplan help COMMAND (as COMMAND --help)",
     [](CLI::App& app, Context& ctx) {
       auto words = std::make_shared<std::vector<std::string>>();
       app.add_option("command", *words,
                      "The command (and its subcommand, e.g. calibrate import) to describe");
       return [&ctx, words] {
         std::vector<std::string> args = *words;
         args.push_back("--help");
         execute(args, ctx);  // an unknown command is a UserError naming the closest
       };
     },
     200});

const bool registered_version = register_command(
    {"version", "Print the version (ftplan X.Y.Z)",
     [](CLI::App&, Context& ctx) { return [&ctx] { ctx.out << "ftplan " << version() << "\n"; }; },
     201});

}  // namespace
}  // namespace ftplan::cli
