// dhtgate: asynchronous HTTP/1.1 and HTTPS client.
//
// Only std types appear here: asio, http_parser and OpenSSL stay behind the pimpl, so a daemon
// links libdhtgate without their headers.
//
// Thread contract
//   A Client runs on one io_context thread: either a caller-owned `asio::io_context` given to
//   the constructor (the caller runs it), or its own internal thread (default constructor).
//   - `send()` and `RequestHandle::cancel()` may be called from any thread; the work is posted
//     to the io thread. `send()` never invokes a callback itself.
//   - Every callback (headers, data, line, completion) runs on the io thread.
//   - Each request gets exactly one completion callback, unless it was cancelled: after
//     `cancel()` returns on the io thread, no callback of that request runs. (Called from another
//     thread, cancel() cannot stop a callback that is already running.)
//   - Destroying the Client cancels every request without calling their callbacks. With a
//     caller-owned io_context, destroy it on the io thread or while the io_context is not
//     running; never from inside one of its own callbacks.
//
// Status codes are not errors: a 404 completes with an empty error_code and status 404.
// Failures use dhtgate::errc (error.h): invalid_url, resolve_failed, connect_failed,
// connect_timeout, request_timeout, idle_timeout, tls_handshake_failed, protocol_error,
// response_too_large, connection_closed.
#pragma once

#include "dhtgate/logger.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace asio {
class io_context;
}

namespace dhtgate::http {

/// Header fields in wire order; names compare case-insensitively.
using Headers = std::vector<std::pair<std::string, std::string>>;

struct Response {
    unsigned status{0}; ///< 0 when no response was received
    Headers headers;
    std::string body; ///< empty when the request streamed its body to onData/onLine

    /// Value of the first header named `name` (case-insensitive), or nullptr.
    const std::string* header(std::string_view name) const;
};

using Callback = std::function<void(std::error_code, Response)>;

/// Category of HTTP status errors: the error value is the status ("HTTP status 404 Not Found").
/// The client never reports these itself; layers above (ProxyClient) use them.
const std::error_category& statusCategory();
inline std::error_code statusError(unsigned status) {
    return {static_cast<int>(status), statusCategory()};
}

struct Request {
    std::string method{"GET"}; ///< any token: GET, POST, SUBSCRIBE, UNSUBSCRIBE, ...
    std::string url;           ///< http://host[:port]/path?query, https://..., [v6]:port
    Headers headers;           ///< sent after Host and User-Agent (unless overridden here)
    std::string body;          ///< sent with Content-Length

    /// Streaming: each decoded body fragment as it arrives; the body is then not accumulated
    /// and Response::body stays empty. Return false to cancel the request (no completion).
    std::function<bool(std::string_view)> onData;
    /// Streaming: each complete '\n'-terminated line (without the '\n' and any '\r'); a last
    /// unterminated line is delivered when the body ends. Return false to cancel.
    std::function<bool(std::string_view)> onLine;
    /// Called when the status line and headers arrived (Response::body empty). Return false to cancel.
    std::function<bool(const Response&)> onHeaders;

    /// Per-request overrides of ClientOptions (nullopt = use the client's).
    std::optional<std::chrono::milliseconds> requestTimeout;
    std::optional<std::chrono::milliseconds> idleTimeout;

