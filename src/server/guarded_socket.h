// The TCP socket type of the RESTinio server (Traits::stream_socket_t): a plain socket plus a
// request guard that watches the incoming bytes with its own HTTP parser, so that a header section
// over `max_header_size` (or with over `max_header_count` fields) gets 431 and a Content-Length
// over `max_body_size` gets 413 *before* the body is read (RESTinio 0.6 would just close the
// connection without any answer).
//
// How: bytes of an unfinished header section are held back from RESTinio. When a request breaks a
// limit, RESTinio receives instead a small synthetic request for GuardedSocket::kRejectPath, which
// the router answers with the status (so answers stay in pipelining order) and `Connection:
// close`; the rest of the input is read and discarded, and the socket lingers until the client
// closes (or 2 s), so the client reads the answer instead of a reset. An oversized *chunked* body
// cannot be rejected that way (its headers are already passed on): RESTinio closes the connection.
//
// It also enforces the pipelining limit: RESTinio 0.6.16 drops the connection ("response_context_table
// is full") when more requests are pipelined than its limit while answers are pending, so the guard
// passes a request on only while fewer than `max_pipelined` answers are waiting to start; the
// rest wait in the guard (and, past 256 KiB, in the kernel): back-pressure, never a drop.
//
// Thread contract: as asio::ip::tcp::socket (one operation of each kind at a time, on the
// connection's executor).
#pragma once

#include <asio/associated_executor.hpp>
#include <asio/buffer.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>
#include <system_error>

namespace restinio::impl {
class tls_socket_t;
}

namespace dhtgate::server {

struct RequestLimits {
    std::size_t max_header_size {16 * 1024};
    std::size_t max_body_size {96 * 1024};
    std::size_t max_pipelined {16}; ///< requests passed on whose answer has not started
    std::size_t max_header_count {100};
};

class GuardedSocket {
public:
    using executor_type = asio::any_io_executor;
    /// The synthetic request target: "/.dhtgate/reject/413" or ".../431".
    static constexpr std::string_view kRejectPath = "/.dhtgate/reject/";
    /// Header added to HTTP/1.0 requests (RESTinio 0.6 does not record the request version).
    static constexpr std::string_view kHttp10Header = "X-Dhtgate-Http10";
    /// `Upgrade:` token added (with `Connection: upgrade`) to `GET .../listen` requests, so that
    /// RESTinio hands the request over as an upgrade and the server can take the connection
    /// (Request::startListenStream, RawStream).
    static constexpr std::string_view kListenUpgrade = "dhtgate-listen";

    /// Limits used by the sockets created for `io` (RESTinio constructs sockets from an
    /// io_context only). Set by ProxyServer before it opens; the last call for an io_context wins.
    static void setLimits(asio::io_context& io, RequestLimits limits);
    static void clearLimits(asio::io_context& io);

    explicit GuardedSocket(asio::io_context& io);
    GuardedSocket(GuardedSocket&& other);   ///< leaves `other` a fresh, usable socket
    GuardedSocket& operator=(GuardedSocket&& other);
    ~GuardedSocket();

    asio::ip::tcp::socket& lowest_layer();
    const asio::ip::tcp::socket& lowest_layer() const;
    executor_type get_executor();
    asio::ip::tcp::endpoint remote_endpoint() const;
    bool is_open() const;
    void cancel(std::error_code& ec);
    void shutdown(asio::socket_base::shutdown_type what, std::error_code& ec);
    void close();
    void close(std::error_code& ec);
    // For RESTinio's generic sendfile runner (never used by dhtgate's routes).
    bool native_non_blocking() const { return lowest_layer().native_non_blocking(); }
    void native_non_blocking(bool mode, std::error_code& ec) { lowest_layer().native_non_blocking(mode, ec); }
    auto native_handle() { return lowest_layer().native_handle(); }

    template <typename MutableBuffers, typename Handler>
    void async_read_some(const MutableBuffers& buffers, Handler&& handler) {
        auto ex = asio::get_associated_executor(handler, get_executor());
        const asio::mutable_buffer buffer = *asio::buffer_sequence_begin(buffers);
        startRead(ex, buffer, [h = std::forward<Handler>(handler)](std::error_code ec, std::size_t n) mutable { h(ec, n); });
    }

    template <typename ConstBuffers, typename Handler>
    void async_write_some(const ConstBuffers& buffers, Handler&& handler) {
        const auto first = asio::buffer_sequence_begin(buffers);
        if (first != asio::buffer_sequence_end(buffers))
            sawWrite(asio::const_buffer(*first).data(), asio::const_buffer(*first).size());
        lowest_layer().async_write_some(buffers, std::forward<Handler>(handler));
    }

    template <typename WaitType, typename Handler>
    void async_wait(WaitType w, Handler&& handler) {
        lowest_layer().async_wait(w, std::forward<Handler>(handler));
    }

private:
    class Impl;
    void startRead(const asio::any_io_executor& ex, asio::mutable_buffer buffer,
                   std::function<void(std::error_code, std::size_t)> done);
    void sawWrite(const void* data, std::size_t size);
    std::shared_ptr<Impl> impl_;
};

/// Found by ADL from RESTinio's connection code: a guarded socket is not a TLS socket.
inline restinio::impl::tls_socket_t* make_tls_socket_pointer_for_state_listener(GuardedSocket&) noexcept {
    return nullptr;
}

/// Found by ADL from RESTinio's connection code: nothing to prepare (no TLS handshake).
template <typename Connection, typename StartRead, typename Failed>
void prepare_connection_and_start_read(GuardedSocket&, Connection&, StartRead start, Failed) {
    start();
}

} // namespace dhtgate::server
