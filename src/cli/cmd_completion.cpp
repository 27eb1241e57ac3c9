// ftplan completion bash|zsh|fish: a completion script generated from the registered commands,
// their subcommands and options; card, model, method and optimizer options complete the
// catalog's names.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "cli/cli.hpp"
#include "core/choices.hpp"
#include "core/error.hpp"
#include "infer/generation.hpp"
#include "plan/matrix.hpp"
#include "workload/optimizer.hpp"

namespace ftplan::cli {
namespace {

const std::vector<std::string>& shell_names() {
  static const std::vector<std::string> names = {"bash", "zsh", "fish"};
  return names;
}

// One command as a completion script sees it.
struct CompletedCommand {
  std::string name;
  std::string description;
  std::vector<std::string> options;      // long and short names with their dashes
  std::vector<std::string> subcommands;  // e.g. calibrate import; help: the commands
  std::vector<CompletedCommand> nested;
};

struct CompletionModel {
  std::vector<std::string> global_options;
  std::vector<CompletedCommand> commands;
  // Values an option completes to, by option name (--gpu: the catalog's cards).
  std::map<std::string, std::vector<std::string>> values;
};

// Names a shell word may hold without quoting (anything else is left out of the scripts).
bool plain_word(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == '/' || c == '+' || c == '@';
  });
}

std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options()) {
    for (const auto& l : o->get_lnames())
      names.push_back("--" + l);
    for (const auto& s : o->get_snames())
      names.push_back("-" + s);
  }
  return names;
}

// A description on one line, cut to 80 characters (at a character boundary).
std::string summary(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  if (text.size() <= 80) return text;
  std::size_t end = 77;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
    --end;  // not inside a UTF-8 sequence
  return text.substr(0, end) + "...";
}

CompletedCommand describe(const CLI::App& app) {
  CompletedCommand c{app.get_name(), summary(app.get_description()), option_names(app), {}, {}};
  for (const CLI::App* sub : app.get_subcommands({})) {
    c.subcommands.push_back(sub->get_name());
    c.nested.push_back(describe(*sub));
  }
  return c;
}

std::vector<std::string> plain_words(std::vector<std::string> words) {
  std::erase_if(words, [](const std::string& w) { return !plain_word(w); });
  return words;
}

CompletionModel completion_model(Context& ctx) {
  CLI::App app;
  add_all_commands(app, ctx);
  CompletionModel m;
  m.global_options = option_names(app);
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) {
    m.commands.push_back(describe(*sub));
    names.push_back(sub->get_name());
  }
  // The words `help` and `completion` take.
  for (auto& c : m.commands) {
    if (c.name == "help") c.subcommands = names;
    if (c.name == "completion") c.subcommands = shell_names();
  }
  std::vector<std::string> gpus = ctx.catalog().gpu_ids();
  gpus.insert(gpus.end(), {"local", "all"});
  m.values["--gpu"] = plain_words(gpus);
  m.values["--model"] = plain_words(ctx.catalog().model_ids());
  m.values["--method"] = plain_words(method_names());
  m.values["--optimizer"] = plain_words(optimizer_names());
  m.values["--lang"] = {"en", "de"};
  m.values["--kv-dtype"] = plain_words(kv_dtype_names());
  m.values["--weights"] = plain_words(weight_format_names());
  m.values["--sort"] = plain_words(matrix_sort_names());
  return m;
}

// Every option of a command and of its subcommands (bash and zsh complete them together).
std::vector<std::string> all_options(const CompletedCommand& c) {
  std::vector<std::string> out = c.options;
  for (const auto& n : c.nested)
    for (const auto& o : all_options(n))
      if (std::find(out.begin(), out.end(), o) == out.end()) out.push_back(o);
  return out;
}

