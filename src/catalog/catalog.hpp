// All data ftplan reads: GPU cards, models, sources (and the tables later analyses add).
// Built from file texts handed in by a front end; the core itself never touches the file system.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/gpu.hpp"
#include "model/model.hpp"

namespace ftplan {

struct DataFile {
  std::string path;       // as named in messages, e.g. "data/gpus/h200-nvl.yaml"
  std::string_view text;  // must outlive the Catalog
  std::string relative;   // below the data folder ("gpus/h200-nvl.yaml"); empty: path minus "data/"
};

struct SourceInfo {
  std::string id;
  std::string title;
  std::string url;
  std::string note;
};

// The architectures a card may name. The efficiency table's `architectures` section scales the
// compute fractions of those it lists; the others keep the default fractions (multiplier 1).
const std::vector<std::string>& known_architectures();

// The cards of a catalog in file order, as a range of `const GpuSpec&`.
class GpuList {
 public:
  class iterator {
   public:
    using value_type = GpuSpec;
    using difference_type = std::ptrdiff_t;
    explicit iterator(const GpuSpec* const* at) : at_(at) {}
    const GpuSpec& operator*() const { return **at_; }
    const GpuSpec* operator->() const { return *at_; }
    iterator& operator++() {
      ++at_;
      return *this;
    }
    bool operator==(const iterator&) const = default;

   private:
    const GpuSpec* const* at_;
  };
  explicit GpuList(const std::vector<const GpuSpec*>& cards) : cards_(cards) {}
  iterator begin() const { return iterator(cards_.data()); }
  iterator end() const { return iterator(cards_.data() + cards_.size()); }
  std::size_t size() const { return cards_.size(); }
  bool empty() const { return cards_.empty(); }

 private:
  const std::vector<const GpuSpec*>& cards_;
};

class Catalog {
 public:
  Catalog() = default;
  Catalog(const Catalog& other);  // a private copy to extend with a user's cards
  Catalog(Catalog&&) = default;
  Catalog& operator=(const Catalog&) = delete;
  Catalog& operator=(Catalog&&) = default;

  // Parses every data file (strictly); `files` may hold files of several data folders: later
  // entries with an id already seen are an error.
  static Catalog load(const std::vector<DataFile>& files);

  // A card by id, case-insensitively, or by a name nvidia-smi prints (`smi_names`) or the card's
  // `name`. A name several cards share, or the start of several ids ("h100"), is a UserError
  // listing them; an unknown one names the closest ids.
  const GpuSpec& gpu(std::string_view id) const;
  const GpuSpec* find_gpu(std::string_view id) const;  // the exact id only
  // The cards `text` names (see gpu()): one, several (ambiguous) or none.
  std::vector<const GpuSpec*> gpus_named(std::string_view text) const;
  // Every card (the built-in card files are parsed when first needed: a CLI call naming one card
  // parses that one only).
  GpuList gpus() const;
  std::vector<std::string> gpu_ids() const;  // without parsing the card files
  std::size_t cards_parsed() const;          // how many card files have been parsed so far

  ModelPtr model(std::string_view id) const;  // UserError naming the closest ids
  ModelPtr find_model(std::string_view id) const;
  // Every model (the built-in models' config.json files are read when first needed, as cards are).
  const std::vector<ModelPtr>& models() const;
  std::vector<std::string> model_ids() const;                   // without reading the config files
  ModelPtr find_model_by_hf_repo(std::string_view repo) const;  // case-insensitive; null if none
  // The catalog model a chat or instruction-tuned repository was fine-tuned from, by its name:
  // "org/X-Instruct", "org/X-it", "org/X-Chat", "org/X-chat-hf" and "org/Meta-X" name the base
  // "org/X" ("org/X-hf"), whose architecture they share. Null when no catalog entry is that base.
  ModelPtr find_base_model_of(std::string_view repo) const;
  std::vector<std::string> model_repos() const;  // the Hugging Face ids listed
  std::size_t models_read() const;  // how many models' config files have been read so far

  const SourceInfo* source(std::string_view id) const;
  const std::map<std::string, SourceInfo, std::less<>>& sources() const { return sources_; }

  // Adds a card read from a user's file (same schema as data/gpus/*.yaml). Returns it.
  const GpuSpec& add_gpu_file(const DataFile& file);

  // Other data tables (efficiencies, topologies, overheads, measured runs, ...) are parsed by the
  // module that owns them (e.g. perf/efficiency.cpp) from these texts. Paths are relative to the
  // data folder ("efficiency/default.yaml"); a later --data folder overrides an earlier file.
  const DataFile* file(std::string_view relative_path) const;
  std::vector<const DataFile*> files_under(std::string_view relative_folder) const;

 private:
  // A card file not parsed yet: built-in files (their YAML preparsed at build time) wait until a
  // card is asked for; a user's files are parsed at once, so that their errors show at once.
  struct PendingCard {
    std::string id;  // the file's stem, which a card file's id must equal
    DataFile file;
  };
  const GpuSpec& parse_pending(std::size_t index) const;  // holds mutex_
  void parse_all() const;

  // A model of the index (models/catalog.yaml): its catalog facts at once, its architecture from
  // its config.json when first asked for (built in), or at once (a user's data folder).
  struct ModelEntry {
    std::string id;
    std::string name;
    std::string hf_repo;
    std::string publisher_params;
    std::string note;
    std::vector<std::string> sources;
    std::string config_path;  // "data/models/x.json"
    std::string_view config_text;
    mutable ModelPtr model;  // null until read
  };
  static ModelPtr read_model(const ModelEntry& e);
  ModelPtr entry_model(const ModelEntry& e) const;  // reads it when needed (takes mutex_)

  // Guards the lazily parsed cards: a catalog is shared by the server's threads.
  std::unique_ptr<std::mutex> mutex_ = std::make_unique<std::mutex>();
  mutable std::deque<GpuSpec> gpus_;  // deque: references stay valid when a card is added
  // File order: the card, or nullptr while its file waits in pending_[i].
  mutable std::vector<const GpuSpec*> order_;
  mutable std::vector<PendingCard> pending_;  // same index as order_; id empty once parsed
  std::vector<ModelEntry> model_entries_;
  mutable std::vector<ModelPtr> models_;  // filled by models(), in index order
  std::map<std::string, SourceInfo, std::less<>> sources_;
  std::map<std::string, DataFile, std::less<>>
      other_files_;  // key: path relative to the data folder
};

class StrictMap;
// The `source` key of a data-file map: one id or a list, each defined in a data/sources*.yaml
// (UserError naming the closest defined id otherwise, then `hint`). For every module that parses
// a table.
std::vector<std::string> read_source_ids(
    StrictMap& m, const std::map<std::string, SourceInfo, std::less<>>& sources,
    std::string_view hint = "");
// A file's `sources:` list (id, title, url, note), added to `sources`; an id defined twice is an
// error naming the file and entry.
void read_sources_list(StrictMap& root, std::map<std::string, SourceInfo, std::less<>>& sources);

// Parses one card file against the known source ids (exposed for the fuzzer and tests). A user's
// own card (`user_file`: given by path, outside the data folders) needs only the name, memory,
// bandwidth and dense rates; its figures may omit `source` (shown as user-supplied) and missing
// optional figures take stated defaults.
GpuSpec parse_gpu_file(const DataFile& file,
                       const std::map<std::string, SourceInfo, std::less<>>& sources,
                       bool user_file = false);

}  // namespace ftplan
