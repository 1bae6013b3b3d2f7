// RESTinio's TLS server instantiations (single-thread and pool) for the HTTPS listener. The only
// translation unit that includes restinio/tls.hpp. Settings mirror the plain server
// (proxy_server.cpp) minus the request guard (see https_server.h).
#include "server/https_server.h"

#include "server/handlers.h"
#include "server/listen_registry.h"
#include "server/server_context.h"
#include "server/server_traits.h"

#include <restinio/tls.hpp>

#include <algorithm>

namespace dhtgate::server {
namespace {

struct SingleThreadTlsTraits
    : restinio::single_thread_tls_traits_t<restinio::asio_timer_manager_t, RestinioLogger, RequestHandler> {
    using connection_state_listener_t = ConnectionListener;
};

struct PoolTlsTraits : restinio::tls_traits_t<restinio::asio_timer_manager_t, RestinioLogger, RequestHandler> {
    using connection_state_listener_t = ConnectionListener;
};

template <typename Traits>
std::unique_ptr<ListenerServer> make(asio::io_context& io, const ServerConfig& c, const std::shared_ptr<ServerContext>& ctx,
                                  const Logger& log, asio::ssl::context tls, std::atomic<std::uint16_t>& port,
                                  bool v6) {
    restinio::server_settings_t<Traits> s;
    std::weak_ptr<ServerContext> weak = ctx;
    s.address(c.address)
        .port(c.https_port.value_or(0))
        .protocol(v6 ? asio::ip::tcp::v6() : asio::ip::tcp::v4())
        .tls_context(std::move(tls))
        .max_pipelined_requests(std::max<std::size_t>(1, c.max_pipelined_requests))
        .concurrent_accepts_count(std::max<std::size_t>(1, c.concurrent_accepts))
        .read_next_http_message_timelimit(c.read_timeout)
        .write_http_response_timelimit(c.write_timeout)
        .handle_request_timeout(std::chrono::hours(24 * 24)) // see proxy_server.cpp
        .incoming_http_msg_limits(restinio::incoming_http_msg_limits_t {}
                                      .max_url_size(c.max_header_size)
                                      .max_field_name_size(c.max_header_size)
                                      .max_field_value_size(c.max_header_size)
                                      .max_field_count(c.max_header_count)
                                      .max_body_size(c.max_body_size))
        .timer_manager(std::clamp<std::chrono::steady_clock::duration>(
            std::min(c.read_timeout, c.write_timeout) / 4, std::chrono::milliseconds(20), std::chrono::seconds(1)))
        .socket_options_setter([](auto& options) { options.set_option(asio::ip::tcp::no_delay(true)); })
        .acceptor_post_bind_hook([&port](asio::ip::tcp::acceptor& a) { port = a.local_endpoint().port(); })
        .logger(log)
        .connection_state_listener(std::make_shared<ConnectionListener>([weak](std::uint64_t connId) {
            if (auto ctx = weak.lock())
                ctx->postFromAnyThread([ctx, connId] { ctx->listens().connectionClosed(connId | kHttpsConnectionIdBit); });
        }))
        .request_handler([weak](restinio::request_handle_t handle) {
            auto ctx = weak.lock();
            if (!ctx)
                return restinio::request_rejected();
            Request req(makeRequestImpl(std::move(handle), kHttpsConnectionIdBit));
            asio::dispatch(ctx->executor(), [ctx, req] { routeSafely(*ctx, req); });
            return restinio::request_accepted();
        });
    return std::make_unique<RestinioServer<Traits>>(io, std::move(s));
}

} // namespace

std::unique_ptr<ListenerServer> makeHttpsServer(asio::io_context& io, const ServerConfig& config,
                                             const std::shared_ptr<ServerContext>& ctx, const Logger& log,
                                             asio::ssl::context tls, std::atomic<std::uint16_t>& port, bool v6,
                                             bool pool) {
    if (pool)
        return make<PoolTlsTraits>(io, config, ctx, log, std::move(tls), port, v6);
    return make<SingleThreadTlsTraits>(io, config, ctx, log, std::move(tls), port, v6);
}

} // namespace dhtgate::server
