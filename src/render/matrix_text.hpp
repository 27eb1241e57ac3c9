// Text of the matrix (ftplan matrix): a table of every card, and the reasons below it.
#pragma once

#include <ostream>

#include "plan/matrix.hpp"

namespace ftplan {

void print_matrix(std::ostream& out, const MatrixRequest& request, const Matrix& matrix);

}  // namespace ftplan