// The script bash runs.
std::string bash_script(const CompletionModel& m) {
  std::string s;
  s += "_ftplan_complete() {\n";
  s += "  local cur prev command i value_list option_list subcommand_list\n";
  s += "  cur=\"${COMP_WORDS[COMP_CWORD]}\"\n";
  s += "  prev=\"\"\n";
  s += "  if ((COMP_CWORD > 0)); then prev=\"${COMP_WORDS[COMP_CWORD-1]}\"; fi\n";
  s += "  command=\"\"\n";
  s += "  for ((i = 1; i < COMP_CWORD; i++)); do\n";
  s += "    case \"${COMP_WORDS[i]}\" in\n";
  s += "      --data | --lang) ((i++)) ;;\n";
  s += "      -*) ;;\n";
  s += "      *) command=\"${COMP_WORDS[i]}\"; break ;;\n";
  s += "    esac\n";
  s += "  done\n";
  s += "  value_list=\"\"\n";
  s += "  case \"$prev\" in\n";
  for (const auto& [option, values] : m.values)
    s += fmt::format("    {}) value_list=\"{}\" ;;\n", option, fmt::join(values, " "));
  s += "  esac\n";
  s += "  if [[ -n \"$value_list\" ]]; then\n";
  s += "    COMPREPLY=($(compgen -W \"$value_list\" -- \"$cur\"))\n";
  s += "    return 0\n";
  s += "  fi\n";
  s += "  option_list=\"\"\n";
  s += "  subcommand_list=\"\"\n";
  s += "  case \"$command\" in\n";
  std::vector<std::string> names;
  for (const auto& c : m.commands)
    names.push_back(c.name);
  s += fmt::format("    \"\") option_list=\"{}\"; subcommand_list=\"{}\" ;;\n",
                   fmt::join(m.global_options, " "), fmt::join(names, " "));
  for (const auto& c : m.commands)
    s += fmt::format("    {}) option_list=\"{}\"; subcommand_list=\"{}\" ;;\n", c.name,
                     fmt::join(all_options(c), " "), fmt::join(c.subcommands, " "));
  s += "  esac\n";
  s += "  if [[ \"$cur\" == -* ]]; then\n";
  s += "    COMPREPLY=($(compgen -W \"$option_list\" -- \"$cur\"))\n";
  s += "  elif [[ -n \"$subcommand_list\" ]]; then\n";
  s += "    COMPREPLY=($(compgen -W \"$subcommand_list\" -- \"$cur\"))\n";
  s += "  fi\n";
  s += "  return 0\n";
  s += "}\n";
  s += "complete -o default -F _ftplan_complete ftplan\n";
  return s;
}

// A fish string: single quotes, with \ and ' escaped.
std::string fish_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string fish_options(const CLI::App& app, const std::string& condition,
                         const CompletionModel& m) {
  std::string s;
  for (const CLI::Option* o : app.get_options()) {
    std::string line = "complete -c ftplan";
    if (!condition.empty()) line += " -n " + fish_quoted(condition);
    bool named = false;
    for (const auto& l : o->get_lnames()) {
      line += " -l " + l;
      named = true;
    }
    for (const auto& sn : o->get_snames()) {
      line += " -s " + sn;
      named = true;
    }
    if (!named) continue;  // a positional argument: files
    if (o->get_type_size() > 0) {
      line += " -r";
      for (const auto& l : o->get_lnames())
        if (auto it = m.values.find("--" + l); it != m.values.end())
          line += " -a " + fish_quoted(fmt::format("{}", fmt::join(it->second, " ")));
    }
    line += " -d " + fish_quoted(summary(o->get_description()));
    s += line + "\n";
  }
  return s;
}

std::string fish_script(Context& ctx, const CompletionModel& m) {
  CLI::App app;
  add_all_commands(app, ctx);
  std::string s;
  s += fish_options(app, "__fish_use_subcommand", m);
  for (const CLI::App* sub : app.get_subcommands({})) {
    s += fmt::format("complete -c ftplan -n __fish_use_subcommand -a {} -d {}\n", sub->get_name(),
                     fish_quoted(summary(sub->get_description())));
    const std::string in_command = "__fish_seen_subcommand_from " + sub->get_name();
    s += fish_options(*sub, in_command, m);
    for (const auto& c : m.commands)
      if (c.name == sub->get_name() && c.nested.empty() && !c.subcommands.empty())
        s += fmt::format("complete -c ftplan -n {} -f -a {}\n", fish_quoted(in_command),
                         fish_quoted(fmt::format("{}", fmt::join(c.subcommands, " "))));
    for (const CLI::App* nested : sub->get_subcommands({})) {
      s += fmt::format("complete -c ftplan -n {} -a {} -d {}\n", fish_quoted(in_command),
                       nested->get_name(), fish_quoted(summary(nested->get_description())));
      s += fish_options(*nested,
                        in_command + "; and __fish_seen_subcommand_from " + nested->get_name(), m);
    }
  }
  return s;
}

// Text for a zsh _arguments spec inside single quotes: ' closes the quote, and \ [ ] : are
// the spec's own marks.
std::string zsh_spec_text(const std::string& text) {
  std::string out;
  for (char c : summary(text)) {
    if (c == '\'') {
      out += "'\\''";
      continue;
    }
    if (c == '\\' || c == '[' || c == ']' || c == ':') out += '\\';
    out += c;
  }
  return out;
}

// One _arguments spec per option name: flags alone, options with a value followed by what
// completes the value (the catalog's names, or files).
std::vector<std::string> zsh_option_specs(const CLI::App& app, const CompletionModel& m) {
  std::vector<std::string> specs;
  for (const CLI::Option* o : app.get_options()) {
    std::vector<std::string> names;
    for (const auto& l : o->get_lnames())
      names.push_back("--" + l);
    for (const auto& sn : o->get_snames())
      names.push_back("-" + sn);
    if (names.empty()) continue;  // a positional argument
    std::string value;
    if (o->get_type_size() > 0) {
      value = ":value:_files";
      for (const auto& n : names)
        if (auto it = m.values.find(n); it != m.values.end())
          value = fmt::format(":value:({})", fmt::join(it->second, " "));
    }
    for (const auto& n : names)
      specs.push_back(fmt::format("'*{}{}[{}]{}'", n, value.empty() ? "" : "=",
                                  zsh_spec_text(o->get_description()), value));
  }
  return specs;
}

