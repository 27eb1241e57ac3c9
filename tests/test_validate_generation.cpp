// The generation model against published serving measurements (data/measured/inference.yaml):
// every row is predicted or skipped with a reason, the errors validate reports are those of the
// generation model's own functions, and the reader of the rows is strict, naming the file, the key
// and the offending value.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/numeric.hpp"
#include "infer/measured_generation.hpp"
#include "plan/evaluate.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

const PlanningData& planning() {
  static const PlanningData d = PlanningData::load(test::catalog());
  return d;
}

std::vector<MeasuredGeneration> builtin_rows() {
  const DataFile* f = test::catalog().file("measured/inference.yaml");
  EXPECT_NE(f, nullptr);
  EXPECT_TRUE(is_measured_generation_file(*f));
  return parse_measured_generation(*f, test::catalog());
}

TEST(GenerationValidation, EveryBuiltinRowIsPredictedFromTheModelsFunctions) {
  const auto rows = builtin_rows();
  ASSERT_GE(rows.size(), 5u);
  const GenerationValidationReport r = validate_generation(rows, planning());
  ASSERT_EQ(r.rows.size(), rows.size());
  int kv_rows = 0, decode_rows = 0;
  for (const auto& row : r.rows) {
    const MeasuredGeneration& m = *row.row;
    ASSERT_FALSE(row.skipped) << m.id << ": " << row.reason;
    ASSERT_TRUE(m.kv_cache || m.decode) << m.id;
    const GenerationModel g = make_generation_model(m.model_ptr, m.weights, m.kv_dtype, m.tp);
    if (m.decode) {
      // One decode step at the decode's mean context, the tensor-parallel all-reduces included.
      ++decode_rows;
      const MeasuredDecode& d = *m.decode;
      const Topology t = build_topology(*m.gpu_spec, m.tp, "", planning().comm);
      const TensorParallelLink link =
          m.tp > 1 ? TensorParallelLink{&t, &planning().comm} : TensorParallelLink{};
      const GenerationEfficiency e =
          generation_efficiency(planning().efficiency(*m.gpu_spec), g, m.gpu_spec->architecture,
                                static_cast<double>(d.concurrency));
      const PassTime step = decode_time(g, make_device(*m.gpu_spec), d.concurrency,
                                        d.input_tokens + d.output_tokens / 2, e, "weights", link);
      EXPECT_DOUBLE_EQ(row.predicted_tpot_ms, step.time().value * 1e3) << m.id;
      EXPECT_DOUBLE_EQ(row.tpot_error, (step.time().value * 1e3 - d.tpot_ms) / d.tpot_ms) << m.id;
    }
    if (!m.kv_cache) continue;
    ++kv_rows;
    // Recompute the prediction from infer/generation directly.
    const GenerationMemory mem =
        generation_memory(g, m.gpu_spec->capacity(), m.utilization,
                          planning().overheads.cuda_context, m.max_model_len, m.block_size);
    const double block_bytes = kv_bytes_per_token(g).value * static_cast<double>(m.block_size);
    const auto expected_tokens =
        mem.kv_budget.value > 0
            ? static_cast<std::int64_t>(std::floor(mem.kv_budget.value / block_bytes)) *
                  m.block_size
            : 0;
    EXPECT_EQ(row.predicted_tokens, expected_tokens) << m.id;
    const double measured = static_cast<double>(m.kv_cache->tokens);
    EXPECT_DOUBLE_EQ(row.tokens_error, (static_cast<double>(expected_tokens) - measured) / measured)
        << m.id;
    if (m.kv_cache->memory) {
      const double unit = m.kv_cache->unit == "GiB" ? kBytesPerGiB : kBytesPerGB;
      const double logged = *m.kv_cache->memory * unit;
      ASSERT_TRUE(row.logged_memory_tokens.has_value()) << m.id;
      EXPECT_EQ(*row.logged_memory_tokens,
                static_cast<std::int64_t>(std::floor(logged / block_bytes)) * m.block_size)
          << m.id;
      EXPECT_DOUBLE_EQ(*row.kv_memory_error, (mem.kv_budget.value - logged) / logged) << m.id;
      // The logged memory and the logged tokens agree at ftplan's bytes per token: the per-token
      // size of the cache is exact up to the log's rounding to 0.01 GiB and the note's causes.
      EXPECT_LE(std::abs(*row.logged_memory_tokens_error), 0.02) << m.id;
    }
    if (m.kv_cache->weights) {
      const double unit = m.kv_cache->unit == "GiB" ? kBytesPerGiB : kBytesPerGB;
      const double logged = *m.kv_cache->weights * unit;
      EXPECT_DOUBLE_EQ(*row.weights_error, (g.weights_bytes.value - logged) / logged) << m.id;
    }
  }
  EXPECT_EQ(r.kv_tokens.rows, kv_rows);
  EXPECT_EQ(r.decode_tpot.rows, decode_rows);
  EXPECT_GE(kv_rows, 5);
  EXPECT_GE(decode_rows, 10);
  EXPECT_EQ(r.skipped, 0);
  EXPECT_GT(r.kv_tokens_from_logged_memory.rows, 0);
  EXPECT_LE(r.kv_tokens_from_logged_memory.median_abs_error, 0.02);
}

