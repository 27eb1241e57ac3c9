#include "memory/suggest.hpp"

#include <algorithm>
#include <utility>

#include "core/error.hpp"
#include "memory/solve.hpp"
#include "workload/objective.hpp"
#include "workload/roles.hpp"

namespace ftplan {

namespace {

// The ranking rule. A suggestion that fits comes before one that does not. Among those that fit,
// the smaller change first, by `size`:
//   0  shard the states over the cards given, or recompute activations: the same training on the
//      same cards (more communication, or about a third more compute);
//   1  an 8-bit optimizer, a smaller micro-batch: the same data and model, the update's numerics
//      or the batch (grad-accum can keep it) change;
//   2  more cards (more hardware to pay for), a quantized base (the frozen weights' numerics);
//   3  a shorter sequence: samples are cut or left out, so the data changes;
//   4  several changes together (tried only when no one change fits).
// Within one size, the one that leaves the more headroom first.
int change_size(SuggestionKind k) {
  switch (k) {
    case SuggestionKind::kShard:
    case SuggestionKind::kRecompute:
      return 0;
    case SuggestionKind::kOptimizer8bit:
    case SuggestionKind::kMicroBatch:
      return 1;
    case SuggestionKind::kCards:
    case SuggestionKind::kQuantizedBase:
      return 2;
    case SuggestionKind::kSequence:
      return 3;
    case SuggestionKind::kCombined:
      return 4;
  }
  return 4;
}

bool fits(const MemoryEstimate& m) {
  return m.verdict == Verdict::kFits;
}

bool shards_states(Sharding s) {
  return s == Sharding::kFsdp;
}

SettingChange named(std::string key, std::string_view value) {
  return {std::move(key), std::string(value), 0};
}

SettingChange numbered(std::string key, std::int64_t value) {
  return {std::move(key), "", value};
}

// The run with a change, as the engine sees it; none when the changed run is not valid input
// (validate() refuses it: e.g. a setting the new method does not read).
struct Candidate {
  bool valid = false;
  MemoryEstimate memory;
};

Candidate evaluate(const Workload& w, const Placement& p) {
  Candidate c;
  try {
    validate(w);
    validate(p);
    c.memory = estimate_memory(w, p);
    c.valid = true;
  } catch (const UserError&) {
    c.valid = false;
  }
  return c;
}

class Suggestions {
 public:
  void add(SuggestionKind kind, std::vector<SettingChange> change, Reason reason,
           const Candidate& c) {
    if (!c.valid) return;
    Suggestion s;
    s.kind = kind;
    s.change = std::move(change);
    s.reason = std::move(reason);
    s.memory = c.memory;
    s.size = change_size(kind);
    list_.push_back(std::move(s));
  }

  bool any_fits() const {
    return std::any_of(list_.begin(), list_.end(), [](const Suggestion& s) { return s.fits(); });
  }

  std::vector<Suggestion> ranked() && {
    const bool any_fits = this->any_fits();
    std::vector<Suggestion> out;
    for (auto& s : list_)
      if (s.fits() || !any_fits) out.push_back(std::move(s));
    std::stable_sort(out.begin(), out.end(), [](const Suggestion& a, const Suggestion& b) {
      if (a.fits() != b.fits()) return a.fits();
      if (a.size != b.size) return a.size < b.size;
      return a.memory.headroom > b.memory.headroom;
    });
    // None fits: only the one that comes closest.
    if (!any_fits && out.size() > 1) {
      const auto closest =
          std::max_element(out.begin(), out.end(), [](const Suggestion& a, const Suggestion& b) {
            return a.memory.headroom < b.memory.headroom;
          });
      Suggestion best = std::move(*closest);
      out.clear();
      out.push_back(std::move(best));
    }
    return out;
  }

