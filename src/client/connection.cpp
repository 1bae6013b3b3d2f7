#include "client/connection.h"

#include "dhtgate/error.h"

#include <asio/connect.hpp>
#include <asio/write.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace dhtgate::http::detail {

Connection::Connection(asio::io_context& io, asio::ssl::context* tls, const ClientOptions& options, std::uint64_t id)
    : io_(io), tlsContext_(tls), options_(options), id_(id), tcp_(io) {}

void Connection::connect(const asio::ip::tcp::resolver::results_type& endpoints, const Url& url, Handler done) {
    authority_ = url.authority();
    auto self = shared_from_this();
    asio::async_connect(
        tcp_, endpoints,
        [this, self, url, done = std::move(done)](const std::error_code& ec, const asio::ip::tcp::endpoint& ep) {
            if (ec == asio::error::operation_aborted)
                return done(ec);
            if (ec) {
                options_.logger.debug("[client] [conn:{}] connect to {} failed: {}", id_, authority_, ec.message());
                return done(make_error_code(errc::connect_failed));
            }
            options_.logger.debug("[client] [conn:{}] connected to {}", id_, ep.address().to_string());
            setSocketOptions();
            if (!tlsContext_)
                return done({});
            handshake(url, std::move(done));
        });
}

void Connection::setSocketOptions() {
    std::error_code ec;
    tcp_.set_option(asio::ip::tcp::no_delay(true), ec);
    tcp_.set_option(asio::socket_base::keep_alive(true), ec);
    if (options_.keepAliveIdle.count() > 0) {
        // Dead peers of long listen streams are only noticed through TCP keepalive (spec §5).
        const int fd = tcp_.native_handle();
        int idle = static_cast<int>(options_.keepAliveIdle.count());
        int interval = static_cast<int>(std::max<long long>(1, options_.keepAliveInterval.count()));
        int count = std::max(1, options_.keepAliveCount);
        ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
        ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
        ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
    }
}

void Connection::handshake(const Url& url, Handler done) {
    tls_.emplace(std::move(tcp_), *tlsContext_);
    SSL* ssl = tls_->native_handle();
    const bool ipLiteral = url.isIpLiteral();
    // SNI carries host names only (RFC 6066 forbids IP literals).
    if (!ipLiteral)
        SSL_set_tlsext_host_name(ssl, url.host.c_str());
    if (options_.verifyPeer) {
        if (ipLiteral)
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), url.host.c_str());
        else
            SSL_set1_host(ssl, url.host.c_str());
    }
    auto self = shared_from_this();
    tls_->async_handshake(asio::ssl::stream_base::client,
                          [this, self, done = std::move(done)](const std::error_code& ec) {
                              if (ec == asio::error::operation_aborted || !lowest().is_open())
                                  return done(asio::error::operation_aborted);
                              if (ec) {
                                  long verify = SSL_get_verify_result(tls_->native_handle());
                                  options_.logger.warn("[client] [conn:{}] TLS handshake with {} failed: {} ({})", id_,
                                                       authority_, ec.message(), X509_verify_cert_error_string(verify));
                                  return done(make_error_code(errc::tls_handshake_failed));
                              }
                              done({});
                          });
}

// A TLS operation uses the stream's own buffers until its handler runs, even after close(): the
// handler keeps the connection alive (a request cancelled mid-read drops its reference at once).
void Connection::write(const std::string& data, IoHandler done) {
    if (tls_)
        asio::async_write(*tls_, asio::buffer(data),
                          [self = shared_from_this(), done = std::move(done)](const std::error_code& ec, std::size_t n) {
                              done(ec, n);
                          });
    else
        asio::async_write(tcp_, asio::buffer(data), std::move(done));
}

void Connection::readSome(char* buffer, std::size_t size, IoHandler done) {
    if (tls_)
        tls_->async_read_some(asio::buffer(buffer, size),
                              [self = shared_from_this(), done = std::move(done)](const std::error_code& ec, std::size_t n) {
                                  done(ec, n);
                              });
    else
        tcp_.async_read_some(asio::buffer(buffer, size), std::move(done));
}

void Connection::close() {
    std::error_code ec;
    lowest().shutdown(asio::socket_base::shutdown_both, ec);
    lowest().close(ec);
}

} // namespace dhtgate::http::detail
