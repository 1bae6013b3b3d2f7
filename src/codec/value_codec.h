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

/// Key addressing (spec §2): 40+ chars whose first 40 are hex -> that hash; otherwise SHA-1 of
/// the string. Rejected (returns false, fills `reason`): empty, control bytes or non-printable
/// bytes, or more than 40 hex characters (ambiguous).
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

/// Parses a POST body into a value. `max_value_size` bounds the decoded data/cypher (413).
/// Non-object JSON, wrongly typed members, invalid base64, bad owner key -> 400.
/// A value with an owner and a signature that does not verify -> 400.
std::optional<PutRequest> parsePut(std::string_view body, std::size_t max_value_size, ParseError& err);

/// Parses a SUBSCRIBE / UNSUBSCRIBE / pingPush body. Missing or empty "key" -> 400 "No token".
std::optional<PushRequest> parsePushRequest(std::string_view body, ParseError& err);

} // namespace dhtgate::codec
