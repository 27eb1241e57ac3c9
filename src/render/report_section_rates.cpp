// Tensor rates per precision on each card, their ratios, and which training formats each card
// supports, with notes shared by the cards they apply to.
#include "render/report_sections.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace ftplan {

namespace {

class RatesSection : SectionWriter {
 public:
  using SectionWriter::SectionWriter;

  std::string precision_label(TensorPrecision p) const {
    return upper(tensor_precision_name(p)) + (p == TensorPrecision::kINT8 ? " (TOPS)" : "");
  }

  // Notes that share a text are given once: "RTX PRO 6000 Server, BF16 and FP16: ...".
  struct GroupedNotes {
    std::vector<std::string> texts;
    std::vector<std::vector<std::string>> cards, subjects;
    void add(const std::string& text, const std::string& card, const std::string& subject) {
      const auto it = std::find(texts.begin(), texts.end(), text);
      const auto i = static_cast<std::size_t>(it - texts.begin());
      if (it == texts.end()) {
        texts.push_back(text);
        cards.emplace_back();
        subjects.emplace_back();
      }
      if (std::find(cards[i].begin(), cards[i].end(), card) == cards[i].end())
        cards[i].push_back(card);
      if (std::find(subjects[i].begin(), subjects[i].end(), subject) == subjects[i].end())
        subjects[i].push_back(subject);
    }
  };

  // A card made from the same chip as the first compared card (same architecture and memory):
  // its ratio to that card says nothing about the comparison.
  bool same_chip_as_first(const GpuSpec& g) const {
    const GpuSpec& a = *m_.cards.front();
    return g.architecture == a.architecture && g.memory_type.value == a.memory_type.value &&
           g.datasheet_GB.value == a.datasheet_GB.value;
  }

  DocSection rates() const {
    const ReportRates& r = m_.rates;
    DocSection s{"rates", t(Txt::kRatesTitle), {}};
    s.blocks.push_back(paragraph(t(Txt::kRatesIntro)));
    std::vector<std::size_t> versus;  // cards the first compared card is set against
    for (std::size_t c = 1; c < r.cards.size(); ++c)
      if (!same_chip_as_first(*r.cards[c])) versus.push_back(c);
    DocTable tbl;
    tbl.caption = t(Txt::kRatesCaption);
    tbl.headers = {t(Txt::kColPrecision)};
    for (const GpuSpec* g : r.cards)
      tbl.headers.push_back(card_name(*g));
    for (std::size_t c : versus)
      tbl.headers.push_back(card_name(*r.cards[0]) + " / " + card_name(*r.cards[c]));
    tbl.numeric.assign(tbl.headers.size(), true);
    tbl.numeric[0] = false;
    GroupedNotes unknown;
    for (auto p : kAllTensorPrecisions) {
      bool any = false;
      for (const GpuSpec* g : r.cards)
        any |= g->tensor_figure(p).value.has_value();
      if (!any) continue;  // a precision no card has a rate for
      std::vector<std::string> row = {precision_label(p)};
      for (const GpuSpec* g : r.cards) {
        const Figure<double>& fig = g->tensor_figure(p);
        if (!fig.value) {
          row.push_back(t(Txt::kUnknown));
          unknown.add(fig.unknown_reason, card_name(*g), upper(tensor_precision_name(p)));
          continue;
        }
        row.push_back(n(*fig.value, 1) + (fig.sparse_halved ? "*" : ""));
      }
      for (std::size_t c : versus) {
        const auto& ratio = r.first_over[c][static_cast<std::size_t>(p)];
        row.push_back(ratio ? times(*ratio) : dash());
      }
      tbl.rows.push_back(std::move(row));
    }
    s.blocks.push_back(table(std::move(tbl)));
    std::vector<std::string> notes;
    for (std::size_t i = 0; i < unknown.texts.size(); ++i)
      notes.push_back(f(Txt::kRateUnknown, join(unknown.cards[i]), join(unknown.subjects[i]),
                        source_words(unknown.texts[i])));
    for (const GpuSpec* g : r.cards) {
      std::vector<std::string> with_accumulate;
      std::string mode;
      for (auto p : kAllTensorPrecisions) {
        const auto& fig = g->tensor_figure(p);
        if (fig.accumulate.empty()) continue;
        with_accumulate.push_back(upper(tensor_precision_name(p)));
        mode = upper(fig.accumulate);
      }
      if (!with_accumulate.empty())
        notes.push_back(f(Txt::kAccumulateNote, card_name(*g), join(with_accumulate), mode));
    }
    for (std::size_t c : versus) {
      const auto& bf16 = r.first_over[c][static_cast<std::size_t>(TensorPrecision::kBF16)];
      const auto& fp8 = r.first_over[c][static_cast<std::size_t>(TensorPrecision::kFP8)];
      if (bf16 && fp8)
        s.blocks.push_back(
            paragraph(f(Txt::kRatesRatio, card_name(*r.cards[0]), card_name(*r.cards[c]),
                        n(to_TFLOPS(*r.devices[0].rate(TensorPrecision::kBF16)), 1),
                        n(to_TFLOPS(*r.devices[c].rate(TensorPrecision::kBF16)), 1), times(*bf16),
                        times(*fp8))));
      else if (!bf16)
        s.blocks.push_back(paragraph(f(Txt::kRatesNoRatio, card_name(*r.cards[c]))));
    }
    s.blocks.push_back(list(notes));

    s.blocks.push_back(paragraph(t(Txt::kFormatsIntro)));
    DocTable formats;
    formats.caption = t(Txt::kFormatsCaption);
    formats.headers = {t(Txt::kColFormat)};
    for (const GpuSpec* g : r.cards)
      formats.headers.push_back(card_name(*g));
    formats.numeric.assign(formats.headers.size(), false);
    // Footnotes by text: cards that share a rule share its note.
    GroupedNotes why;
    const auto& names = compute_format_names();
    for (std::size_t i = 0; i < names.size(); ++i) {
      std::vector<std::string> row = {upper(names[i])};
      for (std::size_t c = 0; c < r.cards.size(); ++c) {
        const FormatSupport& fs = r.formats[c][i];
        std::string cell = t(fs.supported ? Txt::kYes : Txt::kNo);
        const std::string& text = fs.supported ? fs.caveat : fs.reason;
        if (!text.empty()) {
          why.add(text, card_name(*r.cards[c]), upper(names[i]));
          const auto at = std::find(why.texts.begin(), why.texts.end(), text) - why.texts.begin();
          cell += fmt::format(" [{}]", at + 1);
        }
        row.push_back(cell);
      }
      formats.rows.push_back(std::move(row));
    }
    s.blocks.push_back(table(std::move(formats)));
    std::vector<std::string> format_notes;
    for (std::size_t i = 0; i < why.texts.size(); ++i)
      format_notes.push_back(fmt::format("[{}] {}, {}: {}", i + 1, join(why.cards[i]),
                                         join(why.subjects[i]), source_words(why.texts[i])));
    s.blocks.push_back(list(format_notes));
    return s;
  }
};

}  // namespace

DocSection report_rates_section(const ReportModel& m, const Catalog& catalog,
                                const ReportWords& words) {
  return RatesSection(m, catalog, words).rates();
}

}  // namespace ftplan
