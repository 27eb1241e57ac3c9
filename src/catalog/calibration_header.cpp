#include "catalog/calibration_header.hpp"

namespace ftplan {

CalibrationHeader read_calibration_header(StrictMap& root) {
  CalibrationHeader h;
  auto cal = root.optional_map("calibration");
  if (!cal) return h;
  h.card = cal->required_string("card");
  h.measurement = cal->required_string("measurement");
  h.date = cal->required_string("date");
  h.device = cal->optional_string("device").value_or("");
  h.driver = cal->optional_string("driver").value_or("");
  h.results = cal->optional_string("results").value_or("");
  h.note = cal->optional_string("note").value_or("");
  cal->finish();
  return h;
}

}  // namespace ftplan
