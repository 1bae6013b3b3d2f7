// Conversions between the steady-clock deadlines of the server's timers and the wall-clock Unix
// seconds of the state file (spec §8), which stay meaningful across restarts.
#pragma once

#include <chrono>
#include <cstdint>

namespace dhtgate::server {

/// Wall-clock Unix seconds of a steady-clock deadline, rounded up (a restart never shortens it).
inline std::int64_t toUnixSeconds(std::chrono::steady_clock::time_point t) {
    const auto left = t - std::chrono::steady_clock::now();
    const auto at = std::chrono::system_clock::now() + std::chrono::duration_cast<std::chrono::system_clock::duration>(left);
    return std::chrono::duration_cast<std::chrono::seconds>(at.time_since_epoch() + std::chrono::milliseconds(999)).count();
}

/// Time left until wall-clock Unix second `expiry` (negative if past).
inline std::chrono::steady_clock::duration untilUnixSeconds(std::int64_t expiry) {
    const auto at = std::chrono::system_clock::time_point(std::chrono::seconds(expiry));
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(at - std::chrono::system_clock::now());
}

inline std::int64_t unixMillis() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace dhtgate::server
