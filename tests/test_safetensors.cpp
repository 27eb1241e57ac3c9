// The safetensors header parser, the checkpoint inventory (quantized storage folded into logical
// weights) and the cross-check against config.json. Every file is written by the test; the
// expected numbers are worked out by hand in the comments.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "model/checkpoint.hpp"
#include "model/config_reader.hpp"
#include "model/model.hpp"
#include "model/safetensors.hpp"
#include "safetensors_builder.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using test::SafetensorsBuilder;

TEST(Safetensors, ParsesTensorsMetadataAndDataSize) {
  // a: F16 [2, 3] = 6 elements × 2 bytes = 12 bytes at [0, 12];
  // b: BF16 [4] = 8 bytes at [12, 20]; together 20 data bytes.
  SafetensorsBuilder b;
  b.add("a", "F16", "[2, 3]", 12).add("b", "BF16", "[4]", 8);
  const SafetensorsHeader h = parse_safetensors_prefix(b.file(), "m.safetensors", true);
  ASSERT_EQ(h.tensors.size(), 2u);
  EXPECT_EQ(h.tensors[0].name, "a");
  EXPECT_EQ(h.tensors[0].shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(h.tensors[0].bytes(), 12u);
  EXPECT_EQ(h.tensors[1].dtype, "BF16");
  EXPECT_EQ(h.data_bytes, 20u);
  EXPECT_EQ(h.metadata.at("format"), "pt");
  // A header-only prefix is read without its data; a whole file one byte short is not.
  EXPECT_EQ(parse_safetensors_prefix(b.file(false), "m.safetensors", false).data_bytes, 20u);
  std::string short_file = b.file();
  short_file.pop_back();
  EXPECT_NE(test::error_of([&] {
              parse_safetensors_prefix(short_file, "m.safetensors", true);
            }).find("cover 20 data bytes but the file holds 19"),
            std::string::npos);
}

TEST(Safetensors, HeaderPaddedWithSpacesAndScalarTensors) {
  // A scalar (shape []) has one element: F32 = 4 bytes. The writer may pad with spaces.
  const std::string header = R"({"s": {"dtype": "F32", "shape": [], "data_offsets": [0, 4]}}    )";
  const auto h = parse_safetensors_header(header, "x.safetensors", 4);
  EXPECT_EQ(h.tensors.at(0).numel(), 1);
}

TEST(Safetensors, LengthOutOfBoundsIsRefused) {
  std::string file = SafetensorsBuilder::wrap("{}");
  file[4] = 1;  // 2^32 + 2 bytes: above the 100 MB limit
  EXPECT_NE(test::error_of([&] {
              parse_safetensors_prefix(file, "big.safetensors", false);
            }).find("big.safetensors: header length 4294967298 bytes"),
            std::string::npos);
  EXPECT_NE(test::error_of([] {
              parse_safetensors_prefix("abc", "t.safetensors", false);
            }).find("3 bytes: too short"),
            std::string::npos);
  // The length says 100 bytes, only 2 follow.
  std::string cut = SafetensorsBuilder::wrap("{}");
  cut[0] = 100;
  EXPECT_NE(test::error_of([&] {
              parse_safetensors_prefix(cut, "c.safetensors", false);
            }).find("says 100 bytes but only 2 follow"),
            std::string::npos);
}

TEST(Safetensors, ErrorsNameFileTensorAndExpectation) {
  const auto header_error = [](const std::string& tensor) {
    return test::error_of(
        [&] { parse_safetensors_header("{\"w\": " + tensor + "}", "f.safetensors"); });
  };
  EXPECT_NE(header_error(R"({"dtype": "F12", "shape": [1], "data_offsets": [0, 2]})")
                .find("f.safetensors: tensor 'w': dtype \"F12\" is not a safetensors dtype "
                      "(expected one of BOOL"),
            std::string::npos);
  // I32 [2, 2] = 4 × 4 = 16 bytes, not 15.
  EXPECT_NE(header_error(R"({"dtype": "I32", "shape": [2, 2], "data_offsets": [0, 15]})")
                .find("hold 15 bytes; shape [2,2] of I32 needs 16 bytes"),
            std::string::npos);
  EXPECT_NE(header_error(R"({"dtype": "F16", "shape": [1], "data_offsets": [0, 2], "x": 1})")
                .find("unknown key 'x'"),
            std::string::npos);
  EXPECT_NE(header_error(R"({"dtype": "F16", "shape": [-1], "data_offsets": [0, 2]})")
                .find("every shape entry must be a whole number >= 0, got -1"),
            std::string::npos);
  EXPECT_NE(header_error(R"({"dtype": "F16", "shape": [1], "data_offsets": [4, 2]})")
                .find("end before they begin"),
            std::string::npos);
  EXPECT_NE(header_error(R"({"dtype": "F16", "shape": [1]})").find("lacks the key 'data_offsets'"),
            std::string::npos);
  // F4 packs two elements per byte: 3 elements are 12 bits, not whole bytes.
  EXPECT_NE(header_error(R"({"dtype": "F4", "shape": [3], "data_offsets": [0, 2]})")
                .find("do not fill whole bytes"),
            std::string::npos);
  // Data that starts at 2 leaves a gap of two bytes at the start of the buffer.
  EXPECT_NE(header_error(R"({"dtype": "F16", "shape": [1], "data_offsets": [2, 4]})")
                .find("begin at 2, expected 0 (a gap after"),
            std::string::npos);
  EXPECT_NE(test::error_of([] { parse_safetensors_header("[1]", "f.safetensors"); }).find("'{'"),
            std::string::npos);
  EXPECT_NE(test::error_of([] {
              parse_safetensors_header(R"({"__metadata__": {"format": 1}})", "f.safetensors");
            }).find("'__metadata__' key 'format' must be text, got 1"),
            std::string::npos);
  // Two keys "w" in one object: the JSON parser would silently keep one.
  EXPECT_NE(test::error_of([] {
              parse_safetensors_header(
                  R"({"w": {"dtype": "F16", "shape": [1], "data_offsets": [0, 2]},
                      "w": {"dtype": "F16", "shape": [1], "data_offsets": [2, 4]}})",
                  "f.safetensors");
            }),
            "");
}

