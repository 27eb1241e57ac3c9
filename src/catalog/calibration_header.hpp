// The `calibration` header of a file measured on one card (an efficiency calibration, a link
// calibration): which card, what was measured, when, with which driver, from which results file.
// Shared by perf/efficiency (achieved fractions of peak) and comm/link_calibration (achieved
// fractions of link bandwidth). Schema: data/README.md, "Calibration files".
#pragma once

#include <string>

#include "catalog/strict_yaml.hpp"

namespace ftplan {

struct CalibrationHeader {
  std::string card;         // catalog id of the card measured; the file applies to it only
  std::string measurement;  // what was measured, with what
  std::string date;         // of the measurement, YYYY-MM-DD
  std::string device;       // optional: the card's name as the driver reported it
  std::string driver;       // optional: driver version
  std::string results;      // optional: the results file the calibration was made from
  std::string note;         // optional

  bool present() const { return !card.empty(); }
};

// Reads the map `calibration` of `root` (required keys card, measurement, date; optional device,
// driver, results, note). Absent: an empty header.
CalibrationHeader read_calibration_header(StrictMap& root);

}  // namespace ftplan