    Request() = default;
    Request(std::string m, std::string u) : method(std::move(m)), url(std::move(u)) {}
    Request& setMethod(std::string m) {
        method = std::move(m);
        return *this;
    }
    Request& setUrl(std::string u) {
        url = std::move(u);
        return *this;
    }
    Request& addHeader(std::string name, std::string value) {
        headers.emplace_back(std::move(name), std::move(value));
        return *this;
    }
    Request& setBody(std::string b) {
        body = std::move(b);
        return *this;
    }
    Request& setOnData(std::function<bool(std::string_view)> f) {
        onData = std::move(f);
        return *this;
    }
    Request& setOnLine(std::function<bool(std::string_view)> f) {
        onLine = std::move(f);
        return *this;
    }
    Request& setOnHeaders(std::function<bool(const Response&)> f) {
        onHeaders = std::move(f);
        return *this;
    }
    Request& setRequestTimeout(std::chrono::milliseconds t) {
        requestTimeout = t;
        return *this;
    }
    Request& setIdleTimeout(std::chrono::milliseconds t) {
        idleTimeout = t;
        return *this;
    }
};

struct ClientOptions {
    /// Name resolution + TCP connect (+ TLS handshake). 0 = none.
    std::chrono::milliseconds connectTimeout{std::chrono::seconds(10)};
    /// Whole request, from send() to the end of the response. 0 = none (listen streams); such
    /// unbounded requests never return their connection to the keep-alive pool.
    std::chrono::milliseconds requestTimeout{std::chrono::seconds(60)};
    /// Longest silence while waiting for response bytes. 0 = none.
    std::chrono::milliseconds idleTimeout{std::chrono::seconds(0)};
    /// Largest accepted header section plus accumulated body; for streamed requests, the
    /// header section plus the longest line. Above: errc::response_too_large.
    std::size_t maxResponseSize{16 * 1024 * 1024};
    /// Idle keep-alive connections kept per scheme+host:port, and in total. 0 disables reuse.
    std::size_t maxIdlePerHost{4};
    std::size_t maxIdleTotal{64};
    /// TCP keepalive probes on every connection (idle time, interval, count). 0 idle = OS default.
    std::chrono::seconds keepAliveIdle{30};
    std::chrono::seconds keepAliveInterval{10};
    int keepAliveCount{3};
    std::string userAgent{"dhtgate"};

    // HTTPS
    /// Verify the server certificate and host name (default). false = accept anything.
    bool verifyPeer{true};
    /// PEM of the CA(s) to trust exclusively; empty = the system's default CA store.
    std::string caPem;
    /// Optional client certificate chain (PEM, leaf first) and its private key (PEM).
    std::string clientCertificatePem;
    std::string clientKeyPem;

    Logger logger;

    ClientOptions& setConnectTimeout(std::chrono::milliseconds t) {
        connectTimeout = t;
        return *this;
    }
    ClientOptions& setRequestTimeout(std::chrono::milliseconds t) {
        requestTimeout = t;
        return *this;
    }
    ClientOptions& setIdleTimeout(std::chrono::milliseconds t) {
        idleTimeout = t;
        return *this;
    }
    ClientOptions& setMaxResponseSize(std::size_t n) {
        maxResponseSize = n;
        return *this;
    }
    ClientOptions& setMaxIdlePerHost(std::size_t n) {
        maxIdlePerHost = n;
        return *this;
    }
    ClientOptions& setMaxIdleTotal(std::size_t n) {
        maxIdleTotal = n;
        return *this;
    }
    ClientOptions& setUserAgent(std::string ua) {
        userAgent = std::move(ua);
        return *this;
    }
    ClientOptions& setVerifyPeer(bool v) {
        verifyPeer = v;
        return *this;
    }
    ClientOptions& setCaPem(std::string pem) {
        caPem = std::move(pem);
        return *this;
    }
    ClientOptions& setClientIdentity(std::string certPem, std::string keyPem) {
        clientCertificatePem = std::move(certPem);
        clientKeyPem = std::move(keyPem);
        return *this;
    }
    ClientOptions& setLogger(Logger l) {
        logger = std::move(l);
        return *this;
    }
};

namespace detail {
struct RequestState;
struct OwnThread;
class ClientImpl;
} // namespace detail

/// Handle on one request. Copyable; an empty handle does nothing.
class RequestHandle {
public:
    RequestHandle() = default;
    explicit RequestHandle(std::shared_ptr<detail::RequestState> s) : state_(std::move(s)) {}
    /// Aborts the request and closes its connection; its callbacks never run afterwards.
    void cancel();
    /// True until the request completed or was cancelled.
    bool active() const;

private:
    std::shared_ptr<detail::RequestState> state_;
};

class Client {
public:
    /// Runs on its own internal io thread. Throws std::system_error on bad TLS options.
    explicit Client(ClientOptions options = {});
    /// Runs on `io`, which the caller runs (and keeps alive longer than the Client).
    explicit Client(asio::io_context& io, ClientOptions options = {});
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    /// Starts `request`; `done` runs once on the io thread (see the thread contract above).
    RequestHandle send(Request request, Callback done);

    /// The io_context callbacks run on (the internal one, or the caller's).
    asio::io_context& ioContext();
    const ClientOptions& options() const;

private:
    std::unique_ptr<detail::OwnThread> own_; // declared first: outlives impl_
    std::shared_ptr<detail::ClientImpl> impl_;
};

} // namespace dhtgate::http