TEST(GenerationValidation, DecodeRowsArePredictedAsOneDecodeStep) {
  const std::string text = R"(inference:
  - id: D1
    source: infer-vllm-issue-10517
    engine: vllm
    model: llama-3.1-8b
    gpu: h100-sxm
    weights: bf16
    kv_dtype: bf16
    gpu_memory_utilization: 0.9
    max_model_len: 4096
    decode: {input_tokens: 1024, output_tokens: 256, concurrency: 8, tpot_ms: 9.0}
)";
  const auto rows = parse_measured_generation({"mine.yaml", text, {}}, test::catalog());
  const GenerationValidationReport r = validate_generation(rows, planning());
  ASSERT_EQ(r.rows.size(), 1u);
  const MeasuredGeneration& m = rows[0];
  const GenerationModel g = make_generation_model(m.model_ptr, m.weights, m.kv_dtype, 1);
  const GenerationEfficiency e =
      generation_efficiency(planning().efficiency(*m.gpu_spec), g, m.gpu_spec->architecture, 8);
  const PassTime step = decode_time(g, make_device(*m.gpu_spec), 8, 1024 + 128, e);
  EXPECT_DOUBLE_EQ(r.rows[0].predicted_tpot_ms, step.time().value * 1e3);
  EXPECT_DOUBLE_EQ(r.rows[0].tpot_error, (step.time().value * 1e3 - 9.0) / 9.0);
  EXPECT_EQ(r.decode_tpot.rows, 1);
}

// The reader's error for `row` (a row's keys, indented 4) names the file, the key and the value.
void expect_error(const std::string& row, const std::string& key, const std::string& value) {
  const std::string text = "inference:\n  - id: X1\n" + row;
  try {
    parse_measured_generation({"bad.yaml", text, {}}, test::catalog());
    ADD_FAILURE() << "no error for key " << key;
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bad.yaml"), std::string::npos) << what;
    EXPECT_NE(what.find(key), std::string::npos) << what;
    EXPECT_NE(what.find(value), std::string::npos) << what;
  }
}

