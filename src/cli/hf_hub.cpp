#include "cli/hf_hub.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/cli.hpp"
#include "cli/http_get.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "core/utf8.hpp"

namespace ftplan::cli {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMaxJsonFileBytes = 64u << 20;  // config.json, the index

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

bool valid_name(std::string_view s) {
  return !s.empty() && s.size() <= 96 && s.front() != '.' && s.front() != '-' &&
         s.find("..") == std::string_view::npos && std::all_of(s.begin(), s.end(), name_char);
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// A file read whole, at most `cap` bytes; errors name the file.
std::string read_small_file(const std::string& path, std::uint64_t cap) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec)
    throw UserError(ErrorCode::kBadFile, fmt::format("{}: cannot read it ({})", path, ec.message()),
                    path);
  if (size > cap)
    throw UserError(
        ErrorCode::kBadFile,
        fmt::format("{}: {} bytes, more than the {} bytes ftplan reads", path, size, cap), path);
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  if (!in) throw UserError(ErrorCode::kBadFile, fmt::format("{}: cannot read it", path), path);
  return buf.str();
}

// The shard files a folder holds: those the index names, or model.safetensors. `suffix` is
// ".header" in ftplan's cache.
void add_checkpoint(ModelFiles& files, const fs::path& dir, const std::string& suffix) {
  std::error_code ec;
  const fs::path index = dir / "model.safetensors.index.json";
  if (fs::is_regular_file(index, ec)) {
    files.index = index.string();
    const std::string text = read_small_file(files.index, kMaxJsonFileBytes);
    for (const auto& shard : parse_safetensors_index(text, files.index).shards)
      files.safetensors.push_back((dir / (shard + suffix)).string());
  } else if (fs::is_regular_file(dir / ("model.safetensors" + suffix), ec)) {
    files.safetensors.push_back((dir / ("model.safetensors" + suffix)).string());
  }
}

fs::path repo_folder(const std::string& root, const HubId& id) {
  const auto slash = id.repo.find('/');
  return fs::path(root) /
         ("models--" + id.repo.substr(0, slash) + "--" + id.repo.substr(slash + 1));
}

std::string encoded_revision(const std::string& revision) {
  std::string out;
  for (char c : revision)
    out += c == '/' ? std::string("%2F") : std::string(1, c);
  return out;
}

// ---- the hub over HTTP --------------------------------------------------------------------------

struct Reply {
  int status = 0;
  std::string body;
};

// "https://host[:port]" and the path prefix of an endpoint or redirect URL.
std::optional<std::pair<std::string, std::string>> split_url(const std::string& url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return std::nullopt;
  const std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") return std::nullopt;
  const auto path_at = url.find('/', scheme_end + 3);
  if (path_at == std::string::npos) return std::make_pair(url, std::string());
  return std::make_pair(url.substr(0, path_at), url.substr(path_at));
}

class HubClient {
 public:
  HubClient(const HubSettings& settings, const HubId& id) : settings_(settings), id_(id) {
    auto parts = split_url(settings.endpoint);
    if (!parts)
      throw UserError(ErrorCode::kInvalidValue,
                      fmt::format("HF_ENDPOINT '{}' is not an http:// or https:// address",
                                  cut_utf8(printable_utf8(settings.endpoint), 120)),
                      "HF_ENDPOINT");
    origin_ = parts->first;
    prefix_ = parts->second;
    while (!prefix_.empty() && prefix_.back() == '/')
      prefix_.pop_back();
  }

