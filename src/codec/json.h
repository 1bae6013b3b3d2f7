// A small strict JSON (RFC 8259) reader with a light DOM, and allocation-free writer helpers.
//
// Reader: used for request bodies (puts, subscribes) and for the value lines a client reads back.
// It accepts exactly one JSON value surrounded by optional whitespace: comments, trailing garbage,
// invalid UTF-8, lone surrogates, unescaped control characters, leading zeros, and nesting deeper
// than `kMaxDepth` are rejected. It never throws; errors come back as a position and a reason.
//
// Writer: appendJsonString / appendUint / appendInt append into a caller's std::string, for output
// paths that build JSON directly (no DOM on the way out).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dhtgate::json {

enum class Type : std::uint8_t { Null, Bool, Number, String, Array, Object };

struct Member;

/// One JSON value. Objects keep their members in document order (duplicates included).
class Value {
public:
    Value() = default;

    Type type() const { return type_; }
    bool isNull() const { return type_ == Type::Null; }
    bool isBool() const { return type_ == Type::Bool; }
    bool isNumber() const { return type_ == Type::Number; }
    bool isString() const { return type_ == Type::String; }
    bool isArray() const { return type_ == Type::Array; }
    bool isObject() const { return type_ == Type::Object; }

    bool asBool() const { return bool_; }
    /// The number as a double (also for integers; may round above 2^53).
    double asDouble() const { return double_; }
    /// True when the number was written as an integer (no fraction, no exponent).
    bool isInteger() const { return type_ == Type::Number && integer_; }
    /// Exact reads: false unless the number is an integer written without fraction/exponent
    /// and fits the target type.
    bool getUint64(std::uint64_t& out) const;
    bool getInt64(std::int64_t& out) const;

    /// Decoded string contents (UTF-8, may contain NUL bytes from \u0000).
    const std::string& asString() const { return string_; }

    const std::vector<Value>& items() const { return items_; }
    const std::vector<Member>& members() const { return members_; }

    /// The value of the last member called `name` (JSON parsers conventionally let a later
    /// duplicate win), or nullptr. Non-objects have no members.
    const Value* find(std::string_view name) const;

private:
    friend class Parser;
    Type type_ {Type::Null};
    bool bool_ {false};
    bool integer_ {false};   ///< written as an integer
    bool negative_ {false};  ///< integer with a leading '-'
    bool exact_ {false};     ///< magnitude_ holds the exact absolute value (fits 64 bits)
    std::uint64_t magnitude_ {0};
    double double_ {0};
    std::string string_;
    std::vector<Value> items_;
    std::vector<Member> members_;
};

struct Member {
    std::string name;
    Value value;
};

struct Error {
    std::size_t offset {0};  ///< byte offset in the input where parsing stopped
    std::string reason;
};

constexpr unsigned kMaxDepth = 64;

/// Parses `text`. Returns false and fills `err` on any violation; `out` is then unspecified.
bool parse(std::string_view text, Value& out, Error& err);

/// Appends `s` as a JSON string literal (with the quotes). Escapes `"`, `\`, control characters
/// (short forms \b \f \n \r \t, else \u00XX) and every non-ASCII code point as \uXXXX (surrogate
/// pairs above U+FFFF), like the reference encoder; invalid UTF-8 bytes become \ufffd.
void appendJsonString(std::string& out, std::string_view s);

/// Appends the decimal form of an integer.
void appendUint(std::string& out, std::uint64_t v);
void appendInt(std::string& out, std::int64_t v);

} // namespace dhtgate::json
