// Value <-> JSON codec of the proxy wire protocol (spec §4.1), and request-body parsing.
//
// Output is compact JSON with members in alphabetical order, exactly as the reference emits it,
// written into a caller-provided std::string so hot paths can reuse buffers.
// Input parsing is strict: bad input is reported with an HTTP status (400 or 413) and a short
// reason, never with an exception.
#pragma once

#include <opendht/infohash.h>
#include <opendht/value.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace dhtgate::codec {

/// Key addressing (spec §2): exactly 40 hex chars (either case) -> that hash; otherwise SHA-1 of
/// the string (also for the all-zero hash, as the reference does). Rejected (returns false,
/// fills `reason`): empty, control or non-printable bytes (< 0x20, 0x7f, >= 0x80), more than 40
/// hex characters, and 40 hex characters followed by anything else. The reference silently
/// ignores what follows the first 40 hex characters; we reject it as ambiguous instead (clients
/// always send exactly 40 lowercase hex characters), so a typo cannot address the wrong key.
bool parseKey(std::string_view param, dht::InfoHash& out, std::string& reason);

/// Appends the JSON object of `v` (no trailing newline). `expired` adds "expired":true.
void appendValueJson(std::string& out, const dht::Value& v, bool expired = false);
std::string valueJson(const dht::Value& v, bool expired = false);

/// A push session as given in a SUBSCRIBE body or a permanent put's object form (spec §3.8, §6.1).
struct PushRequest {
    std::string key;        ///< device token (UnifiedPush: endpoint URL); required for subscribe
    std::string client_id;
    std::string session_id;
    std::string platform;   ///< "android" | "ios" | "unifiedpush" | anything else = none
    std::string topic;
    bool refresh {false};
};

struct ParseError {
    int status {400};     ///< HTTP status to answer
    std::string reason;   ///< short human-readable reason, goes into {"err":"..."}
};

/// A parsed put body (spec §3.5, §6.1).
struct PutRequest {
    std::shared_ptr<dht::Value> value;   ///< id 0 when absent/invalid
    bool permanent {false};              ///< true whenever the "permanent" member is present
    std::optional<PushRequest> push;     ///< object form of "permanent"
};

/// Parses a POST body into a value. `max_value_size` bounds the value's DHT size (decoded data +
/// cypher + signature + utype, as dht::Value::size() counts it) -> 413 "Value too large".
/// Empty body -> 400 "Missing parameters"; malformed JSON -> 400 "Incorrect JSON".
/// Non-object JSON, wrongly typed members, out-of-range numbers, invalid (or non-canonical)
/// base64, bad owner key, bad `to`, a `sig` without `owner` -> 400. A member set to null counts
/// as absent. `id`: decimal string or integer; anything else (or negative) gives id 0.
/// A value with an owner and a signature that does not verify -> 400 "Invalid signature".
/// "permanent" present (any value, even false) -> permanent; its object form also gives `push`.
std::optional<PutRequest> parsePut(std::string_view body, std::size_t max_value_size, ParseError& err);

/// Parses a SUBSCRIBE / UNSUBSCRIBE / pingPush body. Empty, malformed or non-object body -> 400
/// "Incorrect JSON"; a member of the wrong type -> 400; missing or empty "key" -> 400 "No token".
std::optional<PushRequest> parsePushRequest(std::string_view body, ParseError& err);

/// Parses one value JSON object as a proxy emits it (reference or ours; a trailing newline is
/// fine), for the client side. Tolerates the trailing "\u0000" of `owner`; ignores unknown
/// members (e.g. 4.x "pt"); sets `expired` from "expired":true. Signatures are not verified.
/// Returns nullptr and fills `err` (status 400) on malformed input.
std::shared_ptr<dht::Value> parseValueLine(std::string_view line, bool& expired, ParseError& err);

} // namespace dhtgate::codec
