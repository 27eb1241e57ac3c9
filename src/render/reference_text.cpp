#include "render/reference_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "render/markdown.hpp"

namespace ftplan {
namespace {

// ---- Markdown ----------------------------------------------------------------------------------

std::string code(const std::string& text) {
  return text.empty() ? "" : "`" + text + "`";
}

std::string option_label(const ReferenceOption& o) {
  if (o.names.empty()) return o.positional;
  return fmt::format("{}", fmt::join(o.names, ", "));
}

std::string markdown_options(const std::vector<ReferenceOption>& options) {
  if (options.empty()) return "No options.\n\n";
  std::string s = "| option | value | default | description |\n|---|---|---|---|\n";
  for (const auto& o : options) {
    std::string description = o.description;
    if (o.required) description += " (required)";
    if (!o.names.empty())
      s += fmt::format("| {} | {} | {} | {} |\n", code(option_label(o)), markdown_cell(o.value),
                       markdown_cell(code(o.default_value)), markdown_cell(description));
    else
      s += fmt::format("| {} (argument) | {} | {} | {} |\n", code(o.positional),
                       markdown_cell(o.value), markdown_cell(code(o.default_value)),
                       markdown_cell(description));
  }
  return s + "\n";
}

// A heading's anchor as GitHub writes it: lower case, spaces as dashes, other marks dropped.
std::string anchor(const std::string& heading) {
  std::string out;
  for (char c : heading) {
    if (c == ' ')
      out += '-';
    else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')
      out += c;
    else if (c >= 'A' && c <= 'Z')
      out += static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

void markdown_command(std::string& s, const ReferenceCommand& c, int level) {
  s += fmt::format("{} ftplan {}\n\n{}\n\n", std::string(static_cast<std::size_t>(level), '#'),
                   c.path, c.description);
  s += markdown_options(c.options);
  for (const auto& sub : c.subcommands)
    markdown_command(s, sub, level + 1);
}

// ---- man page ----------------------------------------------------------------------------------

// Text as roff reads it: a backslash is \e, and a line that starts with . or ' is not a request.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
    line_start = c == '\n';
  }
  return out;
}

void man_options(std::string& s, const std::vector<ReferenceOption>& options) {
  for (const auto& o : options) {
    s += ".TP\n";
    if (o.names.empty())
      s += fmt::format("\\fI{}\\fR", roff(o.positional));
    else
      s += fmt::format("\\fB{}\\fR", roff(option_label(o)));
    if (!o.value.empty()) s += fmt::format(" \\fI{}\\fR", roff(o.value));
    s += "\n" + roff(o.description);
    if (o.required) s += " (required)";
    if (!o.default_value.empty()) s += fmt::format(" Default: {}.", roff(o.default_value));
    s += "\n";
  }
}

void man_command(std::string& s, const ReferenceCommand& c) {
  s += fmt::format(".SS \"ftplan {}\"\n{}\n", roff(c.path), roff(c.description));
  man_options(s, c.options);
  for (const auto& sub : c.subcommands)
    man_command(s, sub);
}

}  // namespace

std::string reference_markdown(const ReferenceDoc& doc) {
  std::string s;
  s += fmt::format("# ftplan {} reference\n\n", doc.version);
  s += "Written by `ftplan reference` from the commands, the JSON Schemas and the API's endpoint "
       "table of the binary itself; a test checks that this file is what the binary writes "
       "(regenerate it with `ftplan reference > docs/reference.md`). The man page "
       "(`man ftplan`) is written from the same source.\n\n";
  s += doc.summary + "\n\n";
  s += "Contents: [global options](#global-options) · [commands](#commands) · "
       "[exit codes](#exit-codes) · [HTTP API](#http-api) · [JSON outputs](#json-outputs)\n\n";
  s += "## Global options\n\nGiven before the command: `ftplan [OPTIONS] COMMAND ...`.\n\n";
  s += markdown_options(doc.global_options);
  s += "## Commands\n\n";
  for (const auto& c : doc.commands)
    s += fmt::format("- [`{}`](#{}): {}\n", c.path, anchor("ftplan " + c.path),
                     markdown_cell(c.description));
  s += "\n";
  for (const auto& c : doc.commands)
    markdown_command(s, c, 3);
  s += "## Exit codes\n\n| code | meaning |\n|---|---|\n";
  for (const auto& e : doc.exit_codes)
    s += fmt::format("| {} | {} |\n", e.code, markdown_cell(e.meaning));
  s += "\n## HTTP API\n\n`ftplan serve` answers these requests. A POST takes a JSON object whose "
       "keys are the command's long options with `_` for `-` (`micro_batch` for "
       "`--micro-batch`); a GET takes them as query parameters. The answer is the command's "
       "`--json` output; an error is `{\"error\": {code, message, field, suggestions}}` with "
       "status 400 (`ftplan schema error`). The Python module has one function per endpoint, "
       "named like its command.\n\n| method | path | answers |\n|---|---|---|\n";
  for (const auto& e : doc.endpoints)
    s += fmt::format("| {} | `{}` | {} |\n", e.method, e.path, markdown_cell(e.runs));
  s += "\n## JSON outputs\n\nEvery `--json` output has a JSON Schema (`ftplan schema NAME`, "
       "`schemas/NAME.schema.json`). Its keys, as paths: `a.b` is key `b` of object `a`, `a[]` "
       "an item of array `a`.\n\n";
  for (const auto& o : doc.json_outputs)
    s += fmt::format("- [`{}`](#json-{}): {}\n", o.name, anchor(o.name), markdown_cell(o.title));
  s += "\n";
  for (const auto& o : doc.json_outputs) {
    s += fmt::format("### JSON: {}\n\n{}\n\n| key | type | description |\n|---|---|---|\n", o.name,
                     o.title);
    for (const auto& k : o.keys)
      s += fmt::format("| `{}` | {} | {} |\n", k.path, markdown_cell(k.type),
                       markdown_cell(k.description));
    s += "\n";
  }
  return s;
}

std::string reference_man(const ReferenceDoc& doc, const std::string& date) {
  std::string s;
  s += fmt::format(".TH FTPLAN 1 \"{}\" \"ftplan {}\" \"User Commands\"\n", date, doc.version);
  s += fmt::format(".SH NAME\nftplan \\- {}\n", roff(doc.summary));
  s += ".SH SYNOPSIS\n.B ftplan\n[\\fIGLOBAL OPTIONS\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n";
  s += ".SH DESCRIPTION\nEach command answers one question about a training or fine-tuning run "
       "on one or more cards; \\fB\\-\\-json\\fR makes its answer JSON. "
       "\\fBftplan help\\fR \\fICOMMAND\\fR prints one command's options.\n";
  s += ".SH GLOBAL OPTIONS\n";
  man_options(s, doc.global_options);
  s += ".SH COMMANDS\n";
  for (const auto& c : doc.commands)
    man_command(s, c);
  s += ".SH EXIT STATUS\n";
  for (const auto& e : doc.exit_codes)
    s += fmt::format(".TP\n.B {}\n{}\n", e.code, roff(e.meaning));
  s += ".SH HTTP API\n\\fBftplan serve\\fR answers these requests; a POST takes the command's "
       "long options as JSON keys (\\fBmicro_batch\\fR for \\fB\\-\\-micro\\-batch\\fR), a GET "
       "as query parameters, and the answer is the command's \\fB\\-\\-json\\fR output.\n";
  for (const auto& e : doc.endpoints)
    s += fmt::format(".TP\n.B {} {}\n{}\n", e.method, roff(e.path), roff(e.runs));
  s += ".SH JSON OUTPUTS\nEach has a JSON Schema: \\fBftplan schema\\fR \\fINAME\\fR.\n";
  for (const auto& o : doc.json_outputs)
    s += fmt::format(".TP\n.B {}\n{} ({} keys)\n", roff(o.name), roff(o.title), o.keys.size());
  s += ".SH SEE ALSO\nThe user guide, the method and the reference of every JSON key in "
       "/usr/share/doc/ftplan (docs/ in the source), and the examples in "
       "/usr/share/doc/ftplan/examples.\n";
  return s;
}

}  // namespace ftplan
