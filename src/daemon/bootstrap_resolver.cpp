#include "daemon/bootstrap_resolver.h"

#include "daemon/options.h"

#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>
#include <opendht/dhtrunner.h>

namespace dhtgate::daemon {

struct BootstrapResolver::State {
    State(asio::io_context& io, std::shared_ptr<dht::DhtRunner> r, std::function<void()> k, Logger l)
        : resolver(io), runner(std::move(r)), kick(std::move(k)), log(std::move(l)) {}

    asio::ip::udp::resolver resolver;
    std::shared_ptr<dht::DhtRunner> runner;
    std::function<void()> kick;
    Logger log;
    bool cancelled{false};
};

BootstrapResolver::BootstrapResolver(asio::io_context& io, std::shared_ptr<dht::DhtRunner> runner,
                                     std::function<void()> kick, Logger log)
    : state_(std::make_shared<State>(io, std::move(runner), std::move(kick), std::move(log))) {}

BootstrapResolver::~BootstrapResolver() {
    cancel();
}

void BootstrapResolver::start(const std::vector<std::string>& entries) {
    for (const auto& entry : entries) {
        std::string host, port;
        if (!splitHostPort(entry, host, port))
            continue; // rejected by the option parser already
        state_->log.info("[daemon] bootstrapping from {}:{}", host, port);
        state_->resolver.async_resolve(
            host, port,
            [state = state_, entry](const std::error_code& ec, asio::ip::udp::resolver::results_type results) {
                if (state->cancelled || ec == asio::error::operation_aborted)
                    return;
                if (ec) {
                    state->log.warn("[daemon] cannot resolve bootstrap node {}: {}", entry, ec.message());
                    return;
                }
                for (const auto& r : results) {
                    const auto& ep = r.endpoint();
                    state->log.debug("[daemon] bootstrap node {} is {}", entry, ep.address().to_string());
                    // Numeric: the DHT keeps it for re-bootstrapping and resolves it at once.
                    state->runner->bootstrap(ep.address().to_string(), std::to_string(ep.port()));
                }
                if (state->kick)
                    state->kick();
            });
    }
}

void BootstrapResolver::cancel() {
    state_->cancelled = true;
    state_->resolver.cancel();
}

} // namespace dhtgate::daemon