 private:
  std::vector<Suggestion> list_;
};

void suggest_shard(const Workload& w, const Placement& p, Suggestions& out) {
  if (p.mig != nullptr || p.count < 2 || shards_states(p.sharding)) return;
  Placement q = p;
  q.sharding = Sharding::kFsdp;
  q.shard_group = 0;  // (a hybrid group does not apply to FSDP)
  const Reason why = p.sharding == Sharding::kHsdp && p.shard_group > 0
                         ? Reason(ReasonCode::kSuggestShardAll)
                               .count("count", p.count)
                               .count("group", p.shard_group)
                         : Reason(ReasonCode::kSuggestShard).count("count", p.count);
  out.add(SuggestionKind::kShard, {named("shard", sharding_name(Sharding::kFsdp))}, why,
          evaluate(w, q));
}

// The fewest cards, above the run's, that fit with the states sharded; none fitting up to
// `max_cards`: the largest count tried (the closest).
void suggest_cards(const Workload& w, const Placement& p, int max_cards, Suggestions& out) {
  if (p.mig != nullptr || p.count >= max_cards) return;
  Placement q = p;
  q.sharding = Sharding::kFsdp;
  q.shard_group = 0;  // (a hybrid group does not apply to FSDP)
  Candidate c;
  for (int n = p.count + 1; n <= max_cards; ++n) {
    q.count = n;
    c = evaluate(w, q);
    if (!c.valid || fits(c.memory)) break;
  }
  std::vector<SettingChange> change = {numbered("gpus", q.count)};
  if (!shards_states(p.sharding)) change.push_back(named("shard", sharding_name(q.sharding)));
  out.add(SuggestionKind::kCards, std::move(change),
          Reason(ReasonCode::kSuggestCards).count("count", q.count).name("card", p.gpu->name), c);
}

// Full recomputation, or selective when that fits already (it recomputes less).
void suggest_recompute(const Workload& w, const Placement& p, Suggestions& out) {
  const std::int64_t blocks = w.model->arch.layers;
  if (w.recompute == Recompute::kFull && w.recomputed_blocks(blocks) == blocks) return;
  Workload v = w;
  Candidate c;
  if (w.recompute == Recompute::kFull) {
    // Layer-wise checkpointing: every block instead.
    v.recompute_layers = 0;
    out.add(SuggestionKind::kRecompute, {numbered("recompute_layers", blocks)},
            Reason(ReasonCode::kSuggestRecompute)
                .name("recompute", std::string(recompute_name(Recompute::kFull))),
            evaluate(v, p));
    return;
  }
  for (Recompute r : {Recompute::kSelective, Recompute::kFull}) {
    if (r == w.recompute) continue;
    v.recompute = r;
    c = evaluate(v, p);
    if (c.valid && fits(c.memory)) break;
  }
  out.add(SuggestionKind::kRecompute, {named("recompute", recompute_name(v.recompute))},
          Reason(ReasonCode::kSuggestRecompute)
              .name("recompute", std::string(recompute_name(v.recompute))),
          c);
}

// 8-bit states for the Adam-family optimizers of a full fine-tune (bitsandbytes AdamW8bit).
void suggest_optimizer(const Workload& w, const Placement& p, Suggestions& out) {
  if (!method_traits(w.method).trains_base) return;
  if (w.optimizer != Optimizer::kAdamW && w.optimizer != Optimizer::kPagedAdamW) return;
  const Optimizer eight =
      w.optimizer == Optimizer::kPagedAdamW ? Optimizer::kPagedAdamW8bit : Optimizer::kAdamW8bit;
  Workload v = w;
  v.optimizer = eight;
  out.add(SuggestionKind::kOptimizer8bit, {named("optimizer", optimizer_name(eight))},
          Reason(ReasonCode::kSuggestOptimizer8bit)
              .name("optimizer", std::string(optimizer_name(eight))),
          evaluate(v, p));
}

// The setting that names what is trained: the method itself for supervised fine-tuning, the adapter
// of a preference objective.
std::string adapter_key(const Workload& w) {
  return w.objective == Objective::kSft ? "method" : "adapter";
}

// QLoRA for LoRA and a full fine-tune, QDoRA for DoRA: the frozen base in the default quantized
// format (NF4, as the CLI and the API take it when base_quant is not given).
void suggest_quantized_base(const Workload& w, const Placement& p, Suggestions& out) {
  if (method_traits(w.method).quantized_base) return;
  Workload v = w;
  v.method = w.method == Method::kDora ? Method::kQdora : Method::kQlora;
  if (method_traits(w.method).trains_base) v.lora = LoraConfig{};
  out.add(SuggestionKind::kQuantizedBase, {named(adapter_key(w), method_name(v.method))},
          Reason(ReasonCode::kSuggestQuantizedBase)
              .name("method", std::string(method_label(v.method)))
              .name("format", v.quant.format),
          evaluate(v, p));
}

// The solvers' answers, below the run's own value.
void suggest_solved(const Workload& w, const Placement& p, Suggestions& out) {
  if (w.lengths.histogram.empty()) {
    const SolveResult r = max_sequence(w, p);
    if (r.largest > 0 && r.largest < w.seq) {
      Workload v = w;
      v.seq = r.largest;
      out.add(SuggestionKind::kSequence, {numbered("seq", r.largest)},
              Reason(ReasonCode::kSuggestSequence).digits("seq", r.largest), evaluate(v, p));
    }
  }
  if (w.micro_batch > 1) {
    const SolveResult r = max_micro_batch(w, p);
    if (r.largest > 0 && r.largest < w.micro_batch) {
      Workload v = w;
      v.micro_batch = r.largest;
      out.add(SuggestionKind::kMicroBatch, {numbered("micro_batch", r.largest)},
              Reason(ReasonCode::kSuggestMicroBatch).count("micro_batch", r.largest),
              evaluate(v, p));
    }
  }
}

// `w` and `p` with `change` applied, as the CLI and the API apply the keys to a request.
void apply_change(const std::vector<SettingChange>& change, const Workload& base, Workload& w,
                  Placement& p) {
  for (const SettingChange& c : change) {
    if (c.key == "shard") p.sharding = parse_sharding(c.text);
    if (c.key == "gpus") p.count = static_cast<int>(c.number);
    if (c.key == "recompute") w.recompute = parse_recompute(c.text);
    if (c.key == "recompute_layers") w.recompute_layers = c.number;
    if (c.key == "optimizer") w.optimizer = parse_optimizer(c.text);
    if (c.key == "micro_batch") w.micro_batch = c.number;
    if (c.key == "method" || c.key == "adapter") {
      w.method = parse_method(c.text);
      if (method_traits(base.method).trains_base) w.lora = LoraConfig{};
    }
  }
}

// The changes of a combination that fits, less each one the run fits without (the last one
// found is needed: without it the run did not fit). A change and the sharding it brings (gpus
// and shard) go together.
void drop_unneeded(const Workload& w, const Placement& p, std::vector<SettingChange>& change,
                   std::vector<Reason>& parts, Candidate& c) {
  for (std::size_t i = 0; i + 1 < parts.size();) {
    // parts[i] names change[i] (a combination adds one of each, gpus last with its shard).
    std::vector<SettingChange> fewer = change;
    fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(i));
    Workload v = w;
    Placement q = p;
    apply_change(fewer, w, v, q);
    const Candidate without = evaluate(v, q);
    if (without.valid && fits(without.memory)) {
      change = std::move(fewer);
      parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(i));
      c = without;
    } else {
      ++i;
    }
  }
}

