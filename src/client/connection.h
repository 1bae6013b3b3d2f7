// One client-side TCP or TLS stream.
#pragma once

#include "client/url.h"
#include "dhtgate/http_client.h"

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ssl/context.hpp>
#include <asio/ssl/stream.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace dhtgate::http::detail {

/// A connected socket to one scheme+host:port, optionally wrapped in TLS.
///
/// Used by one request at a time (io thread only); between requests it may rest in the
/// ConnectionPool. close() aborts any pending operation: its handler sees operation_aborted.
class Connection : public std::enable_shared_from_this<Connection> {
public:
    using Handler = std::function<void(std::error_code)>;
    using IoHandler = std::function<void(std::error_code, std::size_t)>;

    /// `tls` is null for plain http; it must outlive the connection.
    Connection(asio::io_context& io, asio::ssl::context* tls, const ClientOptions& options, std::uint64_t id);

    /// Tries every endpoint in order, then sets socket options and runs the TLS handshake
    /// (SNI and host-name verification against `url.host`). Errors: connect_failed,
    /// tls_handshake_failed, or operation_aborted after close().
    void connect(const asio::ip::tcp::resolver::results_type& endpoints, const Url& url, Handler done);
    void write(const std::string& data, IoHandler done);
    void readSome(char* buffer, std::size_t size, IoHandler done);
    /// Closes the socket (no TLS close_notify: the connection is being abandoned).
    void close();

    bool isOpen() const { return lowest().is_open(); }
    std::uint64_t id() const { return id_; }
    const std::string& authority() const { return authority_; }
    /// Number of requests started on this connection (1 for a fresh one).
    unsigned uses() const { return uses_; }
    void addUse() { ++uses_; }

private:
    asio::ip::tcp::socket& lowest() { return tls_ ? tls_->next_layer() : tcp_; }
    const asio::ip::tcp::socket& lowest() const { return tls_ ? tls_->next_layer() : tcp_; }
    void setSocketOptions();
    void handshake(const Url& url, Handler done);

    asio::io_context& io_;
    asio::ssl::context* tlsContext_;
    const ClientOptions& options_;
    std::uint64_t id_;
    std::string authority_;
    unsigned uses_ {0};
    asio::ip::tcp::socket tcp_;
    std::optional<asio::ssl::stream<asio::ip::tcp::socket>> tls_;
};

using ConnectionPtr = std::shared_ptr<Connection>;

} // namespace dhtgate::http::detail
