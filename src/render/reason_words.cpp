
#include <fmt/format.h>

#include <mutex>
#include <stdexcept>
#include <utility>

#include "core/format.hpp"
#include "render/localized_number.hpp"
#include "render/reason_words.hpp"

namespace ftplan {

namespace {

// `s` (a number as the CLI prints it, "." for the decimal mark) with the language's mark.
std::string with_mark(std::string s, const NumberStyle& style) {
  const std::size_t dot = s.find('.');
  if (dot != std::string::npos) s.replace(dot, 1, style.decimal_mark);
  return s;
}

std::string word_arg(const ReasonArg& a, const Translations& words) {
  const NumberStyle& style = words.number;
  switch (a.kind) {
    case ReasonArgKind::kBytes:
      return with_mark(format_fixed(to_GB(Bytes(a.value)), a.decimals), style) + " GB";
    case ReasonArgKind::kPercent:
      return with_mark(format_fixed(100 * a.value, a.decimals), style) + " %";
    case ReasonArgKind::kNumber:
      return with_mark(
          a.decimals < 0 ? fmt::format("{}", a.value) : format_fixed(a.value, a.decimals), style);
    case ReasonArgKind::kCount:
      return fmt::format("{}", static_cast<long long>(a.value));
    case ReasonArgKind::kGroupedCount:
      return localized_number(a.value, 0, style);
    case ReasonArgKind::kName:
      return a.text;
    case ReasonArgKind::kQuote:
      return word_reason(Reason(ReasonCode::kSourceWords).name("text", a.text), words);
    case ReasonArgKind::kReason:
      return a.reasons.empty() ? std::string() : word_reason(a.reasons.front(), words);
    case ReasonArgKind::kList:
      break;
  }
  std::string out;
  for (const auto& r : a.reasons)
    out += (out.empty() ? "" : "; ") + word_reason(r, words);
  return out;
}

thread_local ScopedReasonWords* current = nullptr;

struct DefaultWords {
  std::mutex mutex;
  WordsLoader load;
  std::optional<Translations> words;
};
DefaultWords& default_words() {
  static DefaultWords d;
  return d;
}

}  // namespace

void set_default_reason_words(WordsLoader load) {
  DefaultWords& d = default_words();
  const std::lock_guard<std::mutex> lock(d.mutex);
  d.load = std::move(load);
  d.words.reset();
}

ScopedReasonWords::ScopedReasonWords(WordsLoader load)
    : load_(std::move(load)), previous_(current) {
  current = this;
}

ScopedReasonWords::~ScopedReasonWords() {
  current = previous_;
}

const Translations& reason_words() {
  if (current) {
    if (!current->words_) current->words_ = current->load_();
    return *current->words_;
  }
  DefaultWords& d = default_words();
  const std::lock_guard<std::mutex> lock(d.mutex);
  if (!d.words) {
    if (!d.load) throw std::logic_error("no words for reasons: none installed");
    d.words = d.load();
  }
  return *d.words;
}

std::string word_reason(const Reason& r) {
  return word_reason(r, reason_words());
}

std::string word_reason(const Reason& r, const Translations& words) {
  if (r.empty()) return {};
  const std::string_view text = words.reason_template(r.code);
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t open = text.find('{', i);
    if (open == std::string_view::npos) {
      out += text.substr(i);
      break;
    }
    out += text.substr(i, open - i);
    const std::size_t close = text.find('}', open);  // checked when the file was read
    const std::string_view name = text.substr(open + 1, close - open - 1);
    const ReasonArg* a = r.arg(name);
    if (!a)
      throw std::logic_error(
          fmt::format("reason {} has no argument '{}'", reason_code_info(r.code).key, name));
    out += word_arg(*a, words);
    i = close + 1;
  }
  return out;
}

}  // namespace ftplan
