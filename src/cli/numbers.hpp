// How every number option of the command line reads its value: in any usual form (4096, 1e4,
// 1.5e3, 100e6), a whole number where an integer is taken, never NaN, infinite or negative.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace ftplan::cli {

// Checks `text` as the value of an integer option and rewrites it in the plain digits the
// option's conversion reads (1e4 -> 10000). Returns what is wrong ("" when nothing): not a
// number, not finite, negative, or not whole.
std::string read_whole_number(std::string& text);

// Checks `text` as the value of a real-number option: a finite number, not negative. Returns
// what is wrong ("" when nothing).
std::string read_real_number(std::string& text);

// Gives every number option of `app` and of its subcommands the matching reader above, by the
// type CLI11 converts to (INT and UINT: whole numbers; FLOAT: real numbers).
void check_number_options(CLI::App& app);

}  // namespace ftplan::cli
