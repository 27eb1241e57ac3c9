#include "workload/lengths.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>

#include "catalog/strict_yaml.hpp"
#include "core/error.hpp"

namespace ftplan {

namespace {

constexpr long long kMaxTokens = 1 << 24;  // as --seq
constexpr double kMaxCount = 1e15;
// The keys a JSONL dataset's token count goes by, in the order they are looked for.
const std::vector<std::string>& count_keys() {
  static const std::vector<std::string> keys = {"num_tokens", "n_tokens",     "length",
                                                "tokens",     "input_length", "token_count"};
  return keys;
}

[[noreturn]] void fail_line(const std::string& file, std::size_t line, const std::string& what) {
  throw UserError(ErrorCode::kBadFile, fmt::format("{}: line {}: {}", file, line, what), file);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

std::string shorten(std::string_view s) {
  return s.size() > 40 ? std::string(s.substr(0, 40)) + "..." : std::string(s);
}

long long check_tokens(const std::string& file, std::size_t line, const std::string& key,
                       double v) {
  if (!std::isfinite(v) || v != std::floor(v) || v < 1 || v > static_cast<double>(kMaxTokens))
    fail_line(file, line,
              fmt::format("{} is {}: expected a whole number of tokens from 1 to {}", key, v,
                          kMaxTokens));
  return static_cast<long long>(v);
}

// One line of a JSONL dataset or an integer-per-line file.
long long line_tokens(const std::string& file, std::size_t line, std::string_view text) {
  if (text.front() != '{') {
    long long v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size())
      fail_line(
          file, line,
          fmt::format("'{}' is neither a whole number of tokens nor a JSON object", shorten(text)));
    return check_tokens(file, line, "the token count", static_cast<double>(v));
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail_line(file, line, fmt::format("not a JSON object: {}", e.what()));
  }
  if (!j.is_object()) fail_line(file, line, "not a JSON object");
  for (const auto& key : count_keys()) {
    auto it = j.find(key);
    if (it == j.end()) continue;
    if (!it->is_number())
      fail_line(file, line,
                fmt::format("key '{}' is {}: expected a number of tokens", key, it->dump()));
    return check_tokens(file, line, fmt::format("key '{}'", key), it->get<double>());
  }
  std::vector<std::string> present;
  for (const auto& item : j.items())
    present.push_back(item.key());
  std::string hint;
  if (!present.empty()) {
    const auto near = closest_names(present.front(), count_keys(), 1);
    hint = fmt::format(" (it has {}{})", fmt::format("'{}'", fmt::join(present, "', '")),
                       near.empty() ? "" : fmt::format("; did you mean '{}'?", near.front()));
  }
  fail_line(file, line,
            fmt::format("no token count: expected one of the keys {}{}",
                        fmt::join(count_keys(), ", "), hint));
}

std::vector<LengthBin> parse_histogram(std::string_view text, const std::string& file) {
  const YAML::Node root = parse_yaml_document(text, file);
  YAML::Node list = root;
  if (root.IsMap()) {
    StrictMap m(root, file, "");
    list.reset(m.raw("lengths"));  // reset: assigning would overwrite the root node
    m.finish();
  }
  if (!list.IsSequence() || list.size() == 0)
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: line {}: expected a list of {{tokens, count}} bins", file,
                                list.Mark().line + 1),
                    file);
  std::map<long long, double> bins;
  std::size_t i = 0;
  for (const auto& item : list) {
    const std::string path = fmt::format("lengths[{}]", i++);
    if (!item.IsMap())
      throw UserError(ErrorCode::kBadFile,
                      fmt::format("{}: {} (line {}): expected a map with tokens and count, got "
                                  "'{}'",
                                  file, path, item.Mark().line + 1, describe_node(item)),
                      file);
    StrictMap b(item, file, path);
    const long long tokens = b.required_integer("tokens", 1, kMaxTokens);
    const double count = b.required_number("count", 0, kMaxCount);
    b.finish();
    bins[tokens] += count;
  }
  std::vector<LengthBin> out;
  for (const auto& [t, c] : bins)
    if (c > 0) out.push_back({static_cast<double>(t), c});
  if (out.empty())
    throw UserError(ErrorCode::kBadFile, fmt::format("{}: every bin's count is 0", file), file);
  return out;
}

}  // namespace

