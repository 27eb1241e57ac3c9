// The reference of the command line, the JSON outputs and the HTTP API, as a document built from
// the code (the registered commands, the embedded JSON Schemas, the API's endpoint table), written
// as Markdown (docs/reference.md) or as a man page (ftplan.1). Nothing in it is typed by hand, so
// it cannot drift from what the binary does.
#pragma once

#include <string>
#include <vector>

namespace ftplan {

struct ReferenceOption {
  std::vector<std::string> names;  // "--gpu", "-o"; empty for a positional argument
  std::string positional;          // the positional argument's name ("" for an option)
  std::string value;               // what it takes: "TEXT", "INT ..." ("" for a flag)
  std::string description;
  std::string default_value;  // "" when none is stated
  bool required = false;
};

struct ReferenceCommand {
  std::string path;  // "fit", "calibrate import"
  std::string description;
  std::vector<ReferenceOption> options;
  std::vector<ReferenceCommand> subcommands;
};

struct ReferenceJsonKey {
  std::string path;  // "memory_GB.free", "options[].gpu"
  std::string type;  // "number", "string | null"
  std::string description;
};

struct ReferenceJsonOutput {
  std::string name;   // "fit": `ftplan schema fit`
  std::string title;  // the schema's title
  std::vector<ReferenceJsonKey> keys;
};

struct ReferenceEndpoint {
  std::string method;  // "GET", "POST"
  std::string path;    // "/api/fit"
  std::string runs;    // what it answers: "ftplan fit --json"
};

struct ReferenceExitCode {
  int code = 0;
  std::string meaning;
};

struct ReferenceDoc {
  std::string version;
  std::string summary;  // one line: what ftplan does
  std::vector<ReferenceOption> global_options;
  std::vector<ReferenceCommand> commands;
  std::vector<ReferenceExitCode> exit_codes;
  std::vector<ReferenceEndpoint> endpoints;
  std::vector<ReferenceJsonOutput> json_outputs;
};

// docs/reference.md.
std::string reference_markdown(const ReferenceDoc& doc);
// ftplan.1 (roff, man(7) macros); `date` as YYYY-MM-DD for its header.
std::string reference_man(const ReferenceDoc& doc, const std::string& date);

}  // namespace ftplan
