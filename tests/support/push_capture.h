// Test helper: reads the push data a gorush gateway or UnifiedPush endpoint (an HttpReceiver)
// received, and builds SUBSCRIBE bodies.
#pragma once

#include "support/http_receiver.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dhtgate::test {

/// One received push: the notification's members (gorush) and its data payload, flattened to
/// strings (numbers and booleans in their JSON text).
struct CapturedPush {
    std::string target;                      ///< request target, e.g. "/api/push"
    std::string token;                       ///< tokens[0] (gorush) or "" (UnifiedPush)
    std::string platform;                    ///< gorush "platform" number as text, "" for UnifiedPush
    std::string priority;                    ///< android.priority / priority / Urgency header
    std::map<std::string, std::string> data; ///< the payload the application receives

    bool has(const std::string& name) const { return data.count(name) != 0; }
    std::string get(const std::string& name) const {
        auto it = data.find(name);
        return it == data.end() ? std::string() : it->second;
    }
};

/// Parses one received request (gorush body, or a bare UnifiedPush payload); nullopt if malformed.
std::optional<CapturedPush> parsePush(const HttpReceiver::Received& r);
/// All pushes received so far (malformed ones skipped).
std::vector<CapturedPush> capturedPushes(const HttpReceiver& receiver);

/// Waits until a push matching `pred` arrived; returns it.
template <typename Pred>
std::optional<CapturedPush> waitForPush(HttpReceiver& receiver, Pred pred,
                                        std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (std::size_t n = 1;; ++n) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0 || !receiver.waitForRequests(n, left))
            return std::nullopt;
        const auto reqs = receiver.requests();
        if (reqs.size() < n)
            continue;
        if (auto p = parsePush(reqs[n - 1]); p && pred(*p))
            return p;
    }
}

/// {"client_id":..,"key":..,"platform":..,"session_id":..[,"refresh":true]}
std::string subscribeBody(const std::string& token, const std::string& platform, const std::string& clientId,
                          const std::string& sessionId, bool refresh = false);

} // namespace dhtgate::test
