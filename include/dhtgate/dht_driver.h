// dhtgate: a DhtRunner driven on the caller's asio::io_context, with no thread of its own.
//
// The runner is run with Config::threaded = false on an asio UDP socket of the same io_context.
// DhtDriver calls DhtRunner::loop() on the io thread: after each batch of received datagrams,
// after kick() (coalesced: at most one pump pending), and when the time returned by the last
// loop() (the DHT's next scheduled job) comes, on one steady_timer. So a ProxyServer on the same
// io_context reaches the DHT with no thread hand-off: set ServerConfig::dht_kick to kick().
//
//   asio::io_context io;
//   dhtgate::DhtDriver driver(io, 4222, log);      // binds the UDP port now (throws on failure)
//   ServerConfig config;  config.dht_kick = [&driver] { driver.kick(); };
//   dhtgate::ProxyServer server(driver.runner(), config, log);
//   server.start(io);  ...  io.run();
//
// Thread contract
//  * The constructor runs on the io thread or before io.run() starts. Exactly one thread runs io.
//  * runner() may be used from any thread (DhtRunner is thread-safe); after queueing work on it
//    from anywhere, call kick() so the io thread runs it. DHT callbacks (get/put/listen done and
//    value callbacks) run on the io thread, inside DhtRunner::loop(): they must not block, must not
//    call DhtRunner::join()/loop() and must not call stop() (post it instead).
//  * kick() and port() may be called from any thread.
//  * stop() and the destructor run on the io thread, or on any thread when no thread runs io
//    (before run() or after it returned). After stop() no DHT callback runs.
//  * The io_context must outlive the DhtDriver, and the DhtDriver must outlive whatever calls
//    kick() (a ProxyServer with ServerConfig::dht_kick: stop and destroy the server first).
//
// A slow DHT step (for instance a burst of received packets) delays the other handlers of the
// io_context for that long; this is the price of having no hand-offs (docs/server.md).
#pragma once

#include "dhtgate/logger.h"

#include <cstdint>
#include <memory>
#include <string>

namespace dht {
class DhtRunner;
}
namespace asio {
class io_context;
}

namespace dhtgate {

class DhtDriver {
public:
    /// Binds UDP `port` (0: any) on `bind_address` ("": 0.0.0.0 and, if available, [::]; an IPv4
    /// or IPv6 literal: that family only) and starts the DHT node. Throws std::system_error when
    /// the port cannot be bound, std::invalid_argument on a bad address. The DHT node gets no
    /// identity (a gateway relays encrypted values verbatim).
    DhtDriver(asio::io_context& io, std::uint16_t port = 0, Logger log = {}, const std::string& bind_address = {});
    /// Calls stop().
    ~DhtDriver();
    DhtDriver(const DhtDriver&) = delete;
    DhtDriver& operator=(const DhtDriver&) = delete;

    /// The driven runner. Do not call loop(), run() or join() on it: the driver does.
    const std::shared_ptr<dht::DhtRunner>& runner() const;

    /// Makes the io thread run the DHT soon (queued operations, pending callbacks). Thread-safe
    /// and cheap: kicks coalesce into one posted pump.
    void kick();

    /// The bound UDP port (IPv4's, or IPv6's when only IPv6 is bound).
    std::uint16_t port() const;

    /// Cancels the timer, joins the runner (the node leaves the network; queued operations are
    /// dropped; no callback runs afterwards) and closes the UDP sockets. Idempotent.
    void stop();

private:
    struct State;
    std::shared_ptr<State> state_;
};

} // namespace dhtgate
