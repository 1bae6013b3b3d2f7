#include "daemon/options.h"

#include <fmt/format.h>

#include <charconv>
#include <functional>

namespace dhtgate::daemon {
namespace {

template <typename T>
bool parseNumber(std::string_view text, T& out, T min, T max) {
    unsigned long long v = 0;
    const auto* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, v);
    if (text.empty() || ec != std::errc() || p != end || v < static_cast<unsigned long long>(min) ||
        v > static_cast<unsigned long long>(max))
        return false;
    out = static_cast<T>(v);
    return true;
}

struct OptionSpec {
    std::string_view name;    ///< without the leading "--"
    std::string_view argName; ///< empty: a flag without argument
    std::string_view help;
    std::function<bool(Options&, std::string_view, std::string&)> apply;
};

bool port(std::string_view v, std::uint16_t& out, std::string& err, bool allowZero) {
    if (parseNumber<std::uint16_t>(v, out, allowZero ? 0 : 1, 65535))
        return true;
    err = fmt::format("invalid port '{}'", v);
    return false;
}

template <typename T>
auto count(T ServerConfig::*member, T min, T max) {
    return [member, min, max](Options& o, std::string_view v, std::string& err) {
        if (parseNumber<T>(v, o.server.*member, min, max))
            return true;
        err = fmt::format("expected a number from {} to {}, got '{}'", min, max, v);
        return false;
    };
}

auto text(std::string ServerConfig::*member, bool allowEmpty = false) {
    return [member, allowEmpty](Options& o, std::string_view v, std::string& err) {
        if (v.empty() && !allowEmpty) {
            err = "empty value";
            return false;
        }
        o.server.*member = std::string(v);
        return true;
    };
}

const std::vector<OptionSpec>& specs() {
    static const std::vector<OptionSpec> table = {
        {"dht-port", "N", "UDP port of the DHT node (default 4222, 0 = any)",
         [](Options& o, std::string_view v, std::string& e) { return port(v, o.dht_port, e, true); }},
        {"bootstrap", "HOST:PORT", "DHT node to join (repeatable; default none: a standalone node)",
         [](Options& o, std::string_view v, std::string& e) {
             std::string h, p;
             if (!splitHostPort(v, h, p)) {
                 e = fmt::format("expected HOST:PORT, got '{}'", v);
                 return false;
             }
             o.bootstrap.emplace_back(v);
             return true;
         }},
        {"http-port", "N", "TCP port of the HTTP proxy (default 8080, 0 = any)",
         [](Options& o, std::string_view v, std::string& e) { return port(v, o.server.port, e, true); }},
        {"bind", "ADDR", "address the HTTP proxy listens on (default 127.0.0.1; :: or 0.0.0.0 for all)",
         [](Options& o, std::string_view v, std::string& e) {
             if (v.empty()) {
                 e = "empty address";
                 return false;
             }
             o.server.address = std::string(v);
             return true;
         }},
        {"threads", "N", "HTTP io threads (default 1; N > 1 runs a pool, for comparison)",
         count<unsigned>(&ServerConfig::threads, 1u, 256u)},
        {"dht-thread", "",
         "run the DHT node on its own thread (threaded DhtRunner) instead of driving it on the HTTP io "
         "thread (the default with --threads 1; --threads N > 1 always uses a DHT thread)",
         [](Options& o, std::string_view, std::string&) {
             o.dht_thread = true;
             return true;
         }},
        {"max-pipelined", "N", "pipelined requests handled per connection (default 16)",
         count<std::size_t>(&ServerConfig::max_pipelined_requests, 1, 1024)},
        {"concurrent-accepts", "N", "accept operations kept in flight (default 1)",
         count<std::size_t>(&ServerConfig::concurrent_accepts, 1, 1024)},
        {"get-coalescing-ms", "MS",
         "a GET of a key whose DHT get started less than MS ago and still runs joins it instead of "
         "starting another (default 1000; 0 disables)",
         [](Options& o, std::string_view v, std::string& e) {
             unsigned ms = 0;
             if (!parseNumber<unsigned>(v, ms, 0u, 600000u)) {
                 e = fmt::format("expected milliseconds from 0 to 600000, got '{}'", v);
                 return false;
             }
             o.server.get_coalescing_window = std::chrono::milliseconds(ms);
             return true;
         }},
        {"push-server", "URL",
         "push gateway (gorush) for android/ios pushes: HOST:PORT, a bare PORT (localhost) or "
         "http(s)://HOST:PORT (default none: only unifiedpush subscriptions are accepted)",
         text(&ServerConfig::push_server)},
        {"bundle-id", "ID", "iOS topic of pushes whose subscription gives none (default none)",
         text(&ServerConfig::bundle_id, true)},
        {"push-none-platform", "P",
         "how pushes for an empty/unknown platform are sent: ios (default, as the reference), android, or drop",
         [](Options& o, std::string_view v, std::string& e) {
             if (v == "ios" || v == "android" || v == "drop") {
                 o.server.push_none_platform = std::string(v);
                 return true;
             }
             e = fmt::format("expected ios, android or drop, got '{}'", v);
             return false;
         }},
        {"state-file", "PATH",
         "keep permanent puts and push subscriptions in PATH: saved after changes (within 1 s) and at exit, "
         "restored at start; an unusable file is moved aside to PATH.corrupt-<time> (default none)",
         text(&ServerConfig::state_file)},
        {"identity", "PATH",
         "proxy identity: PATH.pem (private key) and PATH.crt (certificate); used for HTTPS, "
         "sign/encrypt and node info (not given to the DHT node)",
         [](Options& o, std::string_view v, std::string& e) {
             if (v.empty()) {
                 e = "empty path";
                 return false;
             }
             o.identity = std::string(v);
             return true;
         }},
        {"identity-password", "PASSWORD",
         "password of an encrypted PATH.pem (or set DHTGATE_IDENTITY_PASSWORD; with --identity-create: "
         "encrypts the new key)",
         [](Options& o, std::string_view v, std::string&) {
             o.identity_password = std::string(v);
             return true;
         }},
        {"identity-create", "",
         "with --identity: create PATH.pem/PATH.crt (mode 0600, RSA 4096, valid for localhost, 127.0.0.1, ::1) "
         "if they do not exist",
         [](Options& o, std::string_view, std::string&) {
             o.identity_create = true;
             return true;
         }},
        {"https-port", "N", "also serve HTTPS on this TCP port (needs --identity; 0 = any)",
         [](Options& o, std::string_view v, std::string& e) {
             std::uint16_t p = 0;
             if (!port(v, p, e, true))
                 return false;
             o.server.https_port = p;
             return true;
         }},
        {"no-http", "", "serve HTTPS only (needs --https-port)",
         [](Options& o, std::string_view, std::string&) {
             o.server.serve_http = false;
             return true;
         }},
        {"log-level", "LEVEL", "trace, debug, info, warn, error or off (default info)",
         [](Options& o, std::string_view v, std::string& e) {
             if (parseLogLevel(v, o.log_level))
                 return true;
             e = fmt::format("unknown log level '{}'", v);
             return false;
         }},
        {"help", "", "show this help and exit",
         [](Options& o, std::string_view, std::string&) {
             o.help = true;
             return true;
         }},
    };
    return table;
}

} // namespace