// No one change fits: the changes applied one after the other until the run fits, in this order:
// those that keep the training as it is (sharding over the cards given, full recomputation), an
// 8-bit optimizer, the largest micro-batch that fits, a quantized base, then the fewest cards
// (sharded); each only where it applies. None when even all of them do not fit.
void suggest_combined(const Workload& w, const Placement& p, int max_cards, Suggestions& out) {
  Workload v = w;
  Placement q = p;
  std::vector<SettingChange> change;
  std::vector<Reason> parts;
  Candidate c;
  const auto fits_now = [&] {
    c = evaluate(v, q);
    return c.valid && fits(c.memory);
  };
  const auto found = [&] {
    drop_unneeded(w, p, change, parts, c);
    if (parts.size() < 2) return;  // one change alone: tried, and it did not fit
    out.add(SuggestionKind::kCombined, change,
            Reason(ReasonCode::kSuggestCombined).list("changes", parts), c);
  };
  if (q.mig == nullptr && q.count > 1 && !shards_states(q.sharding)) {
    q.sharding = Sharding::kFsdp;
    q.shard_group = 0;  // (a hybrid group does not apply to FSDP)
    change.push_back(named("shard", sharding_name(q.sharding)));
    parts.push_back(Reason(ReasonCode::kSuggestShard).count("count", q.count));
  }
  if (v.recompute != Recompute::kFull) {
    v.recompute = Recompute::kFull;
    change.push_back(named("recompute", recompute_name(v.recompute)));
    parts.push_back(Reason(ReasonCode::kSuggestRecompute)
                        .name("recompute", std::string(recompute_name(v.recompute))));
  } else if (v.recomputed_blocks(v.model->arch.layers) < v.model->arch.layers) {
    v.recompute_layers = 0;  // layer-wise checkpointing: every block
    change.push_back(numbered("recompute_layers", v.model->arch.layers));
    parts.push_back(Reason(ReasonCode::kSuggestRecompute)
                        .name("recompute", std::string(recompute_name(v.recompute))));
  }
  if (method_traits(v.method).trains_base &&
      (v.optimizer == Optimizer::kAdamW || v.optimizer == Optimizer::kPagedAdamW)) {
    v.optimizer =
        v.optimizer == Optimizer::kPagedAdamW ? Optimizer::kPagedAdamW8bit : Optimizer::kAdamW8bit;
    change.push_back(named("optimizer", optimizer_name(v.optimizer)));
    parts.push_back(Reason(ReasonCode::kSuggestOptimizer8bit)
                        .name("optimizer", std::string(optimizer_name(v.optimizer))));
  }
  if (!change.empty() && fits_now()) return found();
  if (v.micro_batch > 1) {
    const SolveResult r = max_micro_batch(v, q);
    if (r.largest > 0 && r.largest < v.micro_batch) {
      v.micro_batch = r.largest;
      change.push_back(numbered("micro_batch", r.largest));
      parts.push_back(Reason(ReasonCode::kSuggestMicroBatch).count("micro_batch", r.largest));
      if (fits_now()) return found();
    }
  }
  if (!method_traits(v.method).quantized_base) {
    const bool full = method_traits(v.method).trains_base;
    v.method = v.method == Method::kDora ? Method::kQdora : Method::kQlora;
    if (full) v.lora = LoraConfig{};
    change.push_back(named(adapter_key(v), method_name(v.method)));
    parts.push_back(Reason(ReasonCode::kSuggestQuantizedBase)
                        .name("method", std::string(method_label(v.method)))
                        .name("format", v.quant.format));
    if (fits_now()) return found();
  }
  if (q.mig != nullptr) return;
  const bool shard_named = !shards_states(p.sharding) && !shards_states(q.sharding);
  q.sharding = Sharding::kFsdp;
  q.shard_group = 0;  // (a hybrid group does not apply to FSDP)
  for (int n = q.count + 1; n <= max_cards; ++n) {
    q.count = n;
    if (!fits_now()) continue;
    change.push_back(numbered("gpus", n));
    if (shard_named) change.push_back(named("shard", sharding_name(q.sharding)));
    parts.push_back(Reason(ReasonCode::kSuggestCards).count("count", n).name("card", p.gpu->name));
    return found();
  }
}

}  // namespace

std::string_view suggestion_kind_name(SuggestionKind k) {
  switch (k) {
    case SuggestionKind::kShard:
      return "shard";
    case SuggestionKind::kCards:
      return "cards";
    case SuggestionKind::kRecompute:
      return "recompute";
    case SuggestionKind::kOptimizer8bit:
      return "optimizer";
    case SuggestionKind::kQuantizedBase:
      return "quantized-base";
    case SuggestionKind::kSequence:
      return "seq";
    case SuggestionKind::kMicroBatch:
      return "micro-batch";
    case SuggestionKind::kCombined:
      return "combined";
  }
  return "shard";
}

std::vector<Suggestion> suggest_fits(const Workload& w, const Placement& p, int max_cards) {
  if (fits_with_reserve(estimate_memory(w, p))) return {};
  Suggestions out;
  suggest_shard(w, p, out);
  suggest_cards(w, p, max_cards, out);
  suggest_recompute(w, p, out);
  suggest_optimizer(w, p, out);
  suggest_quantized_base(w, p, out);
  suggest_solved(w, p, out);
  if (!out.any_fits()) suggest_combined(w, p, max_cards, out);
  return std::move(out).ranked();
}

}  // namespace ftplan
