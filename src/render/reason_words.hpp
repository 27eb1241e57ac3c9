// A reason (core/reason) in words: its code's template from the language's file (the `reasons:`
// section of data/i18n/<lang>.yaml) with each argument formatted as the language writes it.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/reason.hpp"
#include "render/translations.hpp"

namespace ftplan {

// Figures carry the language's decimal mark and no digit groups, as the CLI prints them (bytes in
// GB, shares as "N %"); grouped counts carry the language's group mark; a data file's own words
// are set in the `source_words` template (German quotes them); a list is joined with "; ".
std::string word_reason(const Reason& r, const Translations& words);

// The language the text and JSON renderers word reasons in: the one a command was asked for
// (--lang; per thread, as the server runs requests side by side), else the default the front end
// installs (English from the built-in data). Each is read from its file when first needed.
using WordsLoader = std::function<Translations()>;
void set_default_reason_words(WordsLoader load);
class ScopedReasonWords {
 public:
  explicit ScopedReasonWords(WordsLoader load);
  ~ScopedReasonWords();
  ScopedReasonWords(const ScopedReasonWords&) = delete;
  ScopedReasonWords& operator=(const ScopedReasonWords&) = delete;

 private:
  friend const Translations& reason_words();
  WordsLoader load_;
  std::optional<Translations> words_;
  ScopedReasonWords* previous_;
};
const Translations& reason_words();
// `r` in reason_words().
std::string word_reason(const Reason& r);

}  // namespace ftplan
