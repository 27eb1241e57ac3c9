// JSON of the matrix (ftplan matrix --json, POST /api/matrix): one row per card.
#pragma once

#include <nlohmann/json.hpp>

#include "plan/matrix.hpp"

namespace ftplan {

nlohmann::json matrix_json(const MatrixRequest& request, const Matrix& matrix);

}  // namespace ftplan
