#include "core/json_check.hpp"

#include <fmt/format.h>

#include <map>
#include <vector>

#include "core/error.hpp"
#include "core/utf8.hpp"

namespace ftplan {

namespace {

struct Frame {
  bool object = false;
  std::map<std::string, std::size_t, std::less<>> keys;  // key -> line
};

// The key's text: escapes decoded (so "a" and "\u0061" are one key), as the parser will read it.
std::string key_text(std::string_view raw) {
  if (raw.find('\\') == std::string_view::npos) return std::string(raw);
  try {
    std::string quoted_key = "\"";
    quoted_key.append(raw);
    quoted_key += '"';
    return nlohmann::json::parse(quoted_key).get<std::string>();
  } catch (const nlohmann::json::exception&) {
    return std::string(raw);  // the parser reports the bad escape
  }
}

}  // namespace

void check_json_text(std::string_view text, const std::string& file, const std::string& field,
                     std::size_t max_depth) {
  std::vector<Frame> stack;
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
    } else if (c == '{' || c == '[') {
      if (stack.size() >= max_depth)
        throw UserError(ErrorCode::kInvalidValue,
                        fmt::format("{}: nests objects and arrays deeper than {} levels (line {})",
                                    file, max_depth, line),
                        field);
      stack.push_back({c == '{', {}});
    } else if (c == '}' || c == ']') {
      if (!stack.empty()) stack.pop_back();
    } else if (c == '"') {
      const std::size_t start = i + 1;
      std::size_t end = start;
      while (end < text.size() && text[end] != '"') {
        if (text[end] == '\\') ++end;
        ++end;
      }
      if (end >= text.size()) return;  // unterminated: the parser's error
      i = end;
      if (stack.empty() || !stack.back().object) continue;
      std::size_t next = end + 1;
      while (next < text.size() &&
             (text[next] == ' ' || text[next] == '\t' || text[next] == '\r' || text[next] == '\n'))
        ++next;
      if (next >= text.size() || text[next] != ':') continue;  // a value, not a key
      const std::string key = key_text(text.substr(start, end - start));
      auto [it, added] = stack.back().keys.emplace(key, line);
      if (!added)
        throw UserError(ErrorCode::kInvalidValue,
                        fmt::format("{}: key '{}' appears twice in one object (lines {} and {}); "
                                    "keep one",
                                    file, cut_utf8(printable_utf8(key), 60), it->second, line),
                        key);
    }
  }
}

std::string describe_json_value(const nlohmann::json& value) {
  const std::size_t n = value.size();
  if (value.is_object()) return fmt::format("an object of {} key{}", n, n == 1 ? "" : "s");
  if (value.is_array()) return fmt::format("a list of {} item{}", n, n == 1 ? "" : "s");
  return cut_utf8(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 60);
}

}  // namespace ftplan