TEST(GenerationValidation, TheReaderNamesTheFileTheKeyAndTheValue) {
  const std::string common =
      "    source: infer-vllm-issue-10517\n"
      "    gpu_memory_utilization: 0.9\n"
      "    max_model_len: 4096\n"
      "    kv_dtype: bf16\n";
  const std::string kv = "    kv_cache: {tokens: 1000}\n";
  expect_error(common + kv +
                   "    engine: vllm\n    model: llama-9b\n    gpu: h100-sxm\n"
                   "    weights: bf16\n",
               "model", "llama-9b");
  expect_error(common + kv +
                   "    engine: vllm\n    model: llama-3.1-8b\n    gpu: h900\n"
                   "    weights: bf16\n",
               "gpu", "h900");
  expect_error(common + kv +
                   "    engine: tgi\n    model: llama-3.1-8b\n    gpu: h100-sxm\n"
                   "    weights: bf16\n",
               "engine", "tgi");
  expect_error(common + kv +
                   "    engine: vllm\n    model: llama-3.1-8b\n    gpu: h100-sxm\n"
                   "    weights: int3\n",
               "weights", "int3");
  expect_error(common + kv +
                   "    engine: vllm\n    model: llama-3.1-8b\n    gpu: h100-sxm\n"
                   "    weights: bf16\n    tp: 3\n",
               "tp", "3");
  expect_error(common + "    kv_cache: {tokens: 1000, memory: 2.5}\n" +
                   "    engine: vllm\n    model: llama-3.1-8b\n    gpu: h100-sxm\n"
                   "    weights: bf16\n",
               "unit", "GB, GiB, MB or MiB");
  expect_error(common + kv +
                   "    engine: vllm\n    model: llama-3.1-8b\n    gpu: h100-sxm\n"
                   "    weights: bf16\n    batch: 4\n",
               "batch", "batch");
  expect_error(common +
                   "    engine: vllm\n    model: llama-3.1-8b\n    gpu: h100-sxm\n"
                   "    weights: bf16\n",
               "id", "X1");
  expect_error(common + "    kv_cache: {tokens: -5}\n" +
                   "    engine: vllm\n    model: llama-3.1-8b\n    gpu: h100-sxm\n"
                   "    weights: bf16\n",
               "tokens", "-5");
}

