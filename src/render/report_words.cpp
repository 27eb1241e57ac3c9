#include "render/report_words.hpp"

#include <cctype>
#include <cmath>

#include "render/reason_words.hpp"
#include "workload/roles.hpp"

namespace ftplan {

const std::string& card_name(const GpuSpec& g) {
  return g.short_name;
}

std::string code(std::string_view s) {
  return fmt::format("`{}`", s);
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

ReportWords::ReportWords(const Catalog& catalog, ReportLang lang)
    : lang_(lang), words_(load_translations(catalog, lang)), style_(words_.number) {}

std::string ReportWords::reason_text(const Reason& r) const {
  return word_reason(r, words_);
}

std::string ReportWords::source_words(const std::string& text) const {
  return reason_text(Reason(ReasonCode::kSourceWords).name("text", text));
}

std::string ReportWords::join(const std::vector<std::string>& items, Txt conjunction) const {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? t(conjunction) : ", ";
    out += items[i];
  }
  return out;
}

std::string ReportWords::count(double v) const {
  const auto scaled = [&](double x, Txt unit) {
    return n(x, x >= 100 ? 0 : (x >= 10 ? 1 : 2)) + t(unit);
  };
  if (std::fabs(v) >= 1e9) return scaled(v / 1e9, Txt::kBillion);
  if (std::fabs(v) >= 1e6) return scaled(v / 1e6, Txt::kMillion);
  return n(v, 0);
}

std::string ReportWords::verdict(Verdict v) const {
  switch (v) {
    case Verdict::kFits:
      return t(Txt::kVerdictFits);
    case Verdict::kTight:
      return t(Txt::kVerdictTight);
    case Verdict::kDoesNotFit:
      break;
  }
  return t(Txt::kVerdictDoesNotFit);
}

std::string ReportWords::verdict_mark(Verdict v) const {
  return v == Verdict::kFits ? "✓" : (v == Verdict::kTight ? "~" : "✗");
}

std::string ReportWords::recompute(Recompute r) const {
  switch (r) {
    case Recompute::kFull:
      return t(Txt::kRecomputeFull);
    case Recompute::kSelective:
      return t(Txt::kRecomputeSelective);
    case Recompute::kNone:
      break;
  }
  return t(Txt::kRecomputeNone);
}

std::string ReportWords::method(const Workload& w) const {
  if (method_traits(w.method).trains_base)
    return f(Txt::kMethodFull, code(optimizer_name(w.optimizer)));
  return f(Txt::kMethodAdapter, method_label(w.method), w.lora.rank);
}

std::string ReportWords::sharding(Sharding s, int shard_group) const {
  switch (s) {
    case Sharding::kNone:
      return t(Txt::kShardingNone);
    case Sharding::kDdp:
      return "DDP";
    case Sharding::kZero1:
      return "ZeRO-1";
    case Sharding::kZero2:
      return "ZeRO-2";
    case Sharding::kHsdp:
      return shard_group > 0 ? fmt::format("HSDP {}", shard_group) : "HSDP";
    case Sharding::kFsdp:
      break;
  }
  return "FSDP";
}

std::string ReportWords::strategy(CommStrategy s) const {
  switch (s) {
    case CommStrategy::kSingleCard:
      return t(Txt::kStrategySingle);
    case CommStrategy::kDataParallel:
      return t(Txt::kStrategyDataParallel);
    case CommStrategy::kZero1:
      return "ZeRO-1";
    case CommStrategy::kZero2:
      return "ZeRO-2";
    case CommStrategy::kFsdp:
      return t(Txt::kStrategyFsdp);
    case CommStrategy::kLoraDataParallel:
      return t(Txt::kStrategyLoraDataParallel);
    case CommStrategy::kHsdp:
      return t(Txt::kStrategyHsdp);
    case CommStrategy::kShardedBaseHybrid:
      return t(Txt::kStrategyShardedBaseHybrid);
    case CommStrategy::kShardedBase:
      break;
  }
  return t(Txt::kStrategyShardedBase);
}

std::string ReportWords::op_class(OpClass c) const {
  static constexpr Txt names[] = {
      Txt::kClassGemm,      Txt::kClassAttention, Txt::kClassAdapter,
      Txt::kClassDequant,   Txt::kClassNorm,      Txt::kClassElementwise,
      Txt::kClassEmbedding, Txt::kClassLoss,      Txt::kClassOptimizer};
  return t(names[static_cast<std::size_t>(c)]);
}

std::string ReportWords::link(const Link& l, const GpuSpec& g) const {
  switch (l.level) {
    case LinkLevel::kNvlink:
      return f(g.nvlink.kind == LinkKind::kSwitch ? Txt::kLinkNvlinkSwitch : Txt::kLinkNvlinkBridge,
               g.nvlink.generation);
    case LinkLevel::kPcie:
      return fmt::format("PCIe Gen{} x{}", g.pcie.generation, g.pcie.lanes);
    case LinkLevel::kNetwork:
      break;
  }
  return t(Txt::kLinkNetwork);
}

}  // namespace ftplan
