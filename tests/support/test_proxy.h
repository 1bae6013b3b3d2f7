// Test helper: a DHT node on loopback with a dhtgate ProxyServer on 127.0.0.1, port 0.
//
//   TestProxy p;                        // default config, or TestProxy p(config)
//   RawHttpClient c(p.port());
//   p.statsNumber("listenCount")        // reads GET /node/stats
#pragma once

#include "dhtgate/proxy_server.h"
#include "support/dht_node.h"

#include <memory>
#include <optional>
#include <string>

namespace dhtgate::test {

class TestProxy {
public:
    explicit TestProxy(ServerConfig config = testConfig(), Logger log = {});
    ~TestProxy();

    /// Loopback, port 0, short timeouts suited to tests.
    static ServerConfig testConfig();

    TestDhtNode& node() { return node_; }
    ProxyServer& server() { return *server_; }
    std::uint16_t port() const { return server_->port(); }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }

    /// A numeric member of GET /node/stats (nullopt if the request or the member fails).
    std::optional<long long> statsNumber(const std::string& member) const;

private:
    TestDhtNode node_;
    std::unique_ptr<ProxyServer> server_;
};

/// Extracts "name":<number> from a flat JSON text (enough for stats and node info).
std::optional<long long> jsonNumber(const std::string& json, const std::string& name);
/// Extracts "name":"<string>" from a JSON text.
std::optional<std::string> jsonString(const std::string& json, const std::string& name);

} // namespace dhtgate::test
