// Standard base64 (RFC 4648 §4: alphabet A-Z a-z 0-9 + /, '=' padding), as the proxy protocol uses
// for value data, cypher, signature (spec §4.1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dhtgate::base64 {

/// Length of the padded encoding of `n` bytes.
constexpr std::size_t encodedSize(std::size_t n) { return (n + 2) / 3 * 4; }

/// Appends the padded encoding of `data` to `out` (one resize, no per-character allocation).
void encode(std::string& out, const std::uint8_t* data, std::size_t size);
inline void encode(std::string& out, const std::vector<std::uint8_t>& data) { encode(out, data.data(), data.size()); }
inline void encode(std::string& out, std::string_view data)
{
    encode(out, reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
}

/// Strict decode: the length must be a multiple of 4, only alphabet characters, '=' only as
/// one or two final padding characters, and the unused bits before the padding must be zero
/// (canonical form). No whitespace. Returns false on any violation; `out` is then unspecified.
/// The decoded bytes replace the contents of `out`.
bool decode(std::string_view in, std::vector<std::uint8_t>& out);

} // namespace dhtgate::base64
