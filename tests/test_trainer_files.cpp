// Trainer files as runs (--from): each format's keys become the run settings its documentation
// gives them, the rest is listed as ignored, flags beside --from win, and bad files get errors that
// name the file, key and value. The files in tests/data/trainers are shaped like the examples in
// each project's documentation.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <optional>

#include "core/error.hpp"
#include "plan/runs.hpp"
#include "support.hpp"
#include "workload/trainer_file.hpp"

namespace ftplan {
namespace {

using json = nlohmann::json;

std::string path(const std::string& name) {
  return std::string(FTPLAN_SOURCE_DIR) + "/tests/data/trainers/" + name;
}

std::string text(const std::string& name) {
  std::ifstream in(path(name), std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TrainerFile read(const std::string& name) {
  return read_trainer_file(text(name), name, test::catalog().model_ids());
}

bool ignored(const TrainerFile& f, const std::string& key) {
  for (const auto& k : f.ignored)
    if (k.key == key) return true;
  return false;
}

TEST(TrainerFiles, PeftAdapterConfig) {
  const TrainerFile f = read("adapter_config.json");
  EXPECT_EQ(f.format, TrainerFormat::kPeftAdapter);
  EXPECT_EQ(f.setting("method"), "lora");
  EXPECT_EQ(f.setting("rank"), "64");
  EXPECT_EQ(f.setting("targets"), "q_proj,k_proj,v_proj,o_proj");
  EXPECT_EQ(f.setting("lora_dropout"), "0.05");
  EXPECT_EQ(f.setting("model"), "meta-llama/Llama-3.1-8B");
  // lora_alpha scales the update: no effect on memory or time.
  EXPECT_TRUE(ignored(f, "lora_alpha"));
  EXPECT_TRUE(ignored(f, "task_type"));
  EXPECT_EQ(f.setting("stack"), "");  // an adapter file does not say which trainer ran it
}

TEST(TrainerFiles, AxolotlQlora) {
  const TrainerFile f = read("axolotl-qlora.yml");
  EXPECT_EQ(f.format, TrainerFormat::kAxolotl);
  EXPECT_EQ(f.setting("method"), "qlora");
  EXPECT_EQ(f.setting("base_quant"), "nf4");
  EXPECT_EQ(f.setting("rank"), "32");
  EXPECT_EQ(f.setting("targets"), "all");   // lora_target_linear: true
  EXPECT_EQ(f.setting("seq"), "4096");      // sequence_len
  EXPECT_EQ(f.setting("packing"), "true");  // sample_packing
  EXPECT_EQ(f.setting("micro_batch"), "2");
  EXPECT_EQ(f.setting("grad_accum"), "4");
  EXPECT_EQ(f.setting("optimizer"), "paged-adamw-8bit");
  EXPECT_EQ(f.setting("precision"), "bf16");  // bf16: auto
  EXPECT_EQ(f.setting("recompute"), "full");
  EXPECT_EQ(f.setting("attention"), "flash");
  EXPECT_EQ(f.setting("stack"), "axolotl");
  EXPECT_TRUE(ignored(f, "datasets"));
  EXPECT_TRUE(ignored(f, "learning_rate"));
}

TEST(TrainerFiles, AxolotlActivationOffloadingAndAttnImplementation) {
  const auto read_body = [](const std::string& body) {
    return read_trainer_file("base_model: meta-llama/Llama-3.1-8B\nadapter: lora\n" + body,
                             "axolotl.yml", test::catalog().model_ids());
  };
  // activation_offloading: true checkpoints every decoder layer itself and offloads what it saves.
  const TrainerFile offload =
      read_body("gradient_checkpointing: false\nactivation_offloading: true\n");
  EXPECT_EQ(offload.setting("offload_activations"), "true");
  EXPECT_EQ(offload.setting("recompute"), "full");
  // legacy and disk offload too; the checkpointing is gradient_checkpointing's.
  const TrainerFile disk = read_body("gradient_checkpointing: true\nactivation_offloading: disk\n");
  EXPECT_EQ(disk.setting("offload_activations"), "true");
  EXPECT_EQ(disk.setting("recompute"), "full");
  EXPECT_EQ(read_body("gradient_checkpointing: offload_disk\n").setting("offload_activations"),
            "true");
  // attn_implementation, and it wins over the boolean flags.
  EXPECT_EQ(read_body("attn_implementation: flash_attention_2\n").setting("attention"), "flash");
  EXPECT_EQ(read_body("attn_implementation: flash_attention_3\n").setting("attention"), "flash");
  EXPECT_EQ(read_body("attn_implementation: flash\n").setting("attention"), "flash");
  EXPECT_EQ(read_body("flash_attention: true\nattn_implementation: sdpa\n").setting("attention"),
            "sdpa");
  EXPECT_EQ(read_body("attn_implementation: eager\n").setting("attention"), "eager");
  EXPECT_EQ(read_body("flash_attention: true\n").setting("attention"), "flash");
  const TrainerFile flex = read_body("attn_implementation: flex_attention\n");
  EXPECT_EQ(flex.setting("attention"), "");
  EXPECT_TRUE(ignored(flex, "attn_implementation"));
}

TEST(TrainerFiles, TorchtuneRecipe) {
  const TrainerFile f = read("torchtune-lora.yaml");
  EXPECT_EQ(f.format, TrainerFormat::kTorchtune);
  EXPECT_EQ(f.setting("model"), "llama-3.1-8b");  // the builder lora_llama3_1_8b
  EXPECT_EQ(f.setting("method"), "lora");
  EXPECT_EQ(f.setting("rank"), "8");
  EXPECT_EQ(f.setting("targets"), "q_proj,v_proj,output_proj,gate,up,down");
  EXPECT_EQ(f.setting("micro_batch"), "2");
  EXPECT_EQ(f.setting("grad_accum"), "8");
  EXPECT_EQ(f.setting("pure_bf16"), "true");  // dtype: bf16 keeps no FP32 master copy
  EXPECT_EQ(f.setting("loss"), "chunked");
  EXPECT_EQ(f.setting("recompute"), "full");
  EXPECT_EQ(f.setting("stack"), "torchtune");
  EXPECT_TRUE(ignored(f, "checkpointer"));  // a whole section nobody reads, listed once
  EXPECT_TRUE(ignored(f, "optimizer.lr"));
}

TEST(TrainerFiles, LlamaFactoryQloraAndTheQuantizationBit) {
  const TrainerFile f = read("llamafactory-lora.yaml");
  EXPECT_EQ(f.format, TrainerFormat::kLlamaFactory);
  EXPECT_EQ(f.setting("method"), "qlora");  // lora + quantization_bit 4
  EXPECT_EQ(f.setting("base_quant"), "nf4");
  EXPECT_EQ(f.setting("targets"), "all");
  EXPECT_EQ(f.setting("seq"), "2048");  // cutoff_len
  EXPECT_EQ(f.setting("micro_batch"), "1");
  EXPECT_EQ(f.setting("stack"), "llama-factory");
  EXPECT_TRUE(ignored(f, "template"));
  EXPECT_EQ(f.setting("double_quant"), "");  // not stated: the default, double quantization
  // double_quantization: false keeps one FP32 absmax per block.
  std::string single = text("llamafactory-lora.yaml");
  single.replace(single.find("quantization_method: bnb"), 24,
                 "quantization_method: bnb\ndouble_quantization: false");
  const TrainerFile g =
      read_trainer_file(single, "llamafactory-lora.yaml", test::catalog().model_ids());
  EXPECT_EQ(g.setting("double_quant"), "false");
}

TEST(TrainerFiles, LlamaFactoryDefaultsWhereTheLoraFileIsSilent) {
  // LoraArguments: lora_rank 8, lora_target all, lora_dropout 0.
  const TrainerFile f = read_trainer_file(
      "model_name_or_path: meta-llama/Llama-3.1-8B\nstage: sft\nfinetuning_type: lora\n"
      "cutoff_len: 1024\n",
      "lora.yaml", test::catalog().model_ids());
  EXPECT_EQ(f.setting("method"), "lora");
  EXPECT_EQ(f.setting("rank"), "8");
  EXPECT_EQ(f.setting("targets"), "all");
  EXPECT_EQ(f.setting("lora_dropout"), "0");
  // A full fine-tune takes none of them.
  const TrainerFile full = read_trainer_file(
      "model_name_or_path: meta-llama/Llama-3.1-8B\nfinetuning_type: full\ncutoff_len: 1024\n",
      "full.yaml", test::catalog().model_ids());
  EXPECT_EQ(full.setting("rank"), "");
  EXPECT_EQ(full.setting("targets"), "");
}

TEST(TrainerFiles, LlamaFactoryGradientCheckpointingAndFlashAttn) {
  const auto read_body = [](const std::string& body) {
    return read_trainer_file("model_name_or_path: x\nfinetuning_type: lora\n" + body, "train.yaml",
                             test::catalog().model_ids());
  };
  EXPECT_EQ(read_body("gradient_checkpointing: true\n").setting("recompute"), "full");
  EXPECT_EQ(read_body("disable_gradient_checkpointing: true\n").setting("recompute"), "none");
  // The Trainer turns checkpointing on again after LLaMA-Factory left it off: true wins.
  EXPECT_EQ(read_body("disable_gradient_checkpointing: true\ngradient_checkpointing: true\n")
                .setting("recompute"),
            "full");
  // false alone leaves LLaMA-Factory's own checkpointing on: said, not taken.
  const TrainerFile off = read_body("gradient_checkpointing: false\n");
  EXPECT_EQ(off.setting("recompute"), "");
  EXPECT_TRUE(ignored(off, "gradient_checkpointing"));
  EXPECT_EQ(read_body("disable_gradient_checkpointing: true\ngradient_checkpointing: false\n")
                .setting("recompute"),
            "none");
  EXPECT_EQ(read_body("flash_attn: fa2\n").setting("attention"), "flash");
  EXPECT_EQ(read_body("flash_attn: sdpa\n").setting("attention"), "sdpa");
  EXPECT_EQ(read_body("flash_attn: disabled\n").setting("attention"), "eager");
  EXPECT_EQ(read_body("flash_attn: off\n").setting("attention"), "eager");  // before "disabled"
  const TrainerFile any = read_body("flash_attn: auto\n");
  EXPECT_EQ(any.setting("attention"), "");  // the stack's default
  EXPECT_TRUE(ignored(any, "flash_attn"));
}

TEST(TrainerFiles, LitgptQloraConfig) {
  // The example LitGPT config: QLoRA of Llama 3.1 8B on one card (config hub settings).
  const std::string example =
      std::string(FTPLAN_SOURCE_DIR) + "/examples/trainers/litgpt_qlora.yaml";
  std::ifstream in(example, std::ios::binary);
  const std::string body{std::istreambuf_iterator<char>(in), {}};
  const TrainerFile f = read_trainer_file(body, example, test::catalog().model_ids());
  EXPECT_EQ(f.format, TrainerFormat::kLitgpt);
  // checkpoints/meta-llama/Meta-Llama-3.1-8B: the catalog model of that repository's name.
  EXPECT_EQ(f.setting("model"), "llama-3.1-8b");
  EXPECT_EQ(f.setting("method"), "qlora");
  EXPECT_EQ(f.setting("base_quant"), "nf4");
  EXPECT_EQ(f.setting("double_quant"), "false");  // bnb.nf4: one level of absmax values
  EXPECT_EQ(f.setting("rank"), "32");
  EXPECT_EQ(f.setting("targets"), "q,v");
  EXPECT_EQ(f.setting("lora_dropout"), "0.05");
  EXPECT_EQ(f.setting("micro_batch"), "2");
  EXPECT_EQ(f.setting("grad_accum"), "4");  // global 8 / 1 card / micro 2
  EXPECT_EQ(f.setting("seq"), "512");
  EXPECT_EQ(f.setting("precision"), "bf16");
  EXPECT_EQ(f.setting("pure_bf16"), "true");         // bf16-true
  EXPECT_EQ(f.setting("optimizer"), "paged-adamw");  // bitsandbytes' PagedAdamW under bnb.*
  EXPECT_EQ(f.setting("recompute"), "none");         // one card: no checkpointing
  EXPECT_EQ(f.setting("stack"), "litgpt");
  EXPECT_TRUE(ignored(f, "lora_alpha"));
  EXPECT_TRUE(ignored(f, "data"));
}

TEST(TrainerFiles, LitgptFullFineTuneOverSeveralCardsIsFsdpWithCheckpointing) {
  const TrainerFile f = read("litgpt-full.yaml");
  EXPECT_EQ(f.format, TrainerFormat::kLitgpt);
  EXPECT_EQ(f.setting("model"), "mistral-7b-v0.3");
  EXPECT_EQ(f.setting("method"), "full");  // no lora_* keys: finetune_full
  EXPECT_EQ(f.setting("base_quant"), "");
  EXPECT_EQ(f.setting("gpu_count"), "4");
  EXPECT_EQ(f.setting("shard"), "fsdp");
  EXPECT_EQ(f.setting("recompute"), "full");  // FSDPStrategy checkpoints every Block
  EXPECT_EQ(f.setting("micro_batch"), "1");
  EXPECT_EQ(f.setting("grad_accum"), "16");  // global 64 / 4 cards / micro 1
  EXPECT_EQ(f.setting("seq"), "1024");
  EXPECT_EQ(f.setting("optimizer"), "adamw");  // a torch.optim class by name
  EXPECT_TRUE(ignored(f, "resume"));
}

TEST(TrainerFiles, LitgptNamesTheQuantizationAndFallsBackToTheRepository) {
  const auto lora = [](const std::string& extra) {
    return "checkpoint_dir: checkpoints/EleutherAI/pythia-1b\nprecision: bf16-true\nlora_r: 8\n" +
           extra;
  };
  const auto read_text = [](const std::string& body) {
    return read_trainer_file(body, "lora.yaml", test::catalog().model_ids());
  };
  // A repository the catalog does not hold stays a Hugging Face id.
  const TrainerFile plain = read_text(lora(""));
  EXPECT_EQ(plain.setting("model"), "EleutherAI/pythia-1b");
  EXPECT_EQ(plain.setting("method"), "lora");
  EXPECT_EQ(plain.setting("targets"), "q,v");  // LitGPT's defaults: query and value
  EXPECT_EQ(read_text("checkpoint_dir: checkpoints/EleutherAI/pythia-1b\nlora_query: true\n")
                .setting("rank"),
            "8");                                    // finetune_lora's default rank
  EXPECT_EQ(plain.setting("lora_dropout"), "0.05");  // and dropout
  EXPECT_EQ(plain.setting("optimizer"), "");         // no optimizer key: the run's default
  // -dq: double quantization; int8-training: an LLM.int8() base.
  EXPECT_EQ(read_text(lora("quantize: bnb.nf4-dq\n")).setting("double_quant"), "true");
  const TrainerFile int8 = read_text(lora("quantize: bnb.int8-training\n"));
  EXPECT_EQ(int8.setting("base_quant"), "int8");
  EXPECT_EQ(int8.setting("optimizer"), "paged-adamw");
  const auto error = [&](const std::string& body) -> std::string {
    try {
      read_text(body);
    } catch (const UserError& e) {
      return e.what();
    }
    return "";
  };
  const std::string quant = error(lora("quantize: bnb.int4\n"));
  EXPECT_NE(quant.find("'quantize'"), std::string::npos) << quant;
  EXPECT_NE(quant.find("bnb.int4"), std::string::npos) << quant;
  EXPECT_NE(quant.find("bnb.nf4-dq"), std::string::npos) << quant;  // the choices
  const std::string sgd = error(lora("quantize: bnb.nf4\noptimizer: SGD\n"));
  EXPECT_NE(sgd.find("AdamW"), std::string::npos) << sgd;
  EXPECT_NE(sgd.find("SGD"), std::string::npos) << sgd;
  const std::string batch =
      error(lora("devices: 2\ntrain:\n  micro_batch_size: 4\n  global_batch_size: 4\n"));
  EXPECT_NE(batch.find("train.global_batch_size"), std::string::npos) << batch;
  // A global batch without the micro-batch: no accumulation guessed from a default.
  const TrainerFile global_only = read_text(lora("train:\n  global_batch_size: 64\n"));
  EXPECT_EQ(global_only.setting("grad_accum"), "");
  EXPECT_TRUE(ignored(global_only, "train.global_batch_size"));
}

TEST(TrainerFiles, ARunsFileTakesLitgptsSingleLevelQuantization) {
  const std::string runs = R"(
runs:
  - name: litgpt
    model: llama-3.1-8b
    from: litgpt_qlora.yaml
    tokens: 1e9
)";
  const FileReader reader = [](const std::string&, const std::string&) {
    std::ifstream in(std::string(FTPLAN_SOURCE_DIR) + "/examples/trainers/litgpt_qlora.yaml",
                     std::ios::binary);
    return std::string{std::istreambuf_iterator<char>(in), {}};
  };
  const ModelResolver resolve = [](const std::string& id) { return test::catalog().model(id); };
  const RunsFile f =
      parse_runs_file(runs, "runs.yaml", test::catalog(), test::stacks(), resolve, reader);
  ASSERT_EQ(f.runs.size(), 1u);
  const Workload& w = f.runs[0].workload;
  EXPECT_EQ(w.method, Method::kQlora);
  EXPECT_FALSE(w.quant.double_quant);
  EXPECT_EQ(w.stack->name, "litgpt");
  EXPECT_EQ(w.micro_batch, 2);
}

TEST(TrainerFiles, TrlSftConfig) {
  const TrainerFile f = read("sft_config.json");
  EXPECT_EQ(f.format, TrainerFormat::kHfTrainer);
  EXPECT_EQ(f.setting("micro_batch"), "4");
  EXPECT_EQ(f.setting("grad_accum"), "4");
  EXPECT_EQ(f.setting("seq"), "4096");  // max_length
  EXPECT_EQ(f.setting("optimizer"), "adamw");
  EXPECT_EQ(f.setting("padding_free"), "true");
  EXPECT_EQ(f.setting("attention"), "flash");
  EXPECT_EQ(f.setting("method"), "");  // training arguments do not say LoRA or full
}

TEST(TrainerFiles, TransformersTorchaoOptimizersAndAttnImplementation) {
  const auto read_body = [](const std::string& body) {
    return read_trainer_file("per_device_train_batch_size: 2\n" + body, "args.yaml",
                             test::catalog().model_ids());
  };
  // torchao's AdamW8bit keeps m and v as blockwise 8-bit codes.
  EXPECT_EQ(read_body("optim: adamw_torch_8bit\n").setting("optimizer"), "adamw-8bit");
  // ftplan has no 4-bit AdamW: listed, naming the command that lists the optimizers.
  const TrainerFile four = read_body("optim: adamw_torch_4bit\n");
  EXPECT_EQ(four.setting("optimizer"), "");
  bool named = false;
  for (const auto& k : four.ignored)
    if (k.key == "optim") {
      named = true;
      EXPECT_NE(k.why.find("ftplan fit --help"), std::string::npos) << k.why;
      EXPECT_EQ(k.why.find("ftplan optimizers"), std::string::npos) << k.why;
    }
  EXPECT_TRUE(named);
  EXPECT_EQ(read_body("attn_implementation: eager\n").setting("attention"), "eager");
  EXPECT_EQ(read_body("model_init_kwargs:\n  attn_implementation: sdpa\n").setting("attention"),
            "sdpa");
  // The model's dtype (TRL's ModelConfig torch_dtype, renamed dtype; model_init_kwargs): BF16 is
  // setting model_dtype, which the command resolves with the run's sharding; FP32 and 'auto' are
  // listed as not modelled; anything else names the key.
  EXPECT_EQ(read_body("torch_dtype: bfloat16\n").setting("model_dtype"), "bf16");
  EXPECT_EQ(read_body("dtype: torch.bfloat16\n").setting("model_dtype"), "bf16");
  EXPECT_EQ(read_body("model_init_kwargs:\n  torch_dtype: bfloat16\n").setting("model_dtype"),
            "bf16");
  for (const char* other : {"float32", "auto", "float16"}) {
    const TrainerFile f = read_body(std::string("torch_dtype: ") + other + "\n");
    EXPECT_EQ(f.setting("model_dtype"), "") << other;
    EXPECT_TRUE(std::any_of(f.ignored.begin(), f.ignored.end(), [](const IgnoredKey& k) {
      return k.key == "torch_dtype";
    })) << other;
  }
  try {
    read_body("torch_dtype: int4\n");
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("key 'torch_dtype': bfloat16, float16, float32 or auto, "
                                         "got 'int4'"),
              std::string::npos)
        << e.what();
  }
  // What a BF16 model trains in: its own BF16 weights and states, but FP32 copies under
  // DeepSpeed's optimizer, and under FSDP when Accelerate prepares it in mixed precision.
  EXPECT_EQ(fp32_copies_of_bf16_weights("", "", true), "");
  EXPECT_EQ(fp32_copies_of_bf16_weights("hf", "ddp", true), "");
  EXPECT_EQ(fp32_copies_of_bf16_weights("hf", "fsdp", false), "");
  EXPECT_NE(fp32_copies_of_bf16_weights("hf", "fsdp", true).find("Accelerate casts"),
            std::string::npos);
  EXPECT_NE(fp32_copies_of_bf16_weights("deepspeed", "zero2", false).find("DeepSpeed"),
            std::string::npos);
  EXPECT_NE(fp32_copies_of_bf16_weights("", "zero3", false).find("DeepSpeed"), std::string::npos);
  EXPECT_TRUE(sets_mixed_precision({"bf16", "true", "precision", "bf16"}));
  EXPECT_TRUE(sets_mixed_precision({"deepspeed.bf16.enabled", "true", "precision", "bf16"}));
  EXPECT_TRUE(sets_mixed_precision({"mixed_precision", "bf16", "precision", "bf16"}));
  EXPECT_FALSE(sets_mixed_precision({"dtype", "bf16", "precision", "bf16"}));  // torchtune's
  // Accelerate's sync_each_batch, through the Trainer's accelerator_config.
  EXPECT_EQ(read_body("accelerator_config:\n  gradient_accumulation_kwargs:\n    sync_each_batch: "
                      "true\n")
                .setting("sync_each_batch"),
            "true");
  EXPECT_EQ(read_body("gradient_accumulation_steps: 4\n").setting("sync_each_batch"), "");
  // Non-reentrant checkpoints: the kwargs, or FSDP's own checkpoint wrapper.
  EXPECT_EQ(read_body("gradient_checkpointing: true\ngradient_checkpointing_kwargs:\n  "
                      "use_reentrant: false\n")
                .setting("non_reentrant"),
            "true");
  EXPECT_EQ(read_body("gradient_checkpointing: true\ngradient_checkpointing_kwargs:\n  "
                      "use_reentrant: true\n")
                .setting("non_reentrant"),
            "");
  EXPECT_EQ(
      read_body("fsdp: full_shard auto_wrap\nfsdp_config:\n  activation_checkpointing: true\n")
          .setting("non_reentrant"),
      "true");
}

TEST(TrainerFiles, TrlGrpoConfig) {
  // TRL's GRPOConfig: a group per prompt, prompt and completion lengths, the KL coefficient, the
  // passes over each batch and vLLM colocated (its share of the card, asleep while training).
  const TrainerFile f = read("trl-grpo.yaml");
  EXPECT_EQ(f.format, TrainerFormat::kHfTrainer);
  EXPECT_EQ(f.setting("method"), "grpo");
  EXPECT_EQ(f.setting("adapter"), "lora");
  EXPECT_EQ(f.setting("group_size"), "8");
  EXPECT_EQ(f.setting("prompt_len"), "512");
  EXPECT_EQ(f.setting("completion_len"), "1024");
  EXPECT_EQ(f.setting("kl"), "0.04");
  EXPECT_EQ(f.setting("rl_epochs"), "2");
  // 4 accumulation steps, 2 per generation: two rollout batches per optimizer step.
  EXPECT_EQ(f.setting("generation_rounds"), "2");
  EXPECT_EQ(f.setting("rollout"), "colocated");
  EXPECT_EQ(f.setting("engine_memory"), "0.3");
  EXPECT_EQ(f.setting("sleep"), "true");
  EXPECT_EQ(f.setting("micro_batch"), "8");
  EXPECT_EQ(f.setting("seq"), "");  // an online run's sequence is prompt + completion
  EXPECT_TRUE(ignored(f, "temperature"));
}

TEST(TrainerFiles, AxolotlGrpoWithItsVllmServer) {
  // axolotl's GRPO: `rl: grpo`, the trl section, and the vLLM server started from the same file
  // on cards of its own (tensor_parallel_size of them): a separate rollout.
  const TrainerFile f = read("axolotl-grpo.yml");
  EXPECT_EQ(f.format, TrainerFormat::kAxolotl);
  EXPECT_EQ(f.setting("method"), "grpo");
  EXPECT_EQ(f.setting("adapter"), "lora");
  EXPECT_EQ(f.setting("group_size"), "16");
  EXPECT_EQ(f.setting("completion_len"), "512");
  EXPECT_EQ(f.setting("kl"), "0.001");
  EXPECT_EQ(f.setting("rollout"), "separate");
  EXPECT_EQ(f.setting("rollout_gpus"), "2");
  EXPECT_EQ(f.setting("rollout_tp"), "2");  // one engine over both
  EXPECT_EQ(f.setting("micro_batch"), "16");
  EXPECT_EQ(f.setting("seq"), "");
  EXPECT_TRUE(ignored(f, "sequence_len"));
  EXPECT_TRUE(ignored(f, "trl.reward_funcs"));
  // A vllm_mode other than server or colocate names the key and the value.
  std::string bad = text("trl-grpo.yaml");
  bad.replace(bad.find("vllm_mode: colocate"), 19, "vllm_mode: remote");
  try {
    read_trainer_file(bad, "trl-grpo.yaml", test::catalog().model_ids());
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("vllm_mode"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("remote"), std::string::npos) << e.what();
  }
}

TEST(TrainerFiles, FromGivesTheSameGrpoRunAsTheFlags) {
  const auto scale = [](std::vector<std::string> args) {
    args.insert(args.begin(), "scale");
    args.insert(args.end(), {"--gpu", "h100-sxm", "--gpus", "2", "--json"});
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return r.code == 0 ? json::parse(r.out) : json();
  };
  const json from = scale({"--from", path("trl-grpo.yaml")});
  const json flags = scale({"--model",
                            "qwen2.5-7b",
                            "--method",
                            "grpo",
                            "--adapter",
                            "lora",
                            "--rank",
                            "16",
                            "--targets",
                            "all",
                            "--micro-batch",
                            "8",
                            "--grad-accum",
                            "4",
                            "--recompute",
                            "full",
                            "--precision",
                            "bf16",
                            "--stack",
                            "hf",
                            "--group-size",
                            "8",
                            "--prompt-len",
                            "512",
                            "--completion-len",
                            "1024",
                            "--kl",
                            "0.04",
                            "--rl-epochs",
                            "2",
                            "--rollout",
                            "colocated",
                            "--engine-memory",
                            "0.3",
                            "--sleep",
                            "--generation-rounds",
                            "2"});
  ASSERT_TRUE(from.contains("rl")) << from.dump();
  EXPECT_EQ(from["memory_GB"], flags["memory_GB"]);
  EXPECT_EQ(from["rl"], flags["rl"]);
  EXPECT_EQ(from["step_seconds"], flags["step_seconds"]);
}

TEST(TrainerFiles, DeepSpeedZero3WithAutoValues) {
  const TrainerFile f = read("ds_config_zero3.json");
  EXPECT_EQ(f.format, TrainerFormat::kDeepSpeed);
  EXPECT_EQ(f.setting("shard"), "fsdp");  // stage 3 shards the parameters too
  EXPECT_EQ(f.setting("offload_optimizer"), "true");
  EXPECT_EQ(f.setting("offload_params"), "false");
  EXPECT_EQ(f.setting("stack"), "deepspeed");
  EXPECT_EQ(f.setting("micro_batch"), "");  // "auto": the trainer fills it in
  EXPECT_TRUE(ignored(f, "train_micro_batch_size_per_gpu"));
  EXPECT_TRUE(ignored(f, "zero_optimization.reduce_bucket_size"));
}

TEST(TrainerFiles, DeepSpeedLegacyCpuOffloadKeys) {
  // DeepSpeed's deprecated booleans: cpu_offload is offload_optimizer on the CPU, cpu_offload_param
  // offload_param.
  const TrainerFile f =
      read_trainer_file(R"({"zero_optimization": {"stage": 2, "cpu_offload": true}})", "ds.json",
                        test::catalog().model_ids());
  EXPECT_EQ(f.setting("shard"), "zero2");
  EXPECT_EQ(f.setting("offload_optimizer"), "true");
  EXPECT_FALSE(ignored(f, "zero_optimization.cpu_offload"));
  const TrainerFile g = read_trainer_file(
      R"({"zero_optimization": {"stage": 3, "cpu_offload": false, "cpu_offload_param": true}})",
      "ds.json", test::catalog().model_ids());
  EXPECT_EQ(g.setting("offload_optimizer"), "false");
  EXPECT_EQ(g.setting("offload_params"), "true");
}

TEST(TrainerFiles, AccelerateFsdp) {
  const TrainerFile f = read("accelerate_fsdp.yaml");
  EXPECT_EQ(f.format, TrainerFormat::kAccelerate);
  EXPECT_EQ(f.setting("shard"), "fsdp");
  EXPECT_EQ(f.setting("gpu_count"), "4");
  EXPECT_EQ(f.setting("precision"), "bf16");
  EXPECT_EQ(f.setting("recompute"), "full");
}

TEST(TrainerFiles, AccelerateHybridShardOverTwoMachines) {
  // HYBRID_SHARD shards within a machine and replicates across: 16 processes on 2 machines are
  // groups of 8; the run is hybrid sharding on 16 cards.
  std::string body = text("accelerate_fsdp.yaml");
  const auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = body.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    body.replace(at, from.size(), to);
  };
  replace("fsdp_sharding_strategy: FULL_SHARD", "fsdp_sharding_strategy: HYBRID_SHARD");
  replace("num_machines: 1", "num_machines: 2");
  replace("num_processes: 4", "num_processes: 16");
  const TrainerFile f = read_trainer_file(body, "fsdp.yaml", test::catalog().model_ids());
  EXPECT_EQ(f.setting("shard"), "hsdp");
  EXPECT_EQ(f.setting("gpu_count"), "16");
  EXPECT_EQ(f.setting("shard_group"), "8");
}

TEST(TrainerFiles, BadFilesNameTheFileKeyAndValue) {
  const auto error = [](const std::string& body) -> std::string {
    try {
      read_trainer_file(body, "train.yaml", test::catalog().model_ids());
    } catch (const UserError& e) {
      return e.what();
    }
    return "";
  };
  const std::string optim = error("per_device_train_batch_size: 2\noptim: adamw_turbo\n");
  EXPECT_NE(optim.find("train.yaml"), std::string::npos) << optim;
  EXPECT_NE(optim.find("'optim'"), std::string::npos) << optim;
  EXPECT_NE(optim.find("adamw_turbo"), std::string::npos) << optim;
  const std::string peft = error(R"({"peft_type": "IA3", "r": 8})");
  EXPECT_NE(peft.find("peft_type"), std::string::npos) << peft;
  EXPECT_NE(peft.find("IA3"), std::string::npos) << peft;
  const std::string batch = error("base_model: x\nmicro_batch_size: -3\n");
  EXPECT_NE(batch.find("micro_batch_size"), std::string::npos) << batch;
  EXPECT_NE(batch.find("-3"), std::string::npos) << batch;
  const std::string unknown = error("learning_rate: 0.1\n");
  EXPECT_NE(unknown.find("cannot tell which trainer"), std::string::npos) << unknown;
  EXPECT_NE(error(R"({"peft_type": "LORA", "r": 8, "r": 16})").find("appears twice"),
            std::string::npos);
  EXPECT_NE(error("- a\n- b\n").find("expected a map"), std::string::npos);
}

TEST(TrainerFiles, FromGivesTheSameRunAsTheFlags) {
  const auto fit = [](std::vector<std::string> args) {
    args.insert(args.begin(), "fit");
    args.insert(args.end(), {"--gpu", "h200-nvl", "--json"});
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return json::parse(r.out);
  };
  const json from = fit({"--from", path("torchtune-lora.yaml")});
  const json flags = fit({"--model",       "llama-3.1-8b",
                          "--method",      "lora",
                          "--rank",        "8",
                          "--targets",     "q,v,o,gate,up,down",
                          "--micro-batch", "2",
                          "--grad-accum",  "8",
                          "--pure-bf16",   "--loss",
                          "chunked",       "--stack",
                          "torchtune",     "--recompute",
                          "full",          "--no-compile"});
  EXPECT_EQ(from["memory_GB"], flags["memory_GB"]);
  EXPECT_EQ(from["from"]["format"], "torchtune");
  EXPECT_FALSE(flags.contains("from"));
}

TEST(TrainerFiles, FlagsBesideFromWinAndTheJsonSaysSo) {
  const auto r = test::run_cli({"fit", "--from", path("adapter_config.json"), "--model",
                                "llama-3.1-8b", "--rank", "8", "--gpu", "h200-nvl", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["from"]["file"], path("adapter_config.json"));
  EXPECT_EQ(j["from"]["format"], "peft-adapter");
  bool rank_seen = false;
  for (const auto& u : j["from"]["used"])
    if (u["as"] == "rank") {
      rank_seen = true;
      EXPECT_FALSE(u["applied"].get<bool>());
      EXPECT_NE(u["why"].get<std::string>().find("--rank"), std::string::npos);
    }
  EXPECT_TRUE(rank_seen);
  EXPECT_FALSE(j["from"]["ignored"].empty());
  // The method came from the file (peft_type LORA), the rank from the flag.
  EXPECT_EQ(j["method"], "lora");
  EXPECT_EQ(j["rank"], 8);
}

TEST(TrainerFiles, ALaterFileWinsAndAnOptionTheCommandLacksIsSaid) {
  // accelerate sets 4 processes and FSDP; DeepSpeed ZeRO-3 then sets the sharding again.
  const auto r = test::run_cli({"scale", "--from", path("accelerate_fsdp.yaml"), "--from",
                                path("ds_config_zero3.json"), "--model", "llama-3.1-8b", "--method",
                                "full", "--gpu", "h100-sxm", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["from"]["files"].size(), 2u);
  EXPECT_EQ(j["gpus"], 4);
  EXPECT_EQ(j["shard"], "fsdp");
  int shard_applied = 0;
  for (const auto& u : j["from"]["used"])
    if (u["as"] == "shard" && u["applied"].get<bool>()) {
      ++shard_applied;
      EXPECT_EQ(u["file"], path("ds_config_zero3.json"));
    }
  EXPECT_EQ(shard_applied, 1);
}

TEST(TrainerFiles, WithoutModelOrMethodTheErrorPointsAtFrom) {
  const auto r = test::run_cli(
      {"fit", "--from", path("sft_config.json"), "--model", "llama-3.1-8b", "--gpu", "h200-nvl"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--method is required"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--from"), std::string::npos) << r.err;
}

// Reads a file of tests/data/trainers by its resolved path, as the command line does.
std::optional<std::string> read_resolved(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw UserError(ErrorCode::kBadFile, p + ": no such file (given for from)", "from");
  return std::string{std::istreambuf_iterator<char>(in), {}};
}

const IgnoredKey* ignored_key(const TrainerFile& f, const std::string& key) {
  for (const auto& k : f.ignored)
    if (k.key == key) return &k;
  return nullptr;
}

TEST(TrainerFiles, ADeepSpeedPathIsAReferenceTheCoreDoesNotRead) {
  // The core reads no file: the key is a reference, and ignored with a why until followed.
  for (const char* name :
       {"training_args_deepspeed.json", "axolotl-deepspeed.yml", "llamafactory-deepspeed.yaml"}) {
    const TrainerFile f = read(name);
    ASSERT_EQ(f.references.size(), 1u) << name;
    EXPECT_EQ(f.references[0].key, "deepspeed") << name;
    const IgnoredKey* k = ignored_key(f, "deepspeed");
    ASSERT_NE(k, nullptr) << name;
    EXPECT_NE(k->why.find("API"), std::string::npos) << k->why;
    EXPECT_EQ(f.setting("shard"), "") << name;
  }
  EXPECT_EQ(read("training_args_deepspeed.json").references[0].path, "ds/zero2_offload.json");
  // Resolved beside the file that names it; an absolute path stays.
  EXPECT_EQ(resolve_reference("a/b/train.yaml", "ds/z.json"), "a/b/ds/z.json");
  EXPECT_EQ(resolve_reference("train.yaml", "z.json"), "z.json");
  EXPECT_EQ(resolve_reference("a/train.yaml", "/etc/z.json"), "/etc/z.json");
}

TEST(TrainerFiles, FollowingTheReferenceReadsTheDeepSpeedFile) {
  TrainerFile f =
      read_trainer_file(text("training_args_deepspeed.json"), path("training_args_deepspeed.json"),
                        test::catalog().model_ids());
  const std::vector<TrainerFile> named =
      follow_references(f, read_resolved, test::catalog().model_ids());
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].file, path("ds/zero2_offload.json"));
  EXPECT_EQ(named[0].format, TrainerFormat::kDeepSpeed);
  EXPECT_EQ(named[0].setting("shard"), "zero2");
  EXPECT_EQ(named[0].setting("offload_optimizer"), "true");
  EXPECT_EQ(named[0].setting("stack"), "deepspeed");
  EXPECT_EQ(ignored_key(f, "deepspeed"), nullptr);  // followed: no longer ignored
  // Where no file may be read (the API), the key stays ignored and nothing is read.
  TrainerFile api = read("training_args_deepspeed.json");
  EXPECT_TRUE(follow_references(
                  api, [](const std::string&) { return std::optional<std::string>(); },
                  test::catalog().model_ids())
                  .empty());
  EXPECT_NE(ignored_key(api, "deepspeed"), nullptr);
}

TEST(TrainerFiles, FromFollowsTheDeepSpeedFileItsTrainerFileNames) {
  const auto r = test::run_cli({"fit", "--from", path("training_args_deepspeed.json"), "--model",
                                "llama-3.1-8b", "--method", "full", "--gpu", "h200-nvl", "--gpus",
                                "4", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("named by " + path("training_args_deepspeed.json") + " key 'deepspeed'"),
            std::string::npos)
      << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["from"]["files"].size(), 2u);
  EXPECT_EQ(j["from"]["files"][1]["file"], path("ds/zero2_offload.json"));
  EXPECT_EQ(j["from"]["files"][1]["format"], "deepspeed");
  EXPECT_EQ(j["from"]["files"][1]["named_by"]["file"], path("training_args_deepspeed.json"));
  EXPECT_EQ(j["from"]["files"][1]["named_by"]["key"], "deepspeed");
  bool shard = false, offload = false;
  for (const auto& u : j["from"]["used"]) {
    if (u["as"] == "shard") {
      shard = true;
      EXPECT_EQ(u["file"], path("ds/zero2_offload.json"));
      EXPECT_TRUE(u["applied"].get<bool>());
    }
    if (u["as"] == "offload_optimizer") {
      offload = true;
      EXPECT_EQ(u["file"], path("ds/zero2_offload.json"));
    }
  }
  EXPECT_TRUE(shard);
  EXPECT_TRUE(offload);
  for (const auto& k : j["from"]["ignored"])
    EXPECT_NE(k["key"], "deepspeed");
  // The same run as the flags: ZeRO-2 with the optimizer offloaded.
  const auto flags = test::run_cli({"fit",
                                    "--model",
                                    "llama-3.1-8b",
                                    "--method",
                                    "full",
                                    "--gpu",
                                    "h200-nvl",
                                    "--gpus",
                                    "4",
                                    "--micro-batch",
                                    "2",
                                    "--grad-accum",
                                    "8",
                                    "--recompute",
                                    "full",
                                    "--precision",
                                    "bf16",
                                    "--optimizer",
                                    "adamw",
                                    "--stack",
                                    "deepspeed",
                                    "--shard",
                                    "zero2",
                                    "--offload-optimizer",
                                    "--json"});
  ASSERT_EQ(flags.code, 0) << flags.err;
  EXPECT_EQ(j["memory_GB"], json::parse(flags.out)["memory_GB"]);
}

TEST(TrainerFiles, AxolotlAndLlamaFactoryFollowTheirDeepSpeedFiles) {
  for (const char* name : {"axolotl-deepspeed.yml", "llamafactory-deepspeed.yaml"}) {
    const auto r =
        test::run_cli({"fit", "--from", path(name), "--model", "llama-3.1-8b", "--method", "full",
                       "--gpu", "h200-nvl", "--gpus", "2", "--json"});
    ASSERT_EQ(r.code, 0) << name << ": " << r.err;
    const json j = json::parse(r.out);
    ASSERT_EQ(j["from"]["files"].size(), 2u) << name;
    EXPECT_EQ(j["from"]["files"][1]["named_by"]["key"], "deepspeed");
    EXPECT_EQ(j["from"]["files"][1]["format"], "deepspeed");
  }
}

TEST(TrainerFiles, AMissingDeepSpeedFileNamesTheTrainerFileKeyAndPath) {
  const auto r =
      test::run_cli({"fit", "--from", path("training_args_missing_deepspeed.json"), "--model",
                     "llama-3.1-8b", "--method", "full", "--gpu", "h200-nvl"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(path("training_args_missing_deepspeed.json")), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'deepspeed'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no_such_ds_config.json"), std::string::npos) << r.err;
}

TEST(TrainerFiles, ARunsFileFollowsTheDeepSpeedFileToo) {
  const std::string runs =
      "runs:\n  - name: a\n    model: llama-3.1-8b\n    method: full\n"
      "    tokens: 1e9\n    from: " +
      path("training_args_deepspeed.json") + "\n";
  const FileReader reader = [](const std::string& p, const std::string&) {
    return *read_resolved(p);
  };
  const ModelResolver resolve = [](const std::string& id) { return test::catalog().model(id); };
  const RunsFile f =
      parse_runs_file(runs, "runs.yaml", test::catalog(), test::stacks(), resolve, reader);
  ASSERT_EQ(f.runs.size(), 1u);
  EXPECT_TRUE(f.runs[0].workload.options.offload_optimizer);  // from ds/zero2_offload.json
  EXPECT_EQ(f.runs[0].workload.stack->name, "deepspeed");
}

TEST(TrainerFiles, RunsFilesTakeFromBelowTheRunsOwnKeys) {
  const std::string runs = R"(
defaults:
  from: ds
runs:
  - name: a
    model: llama-3.1-8b
    from: axolotl
    rank: 4
    tokens: 1e9
  - name: b
    model: llama-3.1-8b
    method: full
    tokens: 1e9
)";
  const FileReader reader = [](const std::string& p, const std::string&) {
    return text(p == "axolotl" ? "axolotl-qlora.yml" : "ds_config_zero3.json");
  };
  const ModelResolver resolve = [](const std::string& id) { return test::catalog().model(id); };
  const RunsFile f =
      parse_runs_file(runs, "runs.yaml", test::catalog(), test::stacks(), resolve, reader);
  ASSERT_EQ(f.runs.size(), 2u);
  const Workload& a = f.runs[0].workload;
  EXPECT_EQ(a.method, Method::kQlora);  // the run's file
  EXPECT_EQ(a.lora.rank, 4);            // the run's own key beats its file's lora_r 32
  EXPECT_EQ(a.seq, 4096);
  EXPECT_EQ(f.runs[0].micro_batch, 2);
  EXPECT_EQ(a.optimizer, Optimizer::kPagedAdamW8bit);
  EXPECT_EQ(a.stack->name, "axolotl");       // the run's file beats the defaults' file
  EXPECT_TRUE(a.options.offload_optimizer);  // from the defaults' DeepSpeed file
  const Workload& b = f.runs[1].workload;
  EXPECT_EQ(b.method, Method::kFull);
  EXPECT_EQ(b.stack->name, "deepspeed");
  EXPECT_TRUE(b.options.offload_optimizer);
  // A file that cannot be read here is an error naming the key.
  try {
    parse_runs_file(runs, "runs.yaml", test::catalog(), test::stacks(), resolve, {});
    ADD_FAILURE() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("from"), std::string::npos) << e.what();
  }
}

TEST(TrainerFiles, ARunsFileTakesPureBf16AsTheFlagDoes) {
  // pure_bf16 is a run key of its own, and a trainer file's (torchtune dtype: bf16) reaches the
  // run too; before it was dropped, and the run kept its FP32 master copy.
  const std::string runs = R"(
runs:
  - name: own
    model: llama-3.1-8b
    method: full
    pure_bf16: true
    tokens: 1e9
  - name: from-file
    model: llama-3.1-8b
    from: torchtune
    tokens: 1e9
  - name: plain
    model: llama-3.1-8b
    method: full
    tokens: 1e9
)";
  const FileReader reader = [](const std::string&, const std::string&) {
    return text("torchtune-lora.yaml");
  };
  const ModelResolver resolve = [](const std::string& id) { return test::catalog().model(id); };
  const RunsFile f =
      parse_runs_file(runs, "runs.yaml", test::catalog(), test::stacks(), resolve, reader);
  ASSERT_EQ(f.runs.size(), 3u);
  EXPECT_TRUE(f.runs[0].workload.options.pure_bf16);
  EXPECT_EQ(read("torchtune-lora.yaml").setting("pure_bf16"), "true");
  EXPECT_TRUE(f.runs[1].workload.options.pure_bf16);
  EXPECT_FALSE(f.runs[2].workload.options.pure_bf16);
}