bool splitHostPort(std::string_view text, std::string& host, std::string& port) {
    std::size_t colon;
    if (!text.empty() && text.front() == '[') {
        const auto close = text.find(']');
        if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
            return false;
        host = std::string(text.substr(1, close - 1));
        colon = close + 1;
    } else {
        colon = text.rfind(':');
        if (colon == std::string_view::npos || colon == 0)
            return false;
        host = std::string(text.substr(0, colon));
    }
    port = std::string(text.substr(colon + 1));
    std::uint16_t p;
    return !host.empty() && parseNumber<std::uint16_t>(port, p, 1, 65535);
}

std::optional<Options> parseOptions(int argc, const char* const* argv, std::string& error) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (arg.substr(0, 2) != "--") {
            error = fmt::format("unexpected argument '{}'", arg);
            return std::nullopt;
        }
        arg.remove_prefix(2);
        std::optional<std::string_view> inlineValue;
        if (const auto eq = arg.find('='); eq != std::string_view::npos) {
            inlineValue = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
        }
        const OptionSpec* spec = nullptr;
        for (const auto& s : specs())
            if (s.name == arg)
                spec = &s;
        if (!spec) {
            error = fmt::format("unknown option '--{}'", arg);
            return std::nullopt;
        }
        std::string_view value;
        if (!spec->argName.empty()) {
            if (inlineValue)
                value = *inlineValue;
            else if (i + 1 < argc)
                value = argv[++i];
            else {
                error = fmt::format("option '--{}' needs a value ({})", arg, spec->argName);
                return std::nullopt;
            }
        } else if (inlineValue) {
            error = fmt::format("option '--{}' takes no value", arg);
            return std::nullopt;
        }
        std::string why;
        if (!spec->apply(o, value, why)) {
            error = fmt::format("--{}: {}", arg, why);
            return std::nullopt;
        }
    }
    return o;
}

std::string usage(std::string_view program) {
    std::string out = fmt::format("Usage: {} [OPTIONS]\n\n"
                                  "Runs a DHT node and an HTTP proxy that OpenDHT 2.x proxy clients can use.\n\nOptions:\n",
                                  program);
    for (const auto& s : specs()) {
        const auto left = s.argName.empty() ? fmt::format("--{}", s.name) : fmt::format("--{} {}", s.name, s.argName);
        out += fmt::format("  {:<28} {}\n", left, s.help);
    }
    return out;
}

} // namespace dhtgate::daemon
