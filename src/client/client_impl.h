// Shared state of one http::Client: options, TLS context, connection pool, live requests.
#pragma once

#include "client/connection_pool.h"
#include "dhtgate/http_client.h"

#include <asio/io_context.hpp>
#include <asio/ssl/context.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <set>

namespace dhtgate::http::detail {

class RequestOp;

/// Lives as long as the Client or any request still holding it. Touched on the io thread only,
/// except for the constructor.
class ClientImpl : public std::enable_shared_from_this<ClientImpl> {
public:
    /// Throws std::system_error when the TLS options (CA, client identity) cannot be loaded.
    ClientImpl(asio::io_context& io, ClientOptions options);

    /// Cancels every request (no callbacks) and closes idle connections.
    void shutdown();

    asio::io_context& io;
    const ClientOptions options;
    ConnectionPool pool;
    std::set<std::shared_ptr<RequestOp>> active;
    std::atomic<std::uint64_t> nextRequestId {1};
    std::uint64_t nextConnectionId {1};
    bool stopped {false};

    /// Null until the first https request.
    asio::ssl::context* tlsContext() { return tls_.get(); }

private:
    std::unique_ptr<asio::ssl::context> tls_;
};

/// The part of a request a RequestHandle shares with the io thread.
struct RequestState {
    asio::io_context* io {nullptr};
    /// Set once the completion ran or the request was cancelled; no callback runs afterwards.
    std::atomic<bool> finished {false};
    std::weak_ptr<RequestOp> op;
};

} // namespace dhtgate::http::detail
