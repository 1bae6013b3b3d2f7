#include "codec/base64.h"

#include <array>

namespace dhtgate::base64 {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::uint8_t kInvalid = 0xFF;

constexpr std::array<std::uint8_t, 256> makeDecodeTable()
{
    std::array<std::uint8_t, 256> t {};
    for (auto& v : t)
        v = kInvalid;
    for (std::uint8_t i = 0; i < 64; ++i)
        t[static_cast<unsigned char>(kAlphabet[i])] = i;
    return t;
}

constexpr auto kDecode = makeDecodeTable();

} // namespace

void encode(std::string& out, const std::uint8_t* data, std::size_t size)
{
    const std::size_t start = out.size();
    out.resize(start + encodedSize(size));
    char* o = &out[start];
    std::size_t i = 0;
    for (; i + 3 <= size; i += 3) {
        const std::uint32_t n = (std::uint32_t(data[i]) << 16) | (std::uint32_t(data[i + 1]) << 8) | data[i + 2];
        *o++ = kAlphabet[(n >> 18) & 0x3F];
        *o++ = kAlphabet[(n >> 12) & 0x3F];
        *o++ = kAlphabet[(n >> 6) & 0x3F];
        *o++ = kAlphabet[n & 0x3F];
    }
    const std::size_t rest = size - i;
    if (rest == 1) {
        const std::uint32_t n = std::uint32_t(data[i]) << 16;
        *o++ = kAlphabet[(n >> 18) & 0x3F];
        *o++ = kAlphabet[(n >> 12) & 0x3F];
        *o++ = '=';
        *o++ = '=';
    } else if (rest == 2) {
        const std::uint32_t n = (std::uint32_t(data[i]) << 16) | (std::uint32_t(data[i + 1]) << 8);
        *o++ = kAlphabet[(n >> 18) & 0x3F];
        *o++ = kAlphabet[(n >> 12) & 0x3F];
        *o++ = kAlphabet[(n >> 6) & 0x3F];
        *o++ = '=';
    }
}

bool decode(std::string_view in, std::vector<std::uint8_t>& out)
{
    out.clear();
    if (in.size() % 4 != 0)
        return false;
    if (in.empty())
        return true;
    std::size_t pad = 0;
    if (in.back() == '=') {
        pad = 1;
        if (in[in.size() - 2] == '=')
            pad = 2;
    }
    out.resize(in.size() / 4 * 3 - pad);
    const auto* s = reinterpret_cast<const unsigned char*>(in.data());
    std::uint8_t* o = out.data();
    const std::size_t full = in.size() - (pad ? 4 : 0);
    std::size_t i = 0;
    for (; i < full; i += 4) {
        const std::uint8_t a = kDecode[s[i]], b = kDecode[s[i + 1]], c = kDecode[s[i + 2]], d = kDecode[s[i + 3]];
        if ((a | b | c | d) & 0x80)
            return false;
        const std::uint32_t n = (std::uint32_t(a) << 18) | (std::uint32_t(b) << 12) | (std::uint32_t(c) << 6) | d;
        *o++ = static_cast<std::uint8_t>(n >> 16);
        *o++ = static_cast<std::uint8_t>(n >> 8);
        *o++ = static_cast<std::uint8_t>(n);
    }
    if (pad) {
        const std::uint8_t a = kDecode[s[i]], b = kDecode[s[i + 1]];
        if ((a | b) & 0x80)
            return false;
        if (pad == 2) {
            if (b & 0x0F) // non-canonical: unused low bits set
                return false;
            *o++ = static_cast<std::uint8_t>((a << 2) | (b >> 4));
        } else {
            const std::uint8_t c = kDecode[s[i + 2]];
            if ((c & 0x80) || (c & 0x03))
                return false;
            *o++ = static_cast<std::uint8_t>((a << 2) | (b >> 4));
            *o++ = static_cast<std::uint8_t>((b << 4) | (c >> 2));
        }
    }
    return true;
}

} // namespace dhtgate::base64