TEST(Safetensors, OverlappingTensorsAreRefused) {
  const std::string header = R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
                                  "b": {"dtype": "U8", "shape": [2], "data_offsets": [2, 4]}})";
  EXPECT_NE(test::error_of([&] {
              parse_safetensors_header(header, "o.safetensors");
            }).find("tensor 'b': data_offsets begin at 2, expected 4 (overlapping"),
            std::string::npos);
}

TEST(SafetensorsIndex, ReadsWeightMapAndRefusesPaths) {
  const auto index = parse_safetensors_index(
      R"({"metadata": {"total_size": 28}, "weight_map": {"a": "m-1.safetensors",
          "b": "m-2.safetensors", "c": "m-1.safetensors"}})",
      "model.safetensors.index.json");
  EXPECT_EQ(index.shards, (std::vector<std::string>{"m-1.safetensors", "m-2.safetensors"}));
  EXPECT_EQ(index.total_size, 28u);
  EXPECT_NE(test::error_of([] {
              parse_safetensors_index(R"({"weight_map": {"a": "../etc/passwd.safetensors"}})",
                                      "i.json");
            }).find("i.json: 'weight_map' entry 'a' must name a shard file"),
            std::string::npos);
  EXPECT_NE(test::error_of([] {
              parse_safetensors_index(R"({"metadata": {}})", "i.json");
            }).find("required key 'weight_map'"),
            std::string::npos);
  EXPECT_NE(test::error_of([] {
              parse_safetensors_index(R"({"weight_map": {}, "x": 1})", "i.json");
            }).find("unknown key 'x'"),
            std::string::npos);
}

TEST(Checkpoint, ShardsMustAgreeWithTheIndex) {
  SafetensorsBuilder one, two;
  one.add("a", "F32", "[2]", 8);
  two.add("b", "F32", "[1]", 4);
  std::vector<ShardHeader> shards = {
      {"m-1.safetensors", parse_safetensors_header(one.header(), "m-1.safetensors")},
      {"m-2.safetensors", parse_safetensors_header(two.header(), "m-2.safetensors")}};
  auto index = parse_safetensors_index(
      R"({"weight_map": {"a": "m-1.safetensors", "b": "m-2.safetensors"}})", "idx.json");
  // a: 8 bytes, b: 4 bytes: 12 bytes of F32, 3 elements.
  const auto inv = build_checkpoint_inventory(shards, &index, "idx.json");
  EXPECT_EQ(inv.stored_bytes, 12u);
  EXPECT_EQ(inv.params, 3);
  EXPECT_EQ(inv.dtypes.at("F32").tensors, 2);
  index.weight_map["b"] = "m-1.safetensors";
  EXPECT_NE(test::error_of([&] { build_checkpoint_inventory(shards, &index, "idx.json"); })
                .find("idx.json: tensor 'b' is in m-2.safetensors but the index puts it in "
                      "m-1.safetensors"),
            std::string::npos);
  index.weight_map["b"] = "m-2.safetensors";
  index.weight_map["c"] = "m-2.safetensors";
  EXPECT_NE(test::error_of([&] {
              build_checkpoint_inventory(shards, &index, "idx.json");
            }).find("lists tensor 'c' in m-2.safetensors, whose header has no such tensor"),
            std::string::npos);
  shards[1] = shards[0];
  shards[1].file = "m-2.safetensors";
  EXPECT_NE(test::error_of([&] {
              build_checkpoint_inventory(shards, nullptr, "");
            }).find("m-2.safetensors: tensor 'a' is stored again (already in m-1.safetensors)"),
            std::string::npos);
}