TEST(TrainerFiles, ATrlPreferenceConfigSaysItsTrainerIsNotNamed) {
  const TrainerFile f = read("trl-dpo-qlora.yaml");
  EXPECT_EQ(f.setting("method"), "qlora");  // use_peft + load_in_4bit
  EXPECT_EQ(f.setting("rank"), "128");
  const IgnoredKey* beta = ignored_key(f, "beta");
  ASSERT_NE(beta, nullptr);
  EXPECT_NE(beta->why.find("--method dpo"), std::string::npos) << beta->why;
  EXPECT_NE(beta->why.find("supervised fine-tuning"), std::string::npos) << beta->why;
  EXPECT_EQ(beta->setting, "method");  // what a command missing --method quotes
  // An SFT config has no beta: nothing is said.
  EXPECT_EQ(ignored_key(read("sft_config.json"), "beta"), nullptr);
}

TEST(TrainerFiles, ATypedObjectiveTrainsTheFilesAdapter) {
  // --method dpo beside a file that reads as QLoRA: DPO on the file's QLoRA adapter (its rank and
  // targets), not a full fine-tune with a reference copy.
  const auto r = test::run_cli({"fit", "--from", path("trl-dpo-qlora.yaml"), "--method", "dpo",
                                "--gpu", "h100-sxm", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["method"], "dpo");
  EXPECT_EQ(j["adapter"], "qlora");
  EXPECT_EQ(j["rank"], 128);
  EXPECT_LT(j["params"]["trainable"].get<double>(), 0.05 * j["params"]["total"].get<double>());
  // A typed --adapter still wins over the file's.
  const auto lora = test::run_cli({"fit", "--from", path("trl-dpo-qlora.yaml"), "--method", "dpo",
                                   "--adapter", "lora", "--gpu", "h100-sxm", "--json"});
  ASSERT_EQ(lora.code, 0) << lora.err;
  EXPECT_EQ(json::parse(lora.out)["adapter"], "lora");
}

TEST(TrainerFiles, KeysThatMatterButAreNotModelledSayWhy) {
  const auto ids = test::catalog().model_ids();
  // PEFT: adapters on some layers only.
  const TrainerFile peft = read_trainer_file(
      R"({"peft_type": "LORA", "r": 8, "target_modules": ["q_proj"], "layers_to_transform": [16, 17]})",
      "adapter_config.json", ids);
  const IgnoredKey* layers = ignored_key(peft, "layers_to_transform");
  ASSERT_NE(layers, nullptr);
  EXPECT_NE(layers->why.find("overstates"), std::string::npos) << layers->why;
  // axolotl: Liger's fused RMSNorm, which --compile would count.
  const TrainerFile ax = read_trainer_file(
      "base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\nliger_rms_norm: true\n"
      "some_unknown_key: 3\n",
      "axolotl.yml", ids);
  const IgnoredKey* liger = ignored_key(ax, "liger_rms_norm");
  ASSERT_NE(liger, nullptr);
  EXPECT_NE(liger->why.find("--compile"), std::string::npos) << liger->why;
  // Any other key is listed as an assumption, not as a finding.
  const IgnoredKey* other = ignored_key(ax, "some_unknown_key");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->why, "not read: taken to leave memory and step time as they are");
  // DeepSpeed: a numeric global batch without the micro-batch, and Megatron's partitioning.
  const TrainerFile ds = read_trainer_file(
      R"({"train_batch_size": 16, "gradient_accumulation_steps": 1,
          "zero_optimization": {"stage": 2, "cpu_offload": true},
          "activation_checkpointing": {"partition_activations": true}})",
      "ds.json", ids);
  const IgnoredKey* global = ignored_key(ds, "train_batch_size");
  ASSERT_NE(global, nullptr);
  EXPECT_NE(global->why.find("--micro-batch"), std::string::npos) << global->why;
  EXPECT_NE(ignored_key(ds, "activation_checkpointing.partition_activations"), nullptr);
  EXPECT_EQ(ds.setting("offload_optimizer"), "true");
  const TrainerFile automatic = read_trainer_file(
      R"({"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
          "zero_optimization": {"stage": 3}})",
      "ds.json", ids);
  const IgnoredKey* deferred = ignored_key(automatic, "train_batch_size");
  ASSERT_NE(deferred, nullptr);
  EXPECT_NE(deferred->why.find("'auto'"), std::string::npos) << deferred->why;
}

}  // namespace
}  // namespace ftplan
