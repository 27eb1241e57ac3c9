// Builds small safetensors files for the tests: the header JSON written out by the test, offsets
// laid end to end in the order the tensors are added, the data left as zero bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ftplan::test {

class SafetensorsBuilder {
 public:
  // Adds a tensor of `bytes` data bytes (the caller works out elements × size by hand).
  SafetensorsBuilder& add(const std::string& name, const std::string& dtype,
                          const std::string& shape, std::uint64_t bytes) {
    if (!entries_.empty()) entries_ += ", ";
    entries_ += "\"" + name + "\": {\"dtype\": \"" + dtype + "\", \"shape\": " + shape +
                ", \"data_offsets\": [" + std::to_string(at_) + ", " + std::to_string(at_ + bytes) +
                "]}";
    at_ += bytes;
    return *this;
  }
  std::string header() const {
    return "{\"__metadata__\": {\"format\": \"pt\"}" + (entries_.empty() ? "" : ", " + entries_) +
           "}";
  }
  std::uint64_t data_bytes() const { return at_; }
  // The 8-byte little-endian length, the header, and (when `with_data`) the zero data bytes.
  std::string file(bool with_data = true) const { return wrap(header(), with_data ? at_ : 0); }

  static std::string wrap(const std::string& header, std::uint64_t data_bytes = 0) {
    std::string out(8, '\0');
    std::uint64_t n = header.size();
    for (int i = 0; i < 8; ++i)
      out[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
    return out + header + std::string(data_bytes, '\0');
  }

 private:
  std::string entries_;
  std::uint64_t at_ = 0;
};

}  // namespace ftplan::test