// A zsh completion function of its own (_arguments): loaded from a folder of fpath as `_ftplan`
// (the package installs it there) or sourced after compinit.
std::string zsh_script(Context& ctx, const CompletionModel& m) {
  CLI::App app;
  add_all_commands(app, ctx);
  const auto described = [](const CLI::App& parent) {
    std::vector<std::string> items;
    for (const CLI::App* sub : parent.get_subcommands({}))
      items.push_back(
          fmt::format("'{}:{}'", sub->get_name(), zsh_spec_text(sub->get_description())));
    return items;
  };
  const auto lines = [](const std::vector<std::string>& specs, const std::string& indent) {
    std::string s;
    for (const auto& spec : specs)
      s += indent + spec + " \\\n";
    return s;
  };
  std::string s = "compdef _ftplan ftplan\n\n";
  s += "_ftplan() {\n";
  s += "  local curcontext=\"$curcontext\" state line ret=1\n";
  s += "  typeset -A opt_args\n";
  s += fmt::format("  local -a ftplan_commands=(\n    {}\n  )\n",
                   fmt::join(described(app), "\n    "));
  s += "  _arguments -C \\\n";
  s += lines(zsh_option_specs(app, m), "    ");
  s += "    '1: :->command' \\\n";
  s += "    '*:: :->argument' && ret=0\n";
  s += "  case $state in\n";
  s += "    command) _describe -t commands 'ftplan command' ftplan_commands && ret=0 ;;\n";
  s += "    argument)\n";
  s += "      curcontext=\"${curcontext%:*:*}:ftplan-$line[1]:\"\n";
  s += "      case $line[1] in\n";
  for (const CLI::App* sub : app.get_subcommands({})) {
    std::vector<std::string> specs = zsh_option_specs(*sub, m);
    std::vector<std::string> nested_names;
    for (const CLI::App* nested : sub->get_subcommands({})) {
      nested_names.push_back(nested->get_name());
      for (const auto& spec : zsh_option_specs(*nested, m))
        if (std::find(specs.begin(), specs.end(), spec) == specs.end()) specs.push_back(spec);
    }
    std::string first;  // the first word after the command
    if (!nested_names.empty())
      first = fmt::format("'1:subcommand:({})'", fmt::join(nested_names, " "));
    for (const auto& c : m.commands)
      if (c.name == sub->get_name() && c.nested.empty() && !c.subcommands.empty())
        first = fmt::format("'1:{}:({})'", c.name == "help" ? "command" : "shell",
                            fmt::join(c.subcommands, " "));
    s += fmt::format("        {})\n          _arguments \\\n", sub->get_name());
    s += lines(specs, "            ");
    if (!first.empty()) s += "            " + first + " \\\n";
    s += "            '*:file:_files' && ret=0 ;;\n";
  }
  s += "      esac ;;\n";
  s += "  esac\n";
  s += "  return ret\n";
  s += "}\n\n";
  s += "# Loaded from fpath, the file is the body of _ftplan: run it for this first completion.\n";
  s += "if [[ \"$funcstack[1]\" == _ftplan ]]; then\n  _ftplan \"$@\"\nfi\n";
  return s;
}

const bool registered_completion = register_command(
    {"completion",
     "A completion script for bash, zsh or fish: source <(ftplan completion bash) (README.md)",
     [](CLI::App& app, Context& ctx) {
       auto shell = std::make_shared<std::string>();
       app.add_option("shell", *shell, "bash | zsh | fish")->required();
       return [&ctx, shell] {
         if (std::find(shell_names().begin(), shell_names().end(), *shell) == shell_names().end())
           throw_unknown_name("shell", "shell", *shell, shell_names());
         const CompletionModel m = completion_model(ctx);
         const std::string header = fmt::format(
             "# {} completion for ftplan {}, generated by `ftplan completion {}` "
             "from its commands and options.\n",
             *shell, version(), *shell);
         if (*shell == "bash") {
           ctx.out << header
                   << "# Load it with: source <(ftplan completion bash), or save it as "
                      "~/.local/share/bash-completion/completions/ftplan\n"
                   << bash_script(m);
         } else if (*shell == "zsh") {
           ctx.out << "#compdef ftplan\n"
                   << header
                   << "# Save it as _ftplan in a folder of $fpath, or load it with: source "
                      "<(ftplan completion zsh) in ~/.zshrc (after compinit)\n"
                   << zsh_script(ctx, m);
         } else {
           ctx.out << header << "# Save it as ~/.config/fish/completions/ftplan.fish\n"
                   << fish_script(ctx, m);
         }
       };
     },
     202});

}  // namespace
}  // namespace ftplan::cli
