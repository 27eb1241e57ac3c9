// Text placed in HTML or SVG markup, element content and double-quoted attribute values alike.
#pragma once

#include <string>
#include <string_view>

namespace ftplan {

// `s` with &, <, > and " written as entity references.
std::string html_escape(std::string_view s);

}  // namespace ftplan