TEST(Checkpoint, RecognisesQuantizedStorage) {
  SafetensorsBuilder b;
  // GPTQ, 4 bits, in 256, out 64, groups of 128 (2 groups):
  //   qweight I32 [256·4/32 = 32, 64] = 2048 × 4 = 8192 bytes; qzeros I32 [2, 64·4/32 = 8] = 64;
  //   scales F16 [2, 64] = 256; g_idx I32 [256] = 1024. Logical [64, 256] = 16384 elements,
  //   stored 8192 + 64 + 256 + 1024 = 9536 bytes.
  const std::string g = "model.layers.0.mlp.down_proj.";
  b.add(g + "qweight", "I32", "[32, 64]", 8192)
      .add(g + "qzeros", "I32", "[2, 8]", 64)
      .add(g + "scales", "F16", "[2, 64]", 256)
      .add(g + "g_idx", "I32", "[256]", 1024);
  // AWQ, 4 bits, in 128, out 64, one group: qweight I32 [128, 64·4/32 = 8] = 4096 bytes,
  //   qzeros I32 [1, 8] = 32, scales F16 [1, 64] = 128. Logical [64, 128] = 8192, stored 4256.
  const std::string a = "model.layers.0.mlp.up_proj.";
  b.add(a + "qweight", "I32", "[128, 8]", 4096)
      .add(a + "qzeros", "I32", "[1, 8]", 32)
      .add(a + "scales", "F16", "[1, 64]", 128);
  // bitsandbytes NF4: 32 packed bytes hold 64 codes; absmax F32 [1] = 4, quant_map F32 [16] = 64,
  //   quant_state U8 [10] = 10: stored 32 + 4 + 64 + 10 = 110 bytes.
  const std::string n = "model.layers.0.self_attn.q_proj.weight";
  b.add(n, "U8", "[32, 1]", 32)
      .add(n + ".absmax", "F32", "[1]", 4)
      .add(n + ".quant_map", "F32", "[16]", 64)
      .add(n + ".quant_state.bitsandbytes__nf4", "U8", "[10]", 10);
  // FP8: F8_E4M3 [8, 16] = 128 bytes, weight_scale F32 [] = 4: stored 132, 128 elements.
  const std::string f = "model.layers.0.self_attn.k_proj.";
  b.add(f + "weight", "F8_E4M3", "[8, 16]", 128).add(f + "weight_scale", "F32", "[]", 4);
  // bitsandbytes int8: I8 [4, 8] = 32 bytes, SCB F32 [4] = 16: stored 48, 32 elements.
  const std::string i8 = "model.layers.0.self_attn.v_proj.";
  b.add(i8 + "weight", "I8", "[4, 8]", 32).add(i8 + "SCB", "F32", "[4]", 16);
  // A plain BF16 norm [8] = 16 bytes.
  b.add("model.norm.weight", "BF16", "[8]", 16);

  const auto header = parse_safetensors_header(b.header(), "q.safetensors");
  const auto inv = build_checkpoint_inventory({{"q.safetensors", header}}, nullptr, "");
  // Stored: 9536 + 4256 + 110 + 132 + 48 + 16 = 14098 bytes.
  EXPECT_EQ(inv.stored_bytes, 14098u);
  ASSERT_EQ(inv.logical.size(), 6u);
  const auto find = [&](const std::string& name) -> const LogicalTensor& {
    for (const auto& l : inv.logical)
      if (l.name == name) return l;
    throw std::runtime_error("missing " + name);
  };
  const auto& gptq = find(g + "weight");
  EXPECT_EQ(gptq.quantization, "gptq");
  EXPECT_EQ(gptq.bits, 4);
  EXPECT_EQ(gptq.shape, (std::vector<std::int64_t>{64, 256}));
  EXPECT_EQ(gptq.stored_bytes, 9536u);
  const auto& awq = find(a + "weight");
  EXPECT_EQ(awq.quantization, "awq");
  EXPECT_EQ(awq.shape, (std::vector<std::int64_t>{64, 128}));
  EXPECT_EQ(awq.stored_bytes, 4256u);
  const auto& nf4 = find(n);
  EXPECT_EQ(nf4.quantization, "bnb-nf4");
  EXPECT_EQ(nf4.numel, 64);
  EXPECT_TRUE(nf4.shape.empty());
  EXPECT_EQ(nf4.stored_bytes, 110u);
  EXPECT_EQ(find(f + "weight").stored_bytes, 132u);
  EXPECT_EQ(find(f + "weight").quantization, "fp8");
  EXPECT_EQ(find(i8 + "weight").quantization, "bnb-int8");
  // Logical elements: 16384 + 8192 + 64 + 128 + 32 + 8 = 24808.
  EXPECT_EQ(inv.params, 24808);
  ASSERT_EQ(inv.quantization.size(), 5u);  // awq, bnb-int8, bnb-nf4, fp8, gptq (sorted)
  EXPECT_EQ(inv.quantization[0].scheme, "awq");
  EXPECT_EQ(inv.quantization[4].scheme, "gptq");
  EXPECT_EQ(inv.quantization[4].params, 16384);
}

