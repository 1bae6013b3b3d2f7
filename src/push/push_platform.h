// dhtgate: the push platform of a subscription or a permanent put (spec §3.8, §6.1, §8).
//
// The numeric values are those of the reference server's state file ("t" in §8), so they
// must never change.
#pragma once

#include <string_view>

namespace dhtgate::push {

enum class Platform : int {
    none = 0,        ///< empty or unknown "platform": sent through gorush as iOS (spec §7.3, §15 item 17)
    android = 1,
    ios = 2,
    unifiedpush = 3, ///< the token is the endpoint URL (spec §7.4)
};

/// "android", "ios", "unifiedpush"; anything else (including "") is Platform::none.
inline Platform parsePlatform(std::string_view text) {
    if (text == "android")
        return Platform::android;
    if (text == "ios")
        return Platform::ios;
    if (text == "unifiedpush")
        return Platform::unifiedpush;
    return Platform::none;
}

/// The inverse of parsePlatform; Platform::none gives "".
inline std::string_view toString(Platform platform) {
    switch (platform) {
    case Platform::android: return "android";
    case Platform::ios: return "ios";
    case Platform::unifiedpush: return "unifiedpush";
    case Platform::none: break;
    }
    return "";
}

/// True for the values a state file may carry in "t".
inline bool isKnownPlatformCode(long long code) { return code >= 0 && code <= 3; }

} // namespace dhtgate::push
