// What the HTTP API runs: commands of the command line, handed to the server by the front end
// that owns them, so that the server does not depend on the command line.
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "core/work_budget.hpp"

namespace ftplan::server {

// One command: its arguments and the texts handed in with the request.
struct CommandCall {
  std::vector<std::string> args;  // the command line without the program name
  // Texts handed in with the request (a pasted config.json, a runs document), by the name `args`
  // gives them. A call reads no file: only catalog ids and these texts.
  std::map<std::string, std::string, std::less<>> inline_files;
  // The work the call may cause (no bound by default); OverBudget when spent.
  WorkBudget budget;
};

// One option of a command, by the key the API gives it ("micro_batch" for --micro-batch).
struct OptionInfo {
  std::string key;
  std::string option;  // how the command line takes it: "--micro-batch", or "" (positional)
  bool flag = false;   // takes no value: true or false in a request
  bool list = false;   // may be given more than once: a JSON list
};

struct Commands {
  // Runs `call` with its output to `out`. Every error of the request is a UserError: an option
  // the command does not accept too, with the option as its field.
  std::function<void(const CommandCall& call, std::ostream& out)> run;
  // The options of a command (empty: any key is passed on as an option).
  std::function<std::vector<OptionInfo>(const std::string& command)> options;
  // Loads what every command reads, once before the first request (may be empty).
  std::function<void()> prepare;
};

}  // namespace ftplan::server
