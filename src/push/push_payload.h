// dhtgate: pure builders of push notifications (spec §7.2-7.4). No IO, no clock: the send time
// is an input, so every byte is testable.
//
// Two steps: a *data* payload (what the device's application receives, §7.2), then a *request*
// that carries it to a gorush gateway (§7.3) or to a UnifiedPush endpoint (§7.4).
// All JSON is compact with members in sorted order, as the reference (jsoncpp) writes it.
#pragma once

#include "push/push_platform.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dhtgate::push {

enum class Priority { high, normal };

/// The data payload of one push (§7.2): a compact JSON object.
struct Data {
    enum class Kind { value, timeout, ping };
    std::string json;
    Priority priority {Priority::normal};
    Kind kind {Kind::value};
};

/// One value of a DHT listen event.
struct EventValue {
    std::uint64_t id {0};
    unsigned priority {0};   ///< dht::Value::priority: 0 is the highest
    std::string push_type;   ///< "" when the value has none (always with libopendht 2.4)
};

/// One DHT listen event for one push listener.
struct ValueEvent {
    std::string key;        ///< 40-hex InfoHash
    std::string client_id;  ///< sent as "to"
    std::string session_id; ///< sent as "s"
    std::int64_t time_ms {0}; ///< sent as "t": Unix milliseconds
    std::vector<EventValue> values;
    bool expired {false};
};

/// Value notification: {"exp"?,"ids"?,"key","pt"?,"s","t","to"}.
/// With `expired`, "exp" lists the ids of ALL expired values (comma-separated; every 2.x+
/// client splits it on commas), unlike the reference which sends it for exactly one value.
/// `with_ids` adds "ids" (3.1.10+); false reproduces the 2.4.12 payload byte for byte.
/// "pt" appears only if a value has a push type. Priority: high when not expired and some value
/// has priority 0, else normal.
Data valueNotification(const ValueEvent& event, bool with_ids = true);

/// "About to expire" notice of a push listener: {"s","timeout":key,"to"}, normal priority.
Data listenerTimeout(std::string_view key, std::string_view client_id, std::string_view session_id);

/// "About to expire" notice of a permanent put: {"s","timeout":key,"to","vid"}, normal priority.
Data putTimeout(std::string_view key, std::string_view client_id, std::uint64_t value_id, std::string_view session_id);

/// Ping answer (pingPush, §3.10): {"pong":true,"to":client_id}, high priority.
Data ping(std::string_view client_id);

/// What a sender puts on the wire.
struct Request {
    bool to_gateway {true}; ///< true: `target` is a path on the configured gorush server;
                            ///< false: `target` is the absolute endpoint URL (UnifiedPush)
    std::string target;
    std::string method {"POST"};
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
};

/// What to do with a push for Platform::none (empty or unknown "platform", §15 item 17).
enum class NoneFallback {
    ios,     ///< the reference behaviour, and what a 2.x client configured without a platform expects
    android,
    drop,    ///< send nothing
};

/// "ios", "android", "drop"; false (and `out` untouched) on anything else.
bool parseNoneFallback(std::string_view text, NoneFallback& out);

struct GorushOptions {
    std::string bundle_id;               ///< iOS topic when the subscription gave none
    NoneFallback none_as {NoneFallback::ios};
    bool android_legacy {false};         ///< 2.4.12 android form ("priority"/"time_to_live")
                                         ///< instead of 3.3.0+ ("android":{"priority","ttl"})
    std::int64_t ttl_seconds {86400};    ///< android ttl, iOS expiration = now + ttl
};

/// gorush `POST /api/push` body for one token. `now_seconds` is Unix time (for iOS "expiration").
/// Returns nothing for Platform::unifiedpush (not a gorush platform) and for a dropped none.
std::optional<Request> gorushRequest(const Data& data, std::string_view token, Platform platform, std::string_view topic,
                                     std::int64_t now_seconds, const GorushOptions& options = {});

/// UnifiedPush request: POST to the endpoint URL itself (its port kept, §7.4 4.1.0+), headers
/// TTL, Urgency and Content-Type, body the bare data payload (not encrypted: RFC 8291 is not
/// implemented, see docs/push.md).
Request unifiedPushRequest(const Data& data, std::string_view endpoint_url, std::int64_t ttl_seconds = 86400);

/// Dispatches on the platform: UnifiedPush for Platform::unifiedpush, gorush otherwise.
std::optional<Request> buildRequest(const Data& data, std::string_view token, Platform platform, std::string_view topic,
                                    std::int64_t now_seconds, const GorushOptions& options = {});

} // namespace dhtgate::push
