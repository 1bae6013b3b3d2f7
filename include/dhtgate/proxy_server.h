// dhtgate: the embeddable HTTP proxy server (OpenDHT proxy protocol, wire-compatible with 2.x clients).
//
// A ProxyServer serves the proxy routes for one DhtRunner, which the caller owns and runs.
//
// Thread contract
//  * All server state lives on one io_context thread (or, with `threads > 1`, behind one strand of
//    the server's own pool). DhtRunner callbacks arrive on the DHT thread and are posted there;
//    with a runner driven on the same io_context (dhtgate::DhtDriver, ServerConfig::dht_kick)
//    they already run on the io thread and the posts cost no thread hand-off.
//  * start(), stop() and the destructor may be called from any thread (the server never runs user
//    code on its own io threads), with these rules for a caller-owned io_context: call start(io)
//    either before io.run() starts or from the thread running io; stop() from the thread running io
//    returns without waiting for the final stream chunks to be written (they are written as io
//    keeps running); stop() from another thread waits for them (up to min(write_timeout, 5 s); if io
//    is not running at all, it shuts down from the calling thread after that delay).
//  * port() and running() may be called from any thread after start() returned.
//  * The DhtRunner must outlive the ProxyServer. A caller-owned io_context must outlive it too.
#pragma once

#include "dhtgate/config.h"
#include "dhtgate/logger.h"

#include <cstdint>
#include <memory>
#include <string>
#include <system_error>

namespace dht {
class DhtRunner;
}
namespace asio {
class io_context;
}

namespace dhtgate {

/// The dhtgate version, reported as "version" in node info.
const char* versionString();

class ProxyServer {
public:
    /// `dht` must be running (or be run before requests arrive). Nothing starts before start().
    ProxyServer(std::shared_ptr<dht::DhtRunner> dht, ServerConfig config, Logger logger = {});
    /// Calls stop().
    ~ProxyServer();
    ProxyServer(const ProxyServer&) = delete;
    ProxyServer& operator=(const ProxyServer&) = delete;

    /// Binds and starts serving on `config.threads` io threads owned by the server.
    /// Returns errc::bind_failed if the address cannot be bound, errc::invalid_config on a bad
    /// address; never throws for these. Calling start twice returns errc::invalid_config.
    std::error_code start();

    /// Binds and serves on a caller-owned io_context (always single-threaded: `config.threads` is
    /// ignored, whoever runs `io` runs the server; run it on one thread). See the thread contract.
    std::error_code start(asio::io_context& io);

    /// The bound TCP port (useful with config.port = 0); 0 before a successful start.
    std::uint16_t port() const;
    /// The bound HTTPS port (config.identity + config.https_port); 0 without HTTPS.
    std::uint16_t httpsPort() const;

    /// Ends every listen and get stream with its final chunk, cancels the DHT listens and permanent
    /// puts, closes the listening socket and, with an owned io thread, closes every connection and
    /// joins the thread. Returns when done. Safe to call twice, before start, and from the destructor.
    void stop();

    bool running() const;

private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace dhtgate
