#include "support/test_proxy.h"

#include "support/raw_http_client.h"

#include <cstdlib>
#include <stdexcept>

namespace dhtgate::test {

ServerConfig TestProxy::testConfig() {
    ServerConfig c;
    c.address = "127.0.0.1";
    c.port = 0;
    c.read_timeout = std::chrono::seconds(10);
    c.write_timeout = std::chrono::seconds(10);
    c.handle_timeout = std::chrono::seconds(10);
    return c;
}

namespace {
/// DHTGATE_TEST_LOG=debug (or trace, info...) shows the server's log on stderr.
Logger testLogger(Logger log) {
    LogLevel level;
    if (const char* env = std::getenv("DHTGATE_TEST_LOG"); env && parseLogLevel(env, level))
        return Logger::toStderr(level);
    return log;
}
} // namespace

TestProxy::TestProxy(ServerConfig config, Logger log)
    : server_(std::make_unique<ProxyServer>(node_.runner(), std::move(config), testLogger(std::move(log)))) {
    if (auto ec = server_->start())
        throw std::runtime_error("proxy server failed to start: " + ec.message());
}

TestProxy::~TestProxy() {
    server_->stop();
    node_.stop();
}

std::optional<long long> TestProxy::statsNumber(const std::string& member) const {
    auto r = RawHttpClient::exchange(port(), RawHttpClient::request("GET", "/node/stats"));
    if (!r || r->status != 200)
        return std::nullopt;
    return jsonNumber(r->body, member);
}

std::optional<long long> jsonNumber(const std::string& json, const std::string& name) {
    const auto key = "\"" + name + "\":";
    const auto pos = json.find(key);
    if (pos == std::string::npos)
        return std::nullopt;
    try {
        return std::stoll(json.substr(pos + key.size()));
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::optional<std::string> jsonString(const std::string& json, const std::string& name) {
    const auto key = "\"" + name + "\":\"";
    const auto pos = json.find(key);
    if (pos == std::string::npos)
        return std::nullopt;
    const auto start = pos + key.size();
    const auto end = json.find('"', start);
    if (end == std::string::npos)
        return std::nullopt;
    return json.substr(start, end - start);
}

} // namespace dhtgate::test
