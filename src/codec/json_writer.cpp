// JSON writer helpers (see json.h): escaping like the reference (jsoncpp) encoder, numbers
// without allocation.
#include "codec/json.h"

#include <charconv>

namespace dhtgate::json {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void appendU16Escape(std::string& out, unsigned u)
{
    char buf[6] = {'\\', 'u', kHex[(u >> 12) & 0xF], kHex[(u >> 8) & 0xF], kHex[(u >> 4) & 0xF], kHex[u & 0xF]};
    out.append(buf, sizeof buf);
}

// Decodes one multi-byte UTF-8 sequence at s[i]; returns the code point and advances i,
// or returns U+FFFD and advances by one byte on invalid input.
unsigned decodeUtf8(std::string_view s, std::size_t& i)
{
    auto b0 = static_cast<unsigned char>(s[i]);
    int len;
    unsigned cp;
    if (b0 >= 0xC2 && b0 <= 0xDF) { len = 2; cp = b0 & 0x1F; }
    else if (b0 >= 0xE0 && b0 <= 0xEF) { len = 3; cp = b0 & 0x0F; }
    else if (b0 >= 0xF0 && b0 <= 0xF4) { len = 4; cp = b0 & 0x07; }
    else { ++i; return 0xFFFD; }
    if (s.size() - i < static_cast<std::size_t>(len)) { ++i; return 0xFFFD; }
    for (int k = 1; k < len; ++k) {
        auto b = static_cast<unsigned char>(s[i + k]);
        if ((b & 0xC0) != 0x80) { ++i; return 0xFFFD; }
        cp = (cp << 6) | (b & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
        ++i;
        return 0xFFFD;
    }
    i += static_cast<std::size_t>(len);
    return cp;
}

} // namespace

void appendJsonString(std::string& out, std::string_view s)
{
    out.push_back('"');
    std::size_t i = 0;
    while (i < s.size()) {
        std::size_t run = i;
        while (i < s.size()) {
            auto c = static_cast<unsigned char>(s[i]);
            if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80)
                break;
            ++i;
        }
        out.append(s.data() + run, i - run);
        if (i == s.size())
            break;
        auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            unsigned cp = decodeUtf8(s, i);
            if (cp >= 0x10000) {
                cp -= 0x10000;
                appendU16Escape(out, 0xD800 + (cp >> 10));
                appendU16Escape(out, 0xDC00 + (cp & 0x3FF));
            } else {
                appendU16Escape(out, cp);
            }
            continue;
        }
        ++i;
        switch (c) {
        case '"': out.append("\\\"", 2); break;
        case '\\': out.append("\\\\", 2); break;
        case '\b': out.append("\\b", 2); break;
        case '\f': out.append("\\f", 2); break;
        case '\n': out.append("\\n", 2); break;
        case '\r': out.append("\\r", 2); break;
        case '\t': out.append("\\t", 2); break;
        default: appendU16Escape(out, c); break;
        }
    }
    out.push_back('"');
}

void appendUint(std::string& out, std::uint64_t v)
{
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, static_cast<std::size_t>(res.ptr - buf));
}

void appendInt(std::string& out, std::int64_t v)
{
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, static_cast<std::size_t>(res.ptr - buf));
}

} // namespace dhtgate::json
