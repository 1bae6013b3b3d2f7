// Resolves the daemon's --bootstrap HOST:PORT entries with asio's asynchronous resolver and hands
// the numeric addresses to the DhtRunner, so a DHT driven on the io thread never waits for DNS
// there (the DHT re-resolves its bootstrap list when it gets disconnected: numeric entries make
// that instant).
//
// Thread contract: constructed, started, cancelled and destroyed on the io thread (or before io
// runs). The `kick` callback runs on the io thread after bootstrap work was queued.
#pragma once

#include "dhtgate/logger.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace asio {
class io_context;
}
namespace dht {
class DhtRunner;
}

namespace dhtgate::daemon {

class BootstrapResolver {
public:
    BootstrapResolver(asio::io_context& io, std::shared_ptr<dht::DhtRunner> runner, std::function<void()> kick,
                      Logger log);
    ~BootstrapResolver();
    BootstrapResolver(const BootstrapResolver&) = delete;
    BootstrapResolver& operator=(const BootstrapResolver&) = delete;

    /// Starts resolving each "HOST:PORT" ("[V6]:PORT"); every address found is bootstrapped.
    void start(const std::vector<std::string>& entries);
    /// Cancels pending resolutions (their results are dropped).
    void cancel();

private:
    struct State;
    std::shared_ptr<State> state_;
};

} // namespace dhtgate::daemon
