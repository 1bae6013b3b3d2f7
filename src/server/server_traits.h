// RESTinio configuration of the proxy server: traits, logger adapter and connection-state listener.
// RESTinio is header-only and heavy: only http_exchange.cpp and proxy_server.cpp include this.
#pragma once

#include "dhtgate/logger.h"
#include "server/guarded_socket.h"
#include "server/listener_server.h"
#include "server/http_exchange.h"

#include <restinio/all.hpp>

#include <functional>
#include <memory>

namespace dhtgate::server {

/// Forwards RESTinio's own log lines to our Logger (RESTinio's "info" is chatty: sent as debug).
class RestinioLogger {
public:
    explicit RestinioLogger(Logger log = {}) : log_(std::move(log)) {}
    template <typename Builder>
    void trace(Builder&& b) { emit(LogLevel::trace, b); }
    template <typename Builder>
    void info(Builder&& b) { emit(LogLevel::debug, b); }
    template <typename Builder>
    void warn(Builder&& b) { emit(LogLevel::debug, b); }
    template <typename Builder>
    void error(Builder&& b) { emit(LogLevel::warn, b); }

private:
    template <typename Builder>
    void emit(LogLevel level, Builder& b) {
        if (log_.enabled(level))
            log_.log(level, "[server] [restinio] {}", b());
    }
    Logger log_;
};

/// Reports closed connections (by RESTinio connection id) to the server.
class ConnectionListener {
public:
    using OnClosed = std::function<void(std::uint64_t)>;
    explicit ConnectionListener(OnClosed onClosed) : onClosed_(std::move(onClosed)) {}
    void state_changed(const restinio::connection_state::notice_t& notice) noexcept {
        if (std::holds_alternative<restinio::connection_state::closed_t>(notice.cause())) {
            try {
                onClosed_(notice.connection_id());
            } catch (...) {
            }
        }
    }

private:
    OnClosed onClosed_;
};

using RequestHandler = std::function<restinio::request_handling_status_t(restinio::request_handle_t)>;

/// Default: one io thread, RESTinio's strands are no-ops.
struct SingleThreadTraits : restinio::single_thread_traits_t<restinio::asio_timer_manager_t, RestinioLogger, RequestHandler> {
    using connection_state_listener_t = ConnectionListener;
    using stream_socket_t = GuardedSocket;
};

/// `threads > 1`: the same server on a pool (connections on strands), for comparison.
struct PoolTraits : restinio::traits_t<restinio::asio_timer_manager_t, RestinioLogger, RequestHandler> {
    using connection_state_listener_t = ConnectionListener;
    using stream_socket_t = GuardedSocket;
};

/// Wraps a RESTinio request for the handlers (defined in http_exchange.cpp). Each RESTinio server
/// numbers its connections from 1: the HTTPS server ORs kHttpsConnectionIdBit into its ids.
std::shared_ptr<Request::Impl> makeRequestImpl(restinio::request_handle_t req, std::uint64_t connectionIdBase = 0);
constexpr std::uint64_t kHttpsConnectionIdBit = std::uint64_t(1) << 62;

/// A RESTinio server on an external io_context behind the ListenerServer interface.
template <typename Traits>
class RestinioServer final : public ListenerServer {
public:
    RestinioServer(asio::io_context& io, restinio::server_settings_t<Traits> settings)
        : server_(restinio::external_io_context(io), std::move(settings)) {}
    void openSync() override { server_.open_sync(); }
    void closeSync() override { server_.close_sync(); }
    void closeAsync(std::function<void()> done) override {
        server_.close_async([done] { done(); }, [done](std::exception_ptr) { done(); });
    }

private:
    restinio::http_server_t<Traits> server_;
};

} // namespace dhtgate::server