  // GET <endpoint>/<repo>/resolve/<revision>/<file>: at most `max_bytes` of the body (a request
  // for the first `max_bytes` with a Range header; a server that ignores it is cut off there).
  // Redirects are followed (at most 5); the token goes only to the endpoint's own host.
  Reply get(const std::string& file, std::size_t max_bytes, bool range) {
    std::string origin = origin_;
    std::string path =
        fmt::format("{}/{}/resolve/{}/{}", prefix_, id_.repo, encoded_revision(id_.revision), file);
    for (int hop = 0; hop < 6; ++hop) {
      HttpGetRequest request{origin, path, {}, max_bytes};
      if (origin == origin_ && !settings_.token.empty())
        request.headers.emplace_back("Authorization", "Bearer " + settings_.token);
      if (range) request.headers.emplace_back("Range", fmt::format("bytes=0-{}", max_bytes - 1));
      HttpGetReply got;
      try {
        got = http_get(request);
      } catch (const NetworkError& e) {
        throw UserError(
            ErrorCode::kBadFile,
            fmt::format("{}: cannot fetch {} from {} (network error: {}); check the network, or "
                        "work offline "
                        "(HF_HUB_OFFLINE=1) with a copy in the Hugging Face cache or a folder",
                        id_.text(), file, settings_.endpoint, cut_utf8(e.what(), 300)),
            "model");
      }
      Reply reply{got.status, std::move(got.body)};
      const std::string location = std::move(got.location);
      const bool redirect = reply.status == 301 || reply.status == 302 || reply.status == 303 ||
                            reply.status == 307 || reply.status == 308;
      if (!redirect) return reply;
      if (location.starts_with("/")) {
        path = location;
      } else if (auto next = split_url(location)) {
        origin = next->first;
        path = next->second.empty() ? "/" : next->second;
      } else {
        throw UserError(ErrorCode::kBadFile,
                        fmt::format("{}: {} redirects to '{}', not an http(s) address", id_.text(),
                                    file, cut_utf8(printable_utf8(location), 120)),
                        "model");
      }
    }
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: {} redirects more than 5 times", id_.text(), file), "model");
  }

  // A UserError for an answer that is not the file.
  [[noreturn]] void fail(const std::string& file, int status,
                         const std::vector<std::string>& known_repos) const {
    const std::string page = fmt::format("{}/{}", settings_.endpoint, id_.repo);
    const auto near = closest_names(id_.repo, known_repos, 3);
    const std::string suggestion =
        near.empty() ? "" : fmt::format("; did you mean {}?", fmt::join(near, ", "));
    if (status == 401 || status == 403)
      throw UserError(
          ErrorCode::kUnsupported,
          fmt::format("{}: the hub refused {} (HTTP {}): the model is gated or private, or the "
                      "id does not exist. {}, accept the model's licence on {} and try "
                      "again{}",
                      id_.text(), file, status,
                      settings_.token.empty() ? "Set HF_TOKEN to an access token of your account"
                                              : "HF_TOKEN is set: make sure its account",
                      page, suggestion),
          "model");
    if (status == 404)
      throw UserError(ErrorCode::kUnknownName,
                      fmt::format("{}: not found on {} (HTTP 404 for {} at revision '{}'){}",
                                  id_.text(), settings_.endpoint, file, id_.revision, suggestion),
                      "model");
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: the hub answered HTTP {} for {}", id_.text(), status, file),
                    "model");
  }

 private:
  const HubSettings& settings_;
  const HubId& id_;
  std::string origin_;
  std::string prefix_;
};

void make_folder(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: cannot create ftplan's cache folder ({}); set XDG_CACHE_HOME "
                                "to a writable folder",
                                dir.string(), ec.message()),
                    "model");
}

}  // namespace

std::optional<HubId> parse_hub_id(std::string_view arg) {
  HubId id;
  const auto at = arg.find('@');
  std::string_view repo = arg.substr(0, at);
  if (at != std::string_view::npos) {
    const std::string_view revision = arg.substr(at + 1);
    if (revision.empty() || revision.size() > 255 || revision.find("..") != std::string::npos ||
        revision.front() == '/' || revision.back() == '/' ||
        !std::all_of(revision.begin(), revision.end(),
                     [](char c) { return name_char(c) || c == '/'; }))
      return std::nullopt;
    id.revision = std::string(revision);
    id.revision_given = true;
  } else {
    id.revision = "main";
  }
  const auto slash = repo.find('/');
  if (slash == std::string_view::npos || !valid_name(repo.substr(0, slash)) ||
      !valid_name(repo.substr(slash + 1)))
    return std::nullopt;
  id.repo = std::string(repo);
  return id;
}

HubSettings HubSettings::from_environment() {
  HubSettings s;
  const std::string home = env("HOME");
  if (!env("HF_HUB_CACHE").empty())
    s.hf_cache = env("HF_HUB_CACHE");
  else if (!env("HF_HOME").empty())
    s.hf_cache = (fs::path(env("HF_HOME")) / "hub").string();
  else if (!home.empty())
    s.hf_cache = (fs::path(home) / ".cache" / "huggingface" / "hub").string();
  if (!env("XDG_CACHE_HOME").empty())
    s.ftplan_cache = (fs::path(env("XDG_CACHE_HOME")) / "ftplan" / "hf").string();
  else if (!home.empty())
    s.ftplan_cache = (fs::path(home) / ".cache" / "ftplan" / "hf").string();
  if (!env("HF_ENDPOINT").empty()) s.endpoint = env("HF_ENDPOINT");
  while (s.endpoint.size() > 1 && s.endpoint.back() == '/')
    s.endpoint.pop_back();
  s.token = env("HF_TOKEN");
  const std::string offline = ascii_lower(env("HF_HUB_OFFLINE"));
  s.offline = offline == "1" || offline == "true" || offline == "yes" || offline == "on";
  return s;
}