TEST(GenerationValidation, ValidateReportsTheInferenceRows) {
  // The text of the serving file alone (the built-in run also times every training row); the
  // built-in run's JSON below holds the same rows.
  auto r =
      test::run_cli({"validate", std::string(FTPLAN_SOURCE_DIR) + "/data/measured/inference.yaml"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* text : {"Generation model vs published serving measurements", "\nV1 ", "\nS1 ",
                           "\nV4 ", "KV tokens from the card", "KV tokens from the logged memory"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text;
  auto j = test::run_cli({"validate", "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  const auto rows = builtin_rows();
  const GenerationValidationReport report = validate_generation(rows, planning());
  ASSERT_EQ(doc["inference"]["rows"].size(), rows.size());
  EXPECT_EQ(doc["inference"]["summary"]["kv_tokens"]["rows"], report.kv_tokens.rows);
  EXPECT_NEAR(doc["inference"]["summary"]["kv_tokens"]["median_abs_error"].get<double>(),
              report.kv_tokens.median_abs_error, 1e-4);
  EXPECT_EQ(doc["inference"]["summary"]["decode_tpot"]["rows"], report.decode_tpot.rows);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = doc["inference"]["rows"][i];
    EXPECT_EQ(row.contains("kv_cache"), rows[i].kv_cache.has_value()) << rows[i].id;
    EXPECT_EQ(row.contains("decode"), rows[i].decode.has_value()) << rows[i].id;
    if (rows[i].kv_cache)
      EXPECT_NEAR(row["kv_cache"]["error"].get<double>(), report.rows[i].tokens_error, 1e-4)
          << rows[i].id;
    if (rows[i].decode)
      EXPECT_NEAR(row["decode"]["error"].get<double>(), report.rows[i].tpot_error, 1e-4)
          << rows[i].id;
  }
}

TEST(GenerationValidation, TheEnginesTimePerLayerIsTheFitOfTheBuiltinRows) {
  // The data's figure is what the fit gives on the built-in decode rows (whole microseconds), its
  // record the fit's errors: the constant cannot drift from the measurements it came from.
  const DecodeLayerFit fit = fit_decode_layer_time(builtin_rows(), planning());
  const GenerationCosts& data = default_efficiency(test::catalog()).generation;
  ASSERT_GE(fit.rows, 10);
  ASSERT_GE(fit.sources, 3);
  EXPECT_NEAR(data.seconds_per_decode_layer, fit.seconds_per_layer, 1e-9);
  EXPECT_EQ(data.fit.runs, fit.rows);
  EXPECT_EQ(data.fit.sources, fit.sources);
  EXPECT_NEAR(data.fit.median_abs_error, fit.median_abs_error, 0.0005);
  EXPECT_NEAR(data.fit.loso_median_abs_error, fit.loso_median_abs_error, 0.0005);
  EXPECT_NEAR(data.fit.error_low, fit.error_low, 0.0005);
  EXPECT_NEAR(data.fit.error_high, fit.error_high, 0.0005);
  // It earns its place on sources it was not fitted to: each source predicted from the others
  // errs less, at the median, than the roofline alone does on all rows.
  std::vector<double> bare;
  for (const auto& m : builtin_rows()) {
    if (!m.decode) continue;
    const GenerationModel g = make_generation_model(m.model_ptr, m.weights, m.kv_dtype, m.tp);
    const Topology t = build_topology(*m.gpu_spec, m.tp, "", planning().comm);
    const TensorParallelLink link =
        m.tp > 1 ? TensorParallelLink{&t, &planning().comm} : TensorParallelLink{};
    GenerationEfficiency e =
        generation_efficiency(planning().efficiency(*m.gpu_spec), g, m.gpu_spec->architecture,
                              static_cast<double>(m.decode->concurrency));
    e.decode_layer_seconds = 0;
    const PassTime step = decode_time(g, make_device(*m.gpu_spec), m.decode->concurrency,
                                      m.decode->context(), e, "weights", link);
    bare.push_back(std::abs(step.time().value * 1e3 - m.decode->tpot_ms) / m.decode->tpot_ms);
  }
  EXPECT_LT(fit.loso_median_abs_error, median_of(bare));
  EXPECT_LT(fit.median_abs_error, fit.loso_median_abs_error + 1e-12);
}

TEST(GenerationValidation, AStepTimedAtOneContextIsPredictedThere) {
  // A bare loop (engine pytorch) replaying one decode step at 4,096 cached tokens: no engine
  // memory split is needed, and the step is predicted at that context.
  const std::string text = R"(inference:
  - id: P1
    source: infer-vllm-issue-10517
    engine: pytorch
    model: llama-3.1-8b
    gpu: h200-sxm
    weights: bf16
    kv_dtype: bf16
    decode: {context: 4096, concurrency: 32, tpot_ms: 7.5}
)";
  const auto rows = parse_measured_generation({"mine.yaml", text, {}}, test::catalog());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].decode->context(), 4096);
  const GenerationValidationReport r = validate_generation(rows, planning());
  const GenerationModel g =
      make_generation_model(rows[0].model_ptr, WeightFormat::kBF16, KvDtype::kBF16, 1);
  const GenerationEfficiency e = generation_efficiency(planning().efficiency(*rows[0].gpu_spec), g,
                                                       rows[0].gpu_spec->architecture, 32);
  const PassTime step = decode_time(g, make_device(*rows[0].gpu_spec), 32, 4096, e);
  EXPECT_DOUBLE_EQ(r.rows[0].predicted_tpot_ms, step.time().value * 1e3);
  const auto j = test::run_cli({"validate", "-", "--json"}, text);
  ASSERT_EQ(j.code, 0) << j.err;
  const auto decode = nlohmann::json::parse(j.out)["inference"]["rows"][0]["decode"];
  EXPECT_EQ(decode["context"], 4096);
  EXPECT_TRUE(decode["fixed_context"].get<bool>());
  EXPECT_FALSE(decode.contains("input_tokens"));
}

TEST(GenerationValidation, DecodeFormsAndTheEnginesSplitAreChecked) {
  const std::string row =
      "    source: infer-vllm-issue-10517\n    model: llama-3.1-8b\n    gpu: h100-sxm\n"
      "    weights: bf16\n    kv_dtype: bf16\n";
  // One form of decode: a fixed context, or input and output lengths.
  expect_error(row +
                   "    engine: pytorch\n"
                   "    decode: {context: 512, input_tokens: 128, concurrency: 1, tpot_ms: 5}\n",
               "input_tokens", "context");
  // A kv_cache figure needs the engine's memory split; a bare loop has none.
  expect_error(row +
                   "    engine: vllm\n    gpu_memory_utilization: 0.9\n"
                   "    kv_cache: {tokens: 1000}\n",
               "max_model_len", "kv_cache");
  expect_error(row +
                   "    engine: pytorch\n    gpu_memory_utilization: 0.9\n"
                   "    max_model_len: 4096\n    kv_cache: {tokens: 1000}\n",
               "engine", "pytorch");
}

}  // namespace
}  // namespace ftplan
