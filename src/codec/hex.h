// Hex helpers for 160-bit hashes (keys, recipient ids), shared by the codec files.
#pragma once

#include <opendht/infohash.h>

#include <string>
#include <string_view>

namespace dhtgate::codec::detail {

/// Value of a hex digit (either case), or -1.
inline int hexValue(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/// Parses exactly 2*HASH_LEN hex digits into `out`; false (out unspecified) otherwise.
inline bool parseHash(std::string_view hex, dht::InfoHash& out)
{
    if (hex.size() != 2 * dht::InfoHash::size())
        return false;
    for (std::size_t i = 0; i < dht::InfoHash::size(); ++i) {
        const int hi = hexValue(hex[2 * i]), lo = hexValue(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[i] = static_cast<uint8_t>((hi << 4) | lo);
    }
    return true;
}

/// Appends the 40 lowercase hex digits of `h`.
inline void appendHex(std::string& out, const dht::InfoHash& h)
{
    static constexpr char kDigits[] = "0123456789abcdef";
    const std::size_t start = out.size();
    out.resize(start + 2 * h.size());
    char* o = &out[start];
    for (std::size_t i = 0; i < h.size(); ++i) {
        *o++ = kDigits[h[i] >> 4];
        *o++ = kDigits[h[i] & 0xF];
    }
}

} // namespace dhtgate::codec::detail
