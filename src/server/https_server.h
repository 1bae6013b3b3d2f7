// The HTTPS listener of a ProxyServer: the same routes as plain HTTP, served by a second RESTinio
// server (TLS traits, RESTinio's own tls_socket_t) on the same io_context. Only tls_server.cpp
// instantiates RESTinio's TLS templates (heavy).
//
// Request limits under TLS: the plain-HTTP request guard (GuardedSocket) sits below TLS and cannot
// see the HTTP bytes, so HTTPS connections rely on RESTinio's own limits (incoming_http_msg_limits,
// max_pipelined_requests): a request over max_header_size / max_body_size closes the connection
// without a 413/431 answer, and HTTP/1.0 clients get HTTP/1.1 answers (docs/tls.md).
#pragma once

#include "dhtgate/config.h"
#include "dhtgate/logger.h"
#include "server/listener_server.h"

#include <asio/io_context.hpp>
#include <asio/ssl/context.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

namespace dhtgate::server {

class ServerContext;

/// `port` receives the bound port. `pool`: connections on strands (ServerConfig::threads > 1).
std::unique_ptr<ListenerServer> makeHttpsServer(asio::io_context& io, const ServerConfig& config,
                                                const std::shared_ptr<ServerContext>& ctx, const Logger& log,
                                                asio::ssl::context tls, std::atomic<std::uint16_t>& port, bool v6,
                                                bool pool);

} // namespace dhtgate::server
