// One HTTP request in flight: resolve, connect, write, read, complete.
#pragma once

#include "client/client_impl.h"
#include "client/connection.h"
#include "client/response_parser.h"
#include "client/url.h"
#include "dhtgate/error.h"

#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>

#include <array>
#include <memory>
#include <string>

namespace dhtgate::http::detail {

/// The state machine of a single request (io thread only).
///
///   start ─► [pooled connection?] ─yes─────────────────► write ─► read ⟲ ─► complete
///              └─no─► resolve ─► connect (every address) ─┘
///
/// Three timers race it: connect (resolve+connect+handshake), request (everything) and idle
/// (silence between response bytes). Whichever ends the request first wins: finish() runs once.
/// A request sent on a reused connection that fails before any response byte is retried once
/// on a new connection (the server may have closed the idle connection meanwhile).
class RequestOp : public std::enable_shared_from_this<RequestOp> {
public:
    RequestOp(std::shared_ptr<ClientImpl> client, std::shared_ptr<RequestState> state, Request request, Callback done);

    void start();
    /// Cancellation from the handle: stops everything, runs no callback.
    void abort();

private:
    void startResolve();
    void startConnect(const asio::ip::tcp::resolver::results_type& endpoints);
    void startWrite();
    void startRead();
    void onRead(const std::error_code& ec, std::size_t n);
    void onComplete(std::size_t unusedBytes);
    bool retryOnFreshConnection();
    void armTimer(asio::steady_timer& timer, std::chrono::milliseconds after, errc error);
    template <typename F>
    bool guarded(F&& f);
    bool deliverHeaders();
    bool deliverBody(std::string_view data);
    bool deliverLine(std::string_view line);
    void finish(std::error_code ec);
    void stop();
    std::string serialize() const;

    std::shared_ptr<ClientImpl> client_;
    std::shared_ptr<RequestState> state_;
    Request request_;
    Callback done_;
    std::uint64_t id_;
    Url url_;
    std::string wire_;
    ConnectionPtr conn_;
    bool reused_ {false};
    bool stopped_ {false};
    std::size_t received_ {0};
    asio::ip::tcp::resolver resolver_;
    asio::steady_timer connectTimer_;
    asio::steady_timer requestTimer_;
    asio::steady_timer idleTimer_;
    std::chrono::milliseconds idleTimeout_ {0};
    ResponseParser parser_;
    Response response_;
    std::string partialLine_;
    std::array<char, 64 * 1024> buffer_;
};

} // namespace dhtgate::http::detail
