#include "codec/json.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace dhtgate::json {

bool Value::getUint64(std::uint64_t& out) const
{
    if (type_ != Type::Number || !integer_ || !exact_)
        return false;
    if (negative_ && magnitude_ != 0)
        return false;
    out = magnitude_;
    return true;
}

bool Value::getInt64(std::int64_t& out) const
{
    if (type_ != Type::Number || !integer_ || !exact_)
        return false;
    constexpr auto maxPos = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (negative_) {
        if (magnitude_ > maxPos + 1)
            return false;
        // Two's-complement negation through unsigned arithmetic avoids overflow on INT64_MIN.
        out = static_cast<std::int64_t>(~magnitude_ + 1);
        return true;
    }
    if (magnitude_ > maxPos)
        return false;
    out = static_cast<std::int64_t>(magnitude_);
    return true;
}

const Value* Value::find(std::string_view name) const
{
    for (auto it = members_.rbegin(); it != members_.rend(); ++it)
        if (it->name == name)
            return &it->value;
    return nullptr;
}

class Parser {
public:
    explicit Parser(std::string_view text) : p_(text.data()), begin_(text.data()), end_(text.data() + text.size()) {}

    bool run(Value& out, Error& err)
    {
        skipSpace();
        bool ok = parseValue(out, 0);
        if (ok) {
            skipSpace();
            if (p_ != end_)
                ok = fail("trailing characters after the JSON value");
        }
        if (!ok) {
            err.offset = static_cast<std::size_t>(p_ - begin_);
            err.reason = reason_;
        }
        return ok;
    }

private:
    const char* p_;
    const char* const begin_;
    const char* const end_;
    const char* reason_ {""};

    bool fail(const char* why)
    {
        reason_ = why;
        return false;
    }

    void skipSpace()
    {
        while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r'))
            ++p_;
    }

    bool literal(std::string_view word)
    {
        if (static_cast<std::size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word)
            return fail("invalid literal");
        p_ += word.size();
        return true;
    }

    bool parseValue(Value& v, unsigned depth)
    {
        if (p_ == end_)
            return fail("unexpected end of input");
        switch (*p_) {
        case '{': return parseObject(v, depth + 1);
        case '[': return parseArray(v, depth + 1);
        case '"': v.type_ = Type::String; return parseString(v.string_);
        case 't': v.type_ = Type::Bool; v.bool_ = true; return literal("true");
        case 'f': v.type_ = Type::Bool; v.bool_ = false; return literal("false");
        case 'n': v.type_ = Type::Null; return literal("null");
        default:
            if (*p_ == '-' || (*p_ >= '0' && *p_ <= '9'))
                return parseNumber(v);
            return fail("unexpected character");
        }
    }

    bool parseObject(Value& v, unsigned depth)
    {
        if (depth > kMaxDepth)
            return fail("nesting too deep");
        v.type_ = Type::Object;
        ++p_;
        skipSpace();
        if (p_ != end_ && *p_ == '}') {
            ++p_;
            return true;
        }
        for (;;) {
            if (p_ == end_ || *p_ != '"')
                return fail("expected a member name");
            Member& m = v.members_.emplace_back();
            if (!parseString(m.name))
                return false;
            skipSpace();
            if (p_ == end_ || *p_ != ':')
                return fail("expected ':'");
            ++p_;
            skipSpace();
            if (!parseValue(m.value, depth))
                return false;
            skipSpace();
            if (p_ == end_)
                return fail("unterminated object");
            if (*p_ == '}') {
                ++p_;
                return true;
            }
            if (*p_ != ',')
                return fail("expected ',' or '}'");
            ++p_;
            skipSpace();
        }
    }

    bool parseArray(Value& v, unsigned depth)
    {
        if (depth > kMaxDepth)
            return fail("nesting too deep");
        v.type_ = Type::Array;
        ++p_;
        skipSpace();
        if (p_ != end_ && *p_ == ']') {
            ++p_;
            return true;
        }
        for (;;) {
            if (!parseValue(v.items_.emplace_back(), depth))
                return false;
            skipSpace();
            if (p_ == end_)
                return fail("unterminated array");
            if (*p_ == ']') {
                ++p_;
                return true;
            }
            if (*p_ != ',')
                return fail("expected ',' or ']'");
            ++p_;
            skipSpace();
        }
    }

