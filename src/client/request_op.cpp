#include "client/request_op.h"

#include "dhtgate/error.h"

#include <asio/error.hpp>
#include <asio/ssl/error.hpp>

#include <strings.h>

namespace dhtgate::http::detail {
namespace {

bool hasHeader(const Headers& headers, const char* name) {
    for (const auto& h : headers)
        if (strcasecmp(h.first.c_str(), name) == 0)
            return true;
    return false;
}

bool methodHasBody(const std::string& m) {
    return m == "POST" || m == "PUT" || m == "PATCH";
}

bool isEndOfStream(const std::error_code& ec) {
    return ec == asio::error::eof || ec == asio::ssl::error::stream_truncated || ec == asio::error::connection_reset ||
           ec == asio::error::broken_pipe;
}

} // namespace

RequestOp::RequestOp(std::shared_ptr<ClientImpl> client, std::shared_ptr<RequestState> state, Request request,
                     Callback done)
    : client_(std::move(client)), state_(std::move(state)), request_(std::move(request)), done_(std::move(done)),
      id_(client_->nextRequestId++), resolver_(client_->io), connectTimer_(client_->io), requestTimer_(client_->io),
      idleTimer_(client_->io) {}

void RequestOp::start() {
    if (state_->finished || client_->stopped)
        return;
    client_->active.insert(shared_from_this());
    const auto& opt = client_->options;
    armTimer(requestTimer_, request_.requestTimeout.value_or(opt.requestTimeout), errc::request_timeout);
    idleTimeout_ = request_.idleTimeout.value_or(opt.idleTimeout);

    if (auto ec = parseUrl(request_.url, url_))
        return finish(ec);
    if (url_.tls() && !client_->tlsContext())
        return finish(make_error_code(errc::tls_handshake_failed));
    wire_ = serialize();
    client_->options.logger.debug("[client] [req:{}] {} {}", id_, request_.method, request_.url);

    const bool streaming = request_.onData || request_.onLine;
    parser_.reset(request_.method == "HEAD");
    parser_.setMaxHeaderSize(std::min<std::size_t>(opt.maxResponseSize, 80 * 1024));
    parser_.setMaxBodySize(streaming ? 0 : opt.maxResponseSize);
    parser_.onHeaders = [this] { return guarded([this] { return deliverHeaders(); }); };
    parser_.onBody = [this](std::string_view data) { return guarded([&] { return deliverBody(data); }); };

    conn_ = client_->pool.take(url_.authority());
    if (conn_) {
        reused_ = true;
        return startWrite();
    }
    startResolve();
}

template <typename F> bool RequestOp::guarded(F&& f) {
    // User callbacks run inside http_parser (C code): no exception may cross it.
    try {
        return f();
    } catch (const std::exception& e) {
        client_->options.logger.error("[client] [req:{}] callback threw, request dropped: {}", id_, e.what());
    } catch (...) {
        client_->options.logger.error("[client] [req:{}] callback threw, request dropped", id_);
    }
    state_->finished = true;
    return false;
}

bool RequestOp::deliverHeaders() {
    response_.status = parser_.status();
    if (!request_.onHeaders)
        return true;
    Response head;
    head.status = parser_.status();
    head.headers = parser_.headers();
    if (state_->finished)
        return false;
    return request_.onHeaders(head) && !state_->finished;
}

std::string RequestOp::serialize() const {
    std::string out;
    out.reserve(256 + request_.body.size());
    out.append(request_.method).append(" ").append(url_.target).append(" HTTP/1.1\r\n");
    if (!hasHeader(request_.headers, "Host"))
        out.append("Host: ").append(url_.hostHeader()).append("\r\n");
    if (!hasHeader(request_.headers, "User-Agent") && !client_->options.userAgent.empty())
        out.append("User-Agent: ").append(client_->options.userAgent).append("\r\n");
    for (const auto& [name, value] : request_.headers)
        out.append(name).append(": ").append(value).append("\r\n");
    if ((!request_.body.empty() || methodHasBody(request_.method)) && !hasHeader(request_.headers, "Content-Length"))
        out.append("Content-Length: ").append(std::to_string(request_.body.size())).append("\r\n");
    out.append("\r\n").append(request_.body);
    return out;
}

void RequestOp::armTimer(asio::steady_timer& timer, std::chrono::milliseconds after, errc error) {
    if (after.count() <= 0)
        return;
    timer.expires_after(after);
    timer.async_wait([self = shared_from_this(), error](const std::error_code& ec) {
        if (ec == asio::error::operation_aborted || self->stopped_)
            return;
        self->finish(make_error_code(error));
    });
}

void RequestOp::startResolve() {
    armTimer(connectTimer_, client_->options.connectTimeout, errc::connect_timeout);
    resolver_.async_resolve(
        url_.host, std::to_string(url_.port),
        [self = shared_from_this()](const std::error_code& ec, asio::ip::tcp::resolver::results_type results) {
            if (self->stopped_)
                return;
            if (ec || results.empty()) {
                self->client_->options.logger.debug("[client] [req:{}] cannot resolve {}: {}", self->id_,
                                                    self->url_.host, ec.message());
                return self->finish(make_error_code(errc::resolve_failed));
            }
            self->startConnect(results);
        });
}

void RequestOp::startConnect(const asio::ip::tcp::resolver::results_type& endpoints) {
    auto tls = url_.tls() ? client_->tlsContext() : nullptr;
    conn_ = std::make_shared<Connection>(client_->io, tls, client_->options, client_->nextConnectionId++);
    conn_->connect(endpoints, url_, [self = shared_from_this()](const std::error_code& ec) {
        if (self->stopped_)
            return;
        if (ec)
            return self->finish(ec == asio::error::operation_aborted ? make_error_code(errc::connect_failed) : ec);
        self->connectTimer_.cancel();
        self->startWrite();
    });
}

void RequestOp::startWrite() {
    conn_->addUse();
    armTimer(idleTimer_, idleTimeout_, errc::idle_timeout);
    conn_->write(wire_, [self = shared_from_this()](const std::error_code& ec, std::size_t) {
        if (self->stopped_)
            return;
        if (ec) {
            if (self->retryOnFreshConnection())
                return;
            return self->finish(make_error_code(errc::connection_closed));
        }
        self->startRead();
    });
}

void RequestOp::startRead() {
    conn_->readSome(buffer_.data(), buffer_.size(),
                    [self = shared_from_this()](const std::error_code& ec, std::size_t n) { self->onRead(ec, n); });
}

void RequestOp::onRead(const std::error_code& ec, std::size_t n) {
    if (stopped_)
        return;
    if (ec) {
        if (received_ == 0 && retryOnFreshConnection())
            return;
        if (!isEndOfStream(ec))
            client_->options.logger.debug("[client] [req:{}] read error: {}", id_, ec.message());
        if (auto err = parser_.feedEof())
            return finish(err);
        return onComplete(0);
    }
    received_ += n;
    armTimer(idleTimer_, idleTimeout_, errc::idle_timeout);
    std::size_t consumed = 0;
    auto err = parser_.feed(buffer_.data(), n, consumed);
    if (stopped_ || state_->finished)
        return stop();
    if (err)
        return finish(err);
    if (parser_.complete())
        return onComplete(n - consumed);
    startRead();
}

bool RequestOp::retryOnFreshConnection() {
    if (!reused_ || received_ > 0)
        return false;
    client_->options.logger.debug("[client] [req:{}] reused connection was closed, retrying", id_);
    reused_ = false;
    conn_->close();
    conn_.reset();
    idleTimer_.cancel();
    parser_.reset(request_.method == "HEAD");
    startResolve();
    return true;
}

void RequestOp::onComplete(std::size_t unusedBytes) {
    if (!partialLine_.empty()) {
        std::string last = std::move(partialLine_);
        if (!guarded([&] { return deliverLine(last); }))
            return stop();
    }
    response_.status = parser_.status();
    response_.headers = parser_.takeHeaders();
    // Extra bytes after the response mean the connection's framing cannot be trusted. A request
    // without a whole-request timeout (a listen stream) does not feed the pool: its peer may be
    // shutting down, and a request reusing a half-dead connection would have no timeout to end it.
    const bool bounded = request_.requestTimeout.value_or(client_->options.requestTimeout).count() > 0;
    if (parser_.keepAlive() && unusedBytes == 0 && bounded && !client_->stopped)
        client_->pool.release(std::move(conn_));
    finish({});
}

bool RequestOp::deliverBody(std::string_view data) {
    if (state_->finished)
        return false;
    if (request_.onData && (!request_.onData(data) || state_->finished))
        return false;
    if (request_.onLine) {
        while (!data.empty()) {
            auto nl = data.find('\n');
            if (nl == std::string_view::npos) {
                partialLine_.append(data);
                if (partialLine_.size() > client_->options.maxResponseSize) {
                    finish(make_error_code(errc::response_too_large));
                    return false;
                }
                break;
            }
            std::string_view line = data.substr(0, nl);
            data.remove_prefix(nl + 1);
            if (!partialLine_.empty()) {
                partialLine_.append(line);
                std::string full = std::move(partialLine_);
                partialLine_.clear();
                if (!deliverLine(full))
                    return false;
            } else if (!deliverLine(line)) {
                return false;
            }
        }
    }
    if (!request_.onData && !request_.onLine)
        response_.body.append(data);
    return true;
}

bool RequestOp::deliverLine(std::string_view line) {
    if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
    if (state_->finished)
        return false;
    return request_.onLine(line) && !state_->finished;
}

void RequestOp::stop() {
    if (stopped_)
        return;
    stopped_ = true;
    std::error_code ignored;
    resolver_.cancel();
    connectTimer_.cancel();
    requestTimer_.cancel();
    idleTimer_.cancel();
    if (conn_) {
        conn_->close();
        conn_.reset();
    }
    client_->active.erase(shared_from_this());
}

void RequestOp::abort() {
    stop();
}

void RequestOp::finish(std::error_code ec) {
    if (stopped_)
        return;
    if (ec)
        client_->options.logger.debug("[client] [req:{}] failed: {}", id_, ec.message());
    auto self = shared_from_this();
    stop();
    if (state_->finished.exchange(true))
        return;
    // No exception may escape into the event loop.
    try {
        auto done = std::move(done_);
        done(ec, std::move(response_));
    } catch (const std::exception& e) {
        client_->options.logger.error("[client] [req:{}] completion callback threw: {}", id_, e.what());
    }
}

} // namespace dhtgate::http::detail
