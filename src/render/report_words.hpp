// How the report writes in one language: its texts (report_text) with their figures filled in,
// numbers as the language writes them (localized_number), units, lists, and the names of the
// model's choices (verdicts, recomputation, sharding, strategies, op classes, links).
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/reason.hpp"
#include "render/localized_number.hpp"
#include "render/report_model.hpp"
#include "render/report_text.hpp"
#include "render/translations.hpp"

namespace ftplan {

// "H200 NVL", "RTX PRO 6000 WS": the catalog's short name.
const std::string& card_name(const GpuSpec& g);
// `s` as a code span.
std::string code(std::string_view s);
std::string upper(std::string_view s);

class ReportWords {
 public:
  // The words of `lang` from the catalog's data/i18n/<lang>.yaml.
  ReportWords(const Catalog& catalog, ReportLang lang);

  ReportLang lang() const { return lang_; }
  const NumberStyle& numbers() const { return style_; }

  // The text `k`, and the text `k` with its figures filled in.
  std::string t(Txt k) const { return std::string(words_.text(k)); }
  template <class... Args>
  std::string f(Txt k, Args&&... args) const {
    return fmt::format(fmt::runtime(words_.text(k)), std::forward<Args>(args)...);
  }

  std::string n(double v, int decimals) const { return localized_number(v, decimals, style_); }
  std::string gb(Bytes b, int decimals) const { return n(to_GB(b), decimals) + " GB"; }
  std::string seconds(Seconds s, int decimals) const { return n(s.value, decimals) + " s"; }
  std::string times(double ratio) const { return n(ratio, 2) + "×"; }
  std::string percent(double fraction) const { return n(100 * fraction, 0) + " %"; }
  std::string dash() const { return "–"; }
  // An engine's reason in this language (render/reason_words).
  std::string reason_text(const Reason& r) const;
  // A data file's own words, kept as they are and set as the language quotes a source.
  std::string source_words(const std::string& text) const;

  // "A", "A and B", "A, B and C" (or "or").
  std::string join(const std::vector<std::string>& items, Txt conjunction = Txt::kAnd) const;

  // 8.03 B / 8,03 Mrd.; 41.9 M / 41,9 Mio.
  std::string count(double v) const;

  std::string verdict(Verdict v) const;
  std::string verdict_mark(Verdict v) const;
  std::string recompute(Recompute r) const;
  std::string method(const Workload& w) const;
  // "FSDP", "HSDP 8" (hybrid: the cards of each shard group, when known).
  std::string sharding(Sharding s, int shard_group = 0) const;
  std::string strategy(CommStrategy s) const;
  std::string op_class(OpClass c) const;
  // "NVLink 4 bridge" / "NVLink-4-Brücke", "PCIe Gen5 x16", "network".
  std::string link(const Link& l, const GpuSpec& g) const;

 private:
  ReportLang lang_;
  Translations words_;
  NumberStyle style_;
};

}  // namespace ftplan