std::optional<ModelFiles> files_in_folder(const std::string& folder) {
  std::error_code ec;
  const fs::path dir(folder);
  if (!fs::is_regular_file(dir / "config.json", ec)) return std::nullopt;
  ModelFiles files;
  files.config = (dir / "config.json").string();
  files.origin = "folder " + folder;
  add_checkpoint(files, dir, "");
  return files;
}

std::optional<ModelFiles> find_in_hf_cache(const HubId& id, const HubSettings& settings) {
  if (settings.hf_cache.empty()) return std::nullopt;
  const fs::path repo = repo_folder(settings.hf_cache, id);
  std::error_code ec;
  std::string commit;
  const bool is_hash =
      id.revision.size() == 40 && std::all_of(id.revision.begin(), id.revision.end(), [](char c) {
        return std::isxdigit(static_cast<unsigned char>(c));
      });
  if (is_hash && fs::is_directory(repo / "snapshots" / id.revision, ec)) {
    commit = id.revision;
  } else {
    const fs::path ref = repo / "refs" / id.revision;
    if (!fs::is_regular_file(ref, ec)) return std::nullopt;
    commit = read_small_file(ref.string(), 1024);
    while (!commit.empty() && std::isspace(static_cast<unsigned char>(commit.back())))
      commit.pop_back();
    if (commit.empty() || !std::all_of(commit.begin(), commit.end(), name_char))
      throw UserError(ErrorCode::kBadFile,
                      fmt::format("{}: expected a commit hash, found '{}'", ref.string(),
                                  cut_utf8(printable_utf8(commit), 60)),
                      "model");
  }
  auto files = files_in_folder((repo / "snapshots" / commit).string());
  if (files) files->origin = "Hugging Face cache " + (repo / "snapshots" / commit).string();
  return files;
}

std::optional<ModelFiles> find_in_ftplan_cache(const HubId& id, const HubSettings& settings) {
  if (settings.ftplan_cache.empty()) return std::nullopt;
  const fs::path dir = repo_folder(settings.ftplan_cache, id) / encoded_revision(id.revision);
  std::error_code ec;
  if (!fs::is_regular_file(dir / "complete", ec) || !fs::is_regular_file(dir / "config.json", ec))
    return std::nullopt;
  ModelFiles files;
  files.config = (dir / "config.json").string();
  files.origin = "ftplan cache " + dir.string();
  files.header_only = true;
  add_checkpoint(files, dir, ".header");
  return files;
}

