// URL parsing for the HTTP client (spec §10.1).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace dhtgate::http::detail {

/// A parsed absolute http(s) URL.
///
/// Accepted forms: `host`, `host:port`, `http://host[:port][/path][?query][#fragment]`,
/// `https://...`, bracketed IPv6 literals (`[::1]:8080`) and, without scheme or port, a bare
/// IPv6 literal (`2001:db8::1`). The scheme is case-insensitive and defaults to http; the
/// port defaults to 80/443. `user[:password]@` is skipped. The fragment is dropped.
struct Url {
    std::string scheme {"http"};  ///< "http" or "https" (lower case)
    std::string host;             ///< host name or IP literal, without brackets
    std::uint16_t port {80};
    std::string target {"/"};     ///< path plus "?query"; "/" when the URL has no path
    std::string query;            ///< without the '?'
    bool ipv6Literal {false};
    bool explicitPort {false};

    bool tls() const { return scheme == "https"; }
    bool isIpLiteral() const;
    /// Value of the Host header: host (bracketed for IPv6) plus ":port" unless default.
    std::string hostHeader() const;
    /// Pool key: scheme://host:port.
    std::string authority() const;
};

/// Parses `text`; returns errc::invalid_url (and leaves `out` unspecified) on failure:
/// empty input, unknown scheme, empty host, bad port, bad characters, unclosed bracket.
std::error_code parseUrl(std::string_view text, Url& out);

} // namespace dhtgate::http::detail
