#include "client/url.h"

#include "dhtgate/error.h"

#include <asio/ip/address.hpp>

#include <algorithm>
#include <cctype>

namespace dhtgate::http::detail {
namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

bool validHostChar(unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '%' || c == '~';
}

bool parsePort(std::string_view s, std::uint16_t& port) {
    if (s.empty() || s.size() > 5)
        return false;
    unsigned v = 0;
    for (char c : s) {
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + unsigned(c - '0');
    }
    if (v == 0 || v > 65535)
        return false;
    port = static_cast<std::uint16_t>(v);
    return true;
}

bool isIpv6(const std::string& s) {
    std::error_code ec;
    auto a = asio::ip::make_address(s, ec);
    return !ec && a.is_v6();
}

} // namespace

bool Url::isIpLiteral() const {
    std::error_code ec;
    asio::ip::make_address(host, ec);
    return !ec;
}

std::string Url::hostHeader() const {
    std::string h = ipv6Literal ? "[" + host + "]" : host;
    if (port != (tls() ? 443 : 80))
        h += ":" + std::to_string(port);
    return h;
}

std::string Url::authority() const {
    return scheme + "://" + (ipv6Literal ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::error_code parseUrl(std::string_view text, Url& out) {
    const auto bad = make_error_code(errc::invalid_url);
    out = Url {};
    // Leading/trailing whitespace is a typo, not part of the URL.
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
        text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.remove_suffix(1);
    if (text.empty())
        return bad;
    for (unsigned char c : text)
        if (c <= 0x20 || c >= 0x7f)
            return bad;

    if (auto hash = text.find('#'); hash != std::string_view::npos)
        text = text.substr(0, hash);

    auto sep = text.find("://");
    if (sep != std::string_view::npos) {
        out.scheme = lower(text.substr(0, sep));
        if (out.scheme != "http" && out.scheme != "https")
            return bad;
        text.remove_prefix(sep + 3);
    }
    out.port = out.tls() ? 443 : 80;

    auto targetStart = text.find_first_of("/?");
    std::string_view authority = text.substr(0, targetStart);
    std::string_view target = targetStart == std::string_view::npos ? std::string_view {} : text.substr(targetStart);

    if (auto at = authority.rfind('@'); at != std::string_view::npos)
        authority.remove_prefix(at + 1);
    if (authority.empty())
        return bad;

    std::string_view portText;
    if (authority.front() == '[') {
        auto close = authority.find(']');
        if (close == std::string_view::npos)
            return bad;
        out.host = std::string(authority.substr(1, close - 1));
        if (!isIpv6(out.host))
            return bad;
        out.ipv6Literal = true;
        auto rest = authority.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':')
                return bad;
            portText = rest.substr(1);
            if (portText.empty())
                return bad;
        }
    } else if (std::count(authority.begin(), authority.end(), ':') > 1) {
        // A bare IPv6 literal: no port possible.
        out.host = std::string(authority);
        if (!isIpv6(out.host))
            return bad;
        out.ipv6Literal = true;
    } else {
        auto colon = authority.find(':');
        out.host = std::string(authority.substr(0, colon));
        if (colon != std::string_view::npos) {
            portText = authority.substr(colon + 1);
            if (portText.empty())
                return bad;
        }
        if (out.host.empty() || !std::all_of(out.host.begin(), out.host.end(), validHostChar))
            return bad;
        out.host = lower(out.host);
    }
    if (!portText.empty()) {
        if (!parsePort(portText, out.port))
            return bad;
        out.explicitPort = true;
    }

    if (target.empty()) {
        out.target = "/";
    } else if (target.front() == '?') {
        out.target = "/" + std::string(target);
    } else {
        out.target = std::string(target);
    }
    if (auto q = out.target.find('?'); q != std::string::npos)
        out.query = out.target.substr(q + 1);
    return {};
}

} // namespace dhtgate::http::detail