std::vector<LengthBin> parse_lengths(std::string_view text, const std::string& file) {
  // The first non-blank character tells the kind: a list or map (YAML/JSON histogram), or lines.
  std::size_t first_line = 1;
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto nl = rest.find('\n');
    const std::string_view t = trim(rest.substr(0, nl));
    if (!t.empty() && t.front() != '#') break;
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    ++first_line;
  }
  const std::string_view head = trim(rest);
  if (head.empty())
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: no lengths (expected a histogram of {{tokens, count}}, a "
                                "JSONL dataset, or one token count per line)",
                                file),
                    file);
  const std::string_view first = trim(head.substr(0, head.find('\n')));
  bool lines = std::isdigit(static_cast<unsigned char>(first.front())) != 0;
  if (first.front() == '{' && nlohmann::json::accept(first)) {
    const auto j = nlohmann::json::parse(first);
    lines = !(j.is_object() && j.contains("lengths"));
  }
  if (!lines) return parse_histogram(text, file);
  std::map<long long, double> bins;
  std::size_t line = first_line;
  while (!rest.empty()) {
    const auto nl = rest.find('\n');
    const std::string_view t = trim(rest.substr(0, nl));
    if (!t.empty()) bins[line_tokens(file, line, t)] += 1;
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    ++line;
  }
  std::vector<LengthBin> out;
  for (const auto& [tokens, count] : bins)
    out.push_back({static_cast<double>(tokens), count});
  return out;
}

std::vector<LengthBin> length_distribution(const SequenceLengths& l, std::int64_t seq) {
  const double longest = static_cast<double>(seq);
  std::vector<LengthBin> out;
  if (!l.histogram.empty()) {
    double total = 0;
    for (const auto& b : l.histogram)
      total += b.count;
    for (const auto& b : l.histogram) {
      const double t = std::min(b.tokens, longest);
      if (!out.empty() && out.back().tokens == t)
        out.back().count += b.count / total;
      else
        out.push_back({t, b.count / total});
    }
    return out;
  }
  if (!l.mean || *l.mean >= longest) return {{longest, 1}};
  const double m = *l.mean;
  const double lo = 2 * m >= longest ? 2 * m - longest : 1;
  const double hi = 2 * m >= longest ? longest : 2 * m - 1;
  if (hi <= lo) return {{m, 1}};
  constexpr int kPoints = 64;
  for (int i = 0; i < kPoints; ++i)
    out.push_back({lo + (hi - lo) * (i + 0.5) / kPoints, 1.0 / kPoints});
  return out;
}

std::vector<LengthBin> max_entropy_lengths(double mean, std::int64_t longest) {
  constexpr int kPoints = 64;
  const double top = static_cast<double>(longest);
  const double step = top / kPoints;
  const double lowest = step / 2, highest = top - step / 2;
  if (mean >= highest || longest < kPoints) return {{top, 1}};
  mean = std::max(mean, lowest * (1 + 1e-9));
  // Point i's weight for rate λ (per step), taken relative to the heavier end so neither
  // overflows.
  const auto weight = [](double rate, int i) {
    return std::exp(-rate * (rate >= 0 ? i : i - (kPoints - 1)));
  };
  const auto mean_at = [&](double rate) {
    double total = 0, sum = 0;
    for (int i = 0; i < kPoints; ++i) {
      const double w = weight(rate, i);
      total += w;
      sum += w * (lowest + step * i);
    }
    return sum / total;
  };
  // The mean falls as the rate rises: bisect (60 halvings of 120 leave 1e-16).
  double lo = -60, hi = 60;
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    (mean_at(mid) > mean ? lo : hi) = mid;
  }
  const double rate = (lo + hi) / 2;
  std::vector<LengthBin> out;
  double total = 0;
  for (int i = 0; i < kPoints; ++i) {
    out.push_back({lowest + step * i, weight(rate, i)});
    total += out.back().count;
  }
  for (auto& b : out)
    b.count /= total;
  return out;
}

double real_tokens_per_row(const SequenceLengths& l, std::int64_t seq) {
  if (l.packing || !l.varies()) return static_cast<double>(seq);
  return expectation(length_distribution(l, seq), [](double s) { return s; });
}

std::vector<LengthBin> batch_max_distribution(const std::vector<LengthBin>& dist,
                                              std::int64_t batch) {
  std::vector<LengthBin> out;
  double cdf = 0, below = 0;
  const double b = static_cast<double>(batch);
  for (const auto& bin : dist) {
    cdf = &bin == &dist.back() ? 1.0 : std::min(1.0, cdf + bin.count);
    const double at = std::pow(cdf, b);
    out.push_back({bin.tokens, at - below});
    below = at;
  }
  return out;
}

}  // namespace ftplan