TEST(Checkpoint, PackedWeightsThatDoNotFitAreCountedAsStored) {
  // qweight I32 [3, 5] with scales [1, 7]: 5 ≠ 7 and 32·5/7 is no whole number of bits.
  SafetensorsBuilder b;
  b.add("x.qweight", "I32", "[3, 5]", 60).add("x.scales", "F16", "[1, 7]", 14);
  const auto inv = build_checkpoint_inventory(
      {{"w.safetensors", parse_safetensors_header(b.header(), "w.safetensors")}}, nullptr, "");
  EXPECT_EQ(inv.logical.size(), 2u);
  EXPECT_TRUE(inv.quantization.empty());
  ASSERT_EQ(inv.notes.size(), 1u);
  EXPECT_NE(inv.notes[0].find("'x.qweight': packed weight not recognised"), std::string::npos);
}

TEST(Checkpoint, TensorPatterns) {
  EXPECT_EQ(tensor_pattern("model.layers.12.mlp.experts.3.up_proj.weight"),
            "model.layers.{L}.mlp.experts.{E}.up_proj.weight");
  EXPECT_EQ(tensor_pattern("model.norm.weight"), "model.norm.weight");
}

// A tiny Llama: hidden 8, 2 layers, 2 heads of head_dim 4, 1 key/value head, intermediate 16,
// vocabulary 10. Per layer: q [8, 8] = 64, k [4, 8] = 32, v [4, 8] = 32, o [8, 8] = 64,
// gate and up [16, 8] = 128 each, down [8, 16] = 128, two norms [8] = 16: 592 per layer.
// Total: embedding 80 + 2 × 592 + final norm 8 + lm_head 80 = 1352.
constexpr const char* kTinyLlama = R"({"model_type": "llama", "hidden_size": 8,
  "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
  "intermediate_size": 16, "vocab_size": 10})";

// The tiny Llama in BF16 (2 bytes per element), with three differences: no lm_head, an extra
// rotary inv_freq [2], and layer 1's k_proj stored as [8, 8].
SafetensorsBuilder tiny_llama_checkpoint() {
  SafetensorsBuilder b;
  b.add("model.embed_tokens.weight", "BF16", "[10, 8]", 160);
  for (int layer = 0; layer < 2; ++layer) {
    const std::string p = "model.layers." + std::to_string(layer) + ".";
    b.add(p + "self_attn.q_proj.weight", "BF16", "[8, 8]", 128);
    if (layer == 1)
      b.add(p + "self_attn.k_proj.weight", "BF16", "[8, 8]", 128);
    else
      b.add(p + "self_attn.k_proj.weight", "BF16", "[4, 8]", 64);
    b.add(p + "self_attn.v_proj.weight", "BF16", "[4, 8]", 64)
        .add(p + "self_attn.o_proj.weight", "BF16", "[8, 8]", 128)
        .add(p + "mlp.gate_proj.weight", "BF16", "[16, 8]", 256)
        .add(p + "mlp.up_proj.weight", "BF16", "[16, 8]", 256)
        .add(p + "mlp.down_proj.weight", "BF16", "[8, 16]", 256)
        .add(p + "input_layernorm.weight", "BF16", "[8]", 16)
        .add(p + "post_attention_layernorm.weight", "BF16", "[8]", 16);
  }
  b.add("model.norm.weight", "BF16", "[8]", 16).add("model.rotary.inv_freq", "F32", "[2]", 8);
  return b;
}

