// Models by Hugging Face id (org/name[@revision]): the files on this machine (the Hugging Face
// cache, ftplan's own cache, a snapshot folder) or, online, config.json and the safetensors
// headers fetched from the hub with HTTP range requests (never the weights). File and network
// I/O of the front end; the core only parses what is read here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/checkpoint.hpp"

namespace ftplan::cli {

struct HubId {
  std::string repo;      // "org/name"
  std::string revision;  // "main" when none was given
  bool revision_given = false;
  std::string text() const { return revision_given ? repo + "@" + revision : repo; }
};

// "org/name" or "org/name@revision" (letters, digits, '-', '_', '.'; a revision may hold '/'),
// or nothing when `arg` is not shaped like a hub id.
std::optional<HubId> parse_hub_id(std::string_view arg);

// Where files live and whether the network may be used, from the environment:
// HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub; ftplan's cache
// $XDG_CACHE_HOME/ftplan/hf, else ~/.cache/ftplan/hf; HF_ENDPOINT (default
// https://huggingface.co); HF_TOKEN; HF_HUB_OFFLINE=1 (or true/yes/on): no network at all.
struct HubSettings {
  std::string hf_cache;
  std::string ftplan_cache;
  std::string endpoint = "https://huggingface.co";
  std::string token;
  bool offline = false;
  static HubSettings from_environment();
};

// A model's files on this machine.
struct ModelFiles {
  std::string config;                    // config.json
  std::string index;                     // model.safetensors.index.json ("" when unsharded)
  std::vector<std::string> safetensors;  // shard files: whole, or header-only (*.header)
  bool header_only = false;              // ftplan's cache keeps the headers, not the weights
  std::string origin;                    // "Hugging Face cache", "ftplan cache", "folder", ...
  bool has_checkpoint() const { return !safetensors.empty(); }
};

// The snapshot of `id` in the Hugging Face cache (refs/<revision> names the commit, or the
// revision is the commit), when it holds config.json.
std::optional<ModelFiles> find_in_hf_cache(const HubId& id, const HubSettings& settings);
// The headers of `id` that ftplan downloaded earlier.
std::optional<ModelFiles> find_in_ftplan_cache(const HubId& id, const HubSettings& settings);
// A folder's config.json and safetensors files (a snapshot folder, a checkpoint saved to disk).
std::optional<ModelFiles> files_in_folder(const std::string& folder);

// Downloads config.json, the index and each shard's header into ftplan's cache (never when
// offline). `known_repos` (the catalog's hf_repo names) are suggested when the id is not found.
// Failures are UserErrors: not found, gated (HF_TOKEN), network.
ModelFiles download_model_files(const HubId& id, const HubSettings& settings,
                                const std::vector<std::string>& known_repos);

// Reads only the headers of the files and builds the inventory.
CheckpointInventory read_checkpoint(const ModelFiles& files);
// --safetensors: a .safetensors file or a model.safetensors.index.json (shards beside it).
ModelFiles checkpoint_files(const std::string& file_or_index);

}  // namespace ftplan::cli
