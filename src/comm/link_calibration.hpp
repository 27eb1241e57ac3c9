// Link calibration: the bus bandwidth NCCL reached between the cards of one machine
// (bench/nccl/allreduce.py, schema "ftplan-nccl/1", bench/README.md) as the achieved fraction of
// the link's nominal per-direction rate from the card data, for the collective model
// (CommConstants::link_calibrations); and the file that carries it (--calibration FILE).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/calibration_header.hpp"
#include "catalog/catalog.hpp"
#include "comm/collectives.hpp"
#include "comm/topology.hpp"
#include "core/trace.hpp"

namespace ftplan {

inline constexpr std::string_view kNcclResultsSchema = "ftplan-nccl/1";
// The source id of a measured link fraction (data/sources-calibration.yaml).
inline constexpr std::string_view kNcclMeasurementSource = "ftplan-nccl-measurement";

struct NcclRow {
  Collective collective = Collective::kAllReduce;
  Bytes bytes;         // the full buffer: the reduced tensor, or the gathered output
  std::string status;  // ok | oom | failed
  Seconds median;      // slowest rank's median (status ok)
  double bus_factor = 0;
  BytesPerSecond algbw, busbw;
};

struct NcclResults {
  std::string file;
  std::string note;    // only in synthetic files
  std::string status;  // ok | skipped
  std::string reason;  // skipped: why
  std::string timestamp_utc;
  int world_size = 0;
  std::vector<std::string> devices;  // one name per rank
  std::string torch, nccl, dtype;
  std::vector<NcclRow> rows;

  std::string date() const { return timestamp_utc.substr(0, 10); }
};

// Parses an ftplan-nccl/1 file strictly (as parse_bench_results): a missing or unknown key, a bus
// factor other than nccl-tests' (bus_factor), a rate that does not follow from the file's bytes
// and seconds, or a row whose check failed is a UserError naming the file and the key.
NcclResults parse_nccl_results(const DataFile& file);

// The link a single-machine NCCL run crossed when the card says so: PCIe for a card without
// NVLink; none (the user must say) for a card with NVLink bridges or a switch.
std::optional<LinkLevel> implied_link(const GpuSpec& gpu);
// The nominal per-direction rate of `level` from the card data (PCIe or NVLink figure).
BytesPerSecond nominal_per_direction(const GpuSpec& gpu, LinkLevel level);

struct LinkFit {
  LinkCalibration calibration;
  BytesPerSecond nominal;            // per direction, from the card data
  BytesPerSecond busbw;              // median of the large all-reduces
  std::vector<const NcclRow*> rows;  // the rows the median is over
  CalibrationHeader header;
};

// achieved fraction = median bus bandwidth of the ok all-reduces of at least
// `k.calibration_large_message` / the nominal per-direction rate of `level` on `gpu`. The busbw of
// nccl-tests is what each card sends per direction, so it compares with that rate directly (the
// collective model divides bytes × bus factor by the same product). A UserError when no such row
// exists, when the fraction exceeds 1 (the run crossed a faster link than `level`), or when
// `level` is not one a single-machine run can cross on this card.
LinkFit fit_link_calibration(const NcclResults& r, const GpuSpec& gpu, LinkLevel level,
                             std::string_view match_basis, const CommConstants& k,
                             Trace* trace = nullptr);

// A link calibration file: a `calibration` header naming the card and `links` with one or more of
// nvlink, pcie, network, each {achieved_fraction: {value, source, note}} (data/README.md).
struct LinkCalibrationFile {
  std::string name;
  std::string description;
  CalibrationHeader header;
  std::vector<LinkCalibration> links;
};
LinkCalibrationFile parse_link_calibration(
    const DataFile& file, const std::map<std::string, SourceInfo, std::less<>>& sources);
// True when the document has a top-level `links` key (a link calibration, not an efficiency
// table).
bool is_link_calibration(const DataFile& file);

}  // namespace ftplan