    bool parseNumber(Value& v)
    {
        const char* start = p_;
        v.type_ = Type::Number;
        v.negative_ = (*p_ == '-');
        if (v.negative_)
            ++p_;
        if (p_ == end_ || *p_ < '0' || *p_ > '9')
            return fail("invalid number");
        const char* intStart = p_;
        if (*p_ == '0') {
            ++p_;
            if (p_ != end_ && *p_ >= '0' && *p_ <= '9')
                return fail("leading zero in number");
        } else {
            while (p_ != end_ && *p_ >= '0' && *p_ <= '9')
                ++p_;
        }
        const char* intEnd = p_;
        bool integer = true;
        if (p_ != end_ && *p_ == '.') {
            integer = false;
            ++p_;
            if (p_ == end_ || *p_ < '0' || *p_ > '9')
                return fail("invalid number fraction");
            while (p_ != end_ && *p_ >= '0' && *p_ <= '9')
                ++p_;
        }
        if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
            integer = false;
            ++p_;
            if (p_ != end_ && (*p_ == '+' || *p_ == '-'))
                ++p_;
            if (p_ == end_ || *p_ < '0' || *p_ > '9')
                return fail("invalid number exponent");
            while (p_ != end_ && *p_ >= '0' && *p_ <= '9')
                ++p_;
        }
        v.integer_ = integer;
        if (integer) {
            auto [ptr, ec] = std::from_chars(intStart, intEnd, v.magnitude_);
            v.exact_ = (ec == std::errc() && ptr == intEnd);
        }
        auto [ptr, ec] = std::from_chars(start, p_, v.double_);
        if (ec == std::errc::result_out_of_range) {
            // Out of double range: keep the sign, as a saturated value.
            v.double_ = v.negative_ ? -std::numeric_limits<double>::infinity()
                                    : std::numeric_limits<double>::infinity();
        } else if (ec != std::errc() || ptr != p_) {
            return fail("invalid number");
        }
        return true;
    }

    static int hexDigit(char c)
    {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }

    bool readHex4(unsigned& cp)
    {
        if (end_ - p_ < 4)
            return fail("truncated \\u escape");
        cp = 0;
        for (int i = 0; i < 4; ++i) {
            int d = hexDigit(p_[i]);
            if (d < 0)
                return fail("invalid \\u escape");
            cp = (cp << 4) | static_cast<unsigned>(d);
        }
        p_ += 4;
        return true;
    }

    static void appendUtf8(std::string& s, unsigned cp)
    {
        if (cp < 0x80) {
            s.push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
            s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
            s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
            s.push_back(static_cast<char>(0xE0 | (cp >> 12)));
            s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else {
            s.push_back(static_cast<char>(0xF0 | (cp >> 18)));
            s.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
            s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
    }

    bool parseEscape(std::string& s)
    {
        if (p_ == end_)
            return fail("unterminated string");
        char c = *p_++;
        switch (c) {
        case '"': s.push_back('"'); return true;
        case '\\': s.push_back('\\'); return true;
        case '/': s.push_back('/'); return true;
        case 'b': s.push_back('\b'); return true;
        case 'f': s.push_back('\f'); return true;
        case 'n': s.push_back('\n'); return true;
        case 'r': s.push_back('\r'); return true;
        case 't': s.push_back('\t'); return true;
        case 'u': break;
        default: return fail("invalid escape");
        }
        unsigned cp;
        if (!readHex4(cp))
            return false;
        if (cp >= 0xDC00 && cp <= 0xDFFF)
            return fail("lone low surrogate");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            unsigned lo;
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u')
                return fail("lone high surrogate");
            p_ += 2;
            if (!readHex4(lo))
                return false;
            if (lo < 0xDC00 || lo > 0xDFFF)
                return fail("invalid surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        appendUtf8(s, cp);
        return true;
    }

    // Validates one multi-byte UTF-8 sequence starting at p_ (lead byte >= 0x80) and copies it.
    bool copyUtf8(std::string& s)
    {
        auto b0 = static_cast<unsigned char>(*p_);
        int len;
        unsigned cp;
        if (b0 >= 0xC2 && b0 <= 0xDF) { len = 2; cp = b0 & 0x1F; }
        else if (b0 >= 0xE0 && b0 <= 0xEF) { len = 3; cp = b0 & 0x0F; }
        else if (b0 >= 0xF0 && b0 <= 0xF4) { len = 4; cp = b0 & 0x07; }
        else return fail("invalid UTF-8");
        if (end_ - p_ < len)
            return fail("invalid UTF-8");
        for (int i = 1; i < len; ++i) {
            auto b = static_cast<unsigned char>(p_[i]);
            if ((b & 0xC0) != 0x80)
                return fail("invalid UTF-8");
            cp = (cp << 6) | (b & 0x3F);
        }
        if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
            return fail("invalid UTF-8");
        s.append(p_, static_cast<std::size_t>(len));
        p_ += len;
        return true;
    }

    bool parseString(std::string& s)
    {
        ++p_; // opening quote
        for (;;) {
            // Copy the run of plain ASCII characters at once.
            const char* run = p_;
            while (p_ != end_) {
                auto c = static_cast<unsigned char>(*p_);
                if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80)
                    break;
                ++p_;
            }
            s.append(run, static_cast<std::size_t>(p_ - run));
            if (p_ == end_)
                return fail("unterminated string");
            auto c = static_cast<unsigned char>(*p_);
            if (c == '"') {
                ++p_;
                return true;
            }
            if (c == '\\') {
                ++p_;
                if (!parseEscape(s))
                    return false;
            } else if (c < 0x20) {
                return fail("control character in string");
            } else if (!copyUtf8(s)) {
                return false;
            }
        }
    }
};

bool parse(std::string_view text, Value& out, Error& err)
{
    out = Value();
    return Parser(text).run(out, err);
}

} // namespace dhtgate::json