ModelFiles download_model_files(const HubId& id, const HubSettings& settings,
                                const std::vector<std::string>& known_repos) {
  if (settings.offline)
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: not in the Hugging Face cache ({}) nor in ftplan's ({}), and "
                                "HF_HUB_OFFLINE is set: download it first, unset HF_HUB_OFFLINE, "
                                "or give a folder holding its config.json",
                                id.text(), settings.hf_cache, settings.ftplan_cache),
                    "model");
  if (settings.ftplan_cache.empty())
    throw UserError(ErrorCode::kBadFile,
                    "neither XDG_CACHE_HOME nor HOME is set: no folder for ftplan's cache",
                    "model");
  HubClient hub(settings, id);
  const auto whole = [&](const std::string& file, bool optional) -> std::optional<std::string> {
    Reply r = hub.get(file, kMaxJsonFileBytes + 1, false);
    if (optional && r.status == 404) return std::nullopt;
    if (r.status != 200) hub.fail(file, r.status, known_repos);
    if (r.body.size() > kMaxJsonFileBytes)
      throw UserError(
          ErrorCode::kBadFile,
          fmt::format("{}: {} is larger than {} bytes", id.text(), file, kMaxJsonFileBytes),
          "model");
    return r.body;
  };
  // The header only: the first 8 bytes give its length N, then bytes 0 .. 8+N-1.
  const auto header = [&](const std::string& file, bool optional) -> std::optional<std::string> {
    const std::string label = fmt::format("{}/{}", id.text(), file);
    Reply first = hub.get(file, 8, true);
    if (optional && first.status == 404) return std::nullopt;
    if (first.status != 200 && first.status != 206) hub.fail(file, first.status, known_repos);
    const std::uint64_t n = safetensors_header_length(first.body, label);
    const auto size = static_cast<std::size_t>(8 + n);
    Reply full = hub.get(file, size, true);
    if (full.status != 200 && full.status != 206) hub.fail(file, full.status, known_repos);
    if (full.body.size() != size)
      throw UserError(ErrorCode::kBadFile,
                      fmt::format("{}: the hub sent {} bytes of the {}-byte header", label,
                                  full.body.size(), size),
                      "model");
    parse_safetensors_prefix(full.body, label, false);  // refuse a bad header before caching it
    return full.body;
  };

  const std::string config = *whole("config.json", false);
  std::vector<std::pair<std::string, std::string>> shards;  // file name, header bytes
  const auto index = whole("model.safetensors.index.json", true);
  if (index) {
    for (const auto& shard :
         parse_safetensors_index(*index, id.text() + "/model.safetensors.index.json").shards)
      shards.emplace_back(shard, *header(shard, false));
  } else if (auto single = header("model.safetensors", true)) {
    shards.emplace_back("model.safetensors", *single);
  }

  const fs::path dir = repo_folder(settings.ftplan_cache, id) / encoded_revision(id.revision);
  make_folder(dir);
  std::error_code ec;
  fs::remove(dir / "complete", ec);
  write_whole_file((dir / "config.json").string(), config, "model");
  if (index) write_whole_file((dir / "model.safetensors.index.json").string(), *index, "model");
  for (const auto& [name, bytes] : shards)
    write_whole_file((dir / (name + ".header")).string(), bytes, "model");
  write_whole_file((dir / "complete").string(), id.text() + "\n", "model");
  auto files = find_in_ftplan_cache(id, settings);
  files->origin = "downloaded from " + settings.endpoint + " to " + dir.string();
  return *files;
}

CheckpointInventory read_checkpoint(const ModelFiles& files) {
  std::vector<ShardHeader> shards;
  for (const auto& path : files.safetensors) {
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec)
      throw UserError(ErrorCode::kBadFile,
                      fmt::format("{}: cannot read it ({}){}", path, ec.message(),
                                  files.index.empty() ? "" : "; " + files.index + " names it"),
                      path);
    std::ifstream in(path, std::ios::binary);
    std::string first(8, '\0');
    in.read(first.data(), 8);
    first.resize(static_cast<std::size_t>(in.gcount()));
    const std::uint64_t n = safetensors_header_length(first, path);
    if (size < 8 + n)
      throw UserError(ErrorCode::kBadFile,
                      fmt::format("{}: the header length says {} bytes but the file has {} bytes",
                                  path, n, size),
                      path);
    std::string header(static_cast<std::size_t>(n), '\0');
    in.read(header.data(), static_cast<std::streamsize>(n));
    if (!in) throw UserError(ErrorCode::kBadFile, fmt::format("{}: cannot read it", path), path);
    std::optional<std::uint64_t> data;
    if (!files.header_only) data = size - 8 - n;
    std::string name = fs::path(path).filename().string();
    if (files.header_only && name.ends_with(".header")) name.resize(name.size() - 7);
    shards.push_back({name, parse_safetensors_header(header, path, data)});
  }
  if (files.index.empty()) return build_checkpoint_inventory(shards, nullptr, "");
  const auto index =
      parse_safetensors_index(read_small_file(files.index, kMaxJsonFileBytes), files.index);
  return build_checkpoint_inventory(shards, &index, files.index);
}

ModelFiles checkpoint_files(const std::string& file_or_index) {
  std::error_code ec;
  if (!fs::is_regular_file(file_or_index, ec))
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: no such file (given for --safetensors: a .safetensors file "
                                "or a model.safetensors.index.json)",
                                file_or_index),
                    "safetensors");
  ModelFiles files;
  files.origin = file_or_index;
  if (file_or_index.ends_with(".json")) {
    files.index = file_or_index;
    const fs::path dir = fs::path(file_or_index).parent_path();
    for (const auto& shard :
         parse_safetensors_index(read_small_file(file_or_index, kMaxJsonFileBytes), file_or_index)
             .shards)
      files.safetensors.push_back((dir / shard).string());
  } else {
    files.safetensors.push_back(file_or_index);
    files.header_only = file_or_index.ends_with(".header");
  }
  return files;
}

}  // namespace ftplan::cli