TEST(Checkpoint, CrossCheckListsEachSidesMissingTensorsAndShapes) {
  const auto arch = read_hf_config(kTinyLlama, "config.json", "tiny");
  const auto config = build_param_inventory(arch);
  ASSERT_EQ(config.total, 1352);
  const auto b = tiny_llama_checkpoint();
  const auto inv = build_checkpoint_inventory(
      {{"model.safetensors", parse_safetensors_header(b.header(), "model.safetensors")}}, nullptr,
      "");
  const auto check = cross_check(inv, config);
  EXPECT_EQ(check.only_in_config, (std::vector<std::string>{"lm_head.weight"}));
  EXPECT_EQ(check.only_in_checkpoint, (std::vector<std::string>{"model.rotary.inv_freq"}));
  ASSERT_EQ(check.shape_differences.size(), 1u);
  EXPECT_EQ(check.shape_differences[0].pattern, "model.layers.{L}.self_attn.k_proj.weight");
  EXPECT_EQ(check.shape_differences[0].config, "[4, 8] × 2");
  EXPECT_EQ(check.shape_differences[0].checkpoint, "[4, 8] or [8, 8] × 2");
  // Config: embedding 1 + 9 per layer × 2 + final norm 1 + lm_head 1 = 21 tensors.
  // Checkpoint: 21 − lm_head + inv_freq = 21.
  EXPECT_EQ(check.config_tensors, 21);
  EXPECT_EQ(check.checkpoint_tensors, 21);
  // Checkpoint elements: 1352 − 80 (lm_head) + 2 (inv_freq) + 32 (the larger k_proj) = 1306.
  EXPECT_EQ(check.config_params, 1352);
  EXPECT_EQ(check.checkpoint_params, 1306);
  EXPECT_FALSE(check.matches());
}

TEST(Checkpoint, UnknownModelTypeIsCountedFromTheHeaders) {
  const auto b = tiny_llama_checkpoint();
  const auto inv = build_checkpoint_inventory(
      {{"model.safetensors", parse_safetensors_header(b.header(), "model.safetensors")}}, nullptr,
      "");
  const std::string config = R"({"model_type": "mystery", "hidden_size": 8,
      "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
      "intermediate_size": 16, "vocab_size": 10})";
  const ModelPtr m = model_from_checkpoint(config, "config.json", "org/mystery", inv);
  EXPECT_EQ(m->params.total, 1306);  // as counted above
  EXPECT_EQ(m->arch.hidden, 8);
  EXPECT_EQ(m->arch.head_dim, 4);  // hidden / heads
  EXPECT_EQ(m->arch.kv_heads, 1);
  EXPECT_NE(m->note.find("model_type 'mystery' is not one ftplan knows"), std::string::npos);
  // Block linear weights: per layer q 64 + v 32 + o 64 + gate, up, down 3 × 128 = 544, and k
  // 32 + 64: 2 × 544 + 96 = 1184.
  EXPECT_EQ(m->params.block_linear, 1184);
  // Its output layer cannot be swapped for a reward model's score head: a clear error.
  try {
    with_score_head(m);
    ADD_FAILURE() << "no error for a reward model of a model counted from its headers";
  } catch (const UserError& e) {
    EXPECT_EQ(e.field(), "method");
    EXPECT_NE(std::string(e.what()).find("a reward model needs an architecture ftplan knows"),
              std::string::npos)
        << e.what();
  }
  // A known architecture takes it: the head [vocab × hidden] leaves, score [1 × hidden] comes.
  ModelArch arch = m->arch;
  arch.model_type = "llama";
  const ModelPtr known = make_model(arch);
  EXPECT_EQ(
      with_score_head(known)->params.total,
      known->params.total - (arch.tied_embeddings ? 0 : arch.vocab * arch.hidden) + arch.hidden);
  EXPECT_NE(test::error_of([&] {
              model_from_checkpoint(R"({"model_type": "mystery", "hidden_size": 8})",
                                    "cfg/config.json", "x", inv);
            })
                .find("cfg/config.json: model_type 'mystery' is not one ftplan knows, so its shape "
                      "is read from generic keys; required key 'num_hidden_layers' is missing"),
            std::string::npos);
}

}  // namespace
}  // namespace ftplan
