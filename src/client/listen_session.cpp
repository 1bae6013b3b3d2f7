#include "client/listen_session.h"

#include "client/proxy_client_impl.h"
#include "codec/value_codec.h"

#include <algorithm>

namespace dhtgate::detail {

ListenSession::ListenSession(std::weak_ptr<ProxyClientImpl> owner, asio::io_context& io, ProxyClient::ListenToken token,
                             dht::InfoHash key, ProxyClient::ListenCallback callback, dht::Value::Filter filter)
    : owner_(std::move(owner)), token_(token), key_(key), callback_(std::move(callback)), filter_(std::move(filter)),
      retryTimer_(io) {}

void ListenSession::open() {
    auto owner = owner_.lock();
    if (!owner || cancelled_)
        return;
    ++opens_;
    owner->options.logger.debug("[proxy-client] [listen:{}] opening stream on {} (attempt {})", token_, key_.toString(),
                                opens_);
    std::weak_ptr<ListenSession> weak = weak_from_this();
    auto req = owner->request("GET", owner->keyUrl(key_, "/listen"));
    // A listen stream lasts as long as the proxy keeps it: no whole-request timeout.
    req.setRequestTimeout(std::chrono::milliseconds(0));
    req.setOnHeaders([this, weak](const http::Response& head) {
        auto self = weak.lock();
        if (!self || cancelled_)
            return false;
        // A 200 proves the proxy is back: the next drop retries after the shortest delay.
        // Other answers keep their (error) body away from onLine and are retried later.
        if (head.status == 200)
            backoff_ = std::chrono::milliseconds(0);
        else
            status200_ = false;
        return true;
    });
    status200_ = true;
    req.setOnLine([this, weak](std::string_view line) {
        auto self = weak.lock();
        return self && !cancelled_ && (!status200_ || onLine(line));
    });
    stream_ = owner->http->send(std::move(req), [this, weak](std::error_code ec, http::Response r) {
        if (auto self = weak.lock())
            onClosed(ec, r.status);
    });
}

bool ListenSession::onLine(std::string_view line) {
    // "{}" is an end marker some servers send; empty lines carry nothing.
    if (line.empty() || line == "{}")
        return true;
    bool expired = false;
    codec::ParseError err;
    auto value = codec::parseValueLine(line, expired, err);
    if (!value) {
        // An error body (not newline-terminated, spec §11.4) or garbage: skip the line.
        if (auto owner = owner_.lock())
            owner->options.logger.debug("[proxy-client] [listen:{}] skipping line: {}", token_, err.reason);
        return true;
    }
    return deliver(value, expired);
}

bool ListenSession::deliver(const std::shared_ptr<dht::Value>& value, bool expired) {
    auto it = seen_.find(value->id);
    if (expired) {
        if (it == seen_.end())
            return true; // never reported (or already reported gone)
        seen_.erase(it);
    } else {
        std::string canonical = codec::valueJson(*value);
        if (it != seen_.end() && it->second == canonical)
            return true; // re-sent after a reconnection, or by a second storing node
        seen_[value->id] = std::move(canonical);
    }
    if (filter_ && !filter_(*value))
        return true;
    bool keep = true;
    try {
        keep = callback_({value}, expired);
    } catch (const std::exception& e) {
        // A throwing callback must not kill the stream (no exception may reach the event loop).
        if (auto owner = owner_.lock())
            owner->options.logger.error("[proxy-client] [listen:{}] callback threw: {}", token_, e.what());
    }
    if (!keep && !cancelled_) {
        if (auto owner = owner_.lock())
            owner->cancelListen(token_);
        return false;
    }
    return !cancelled_;
}

void ListenSession::onClosed(std::error_code ec, unsigned status) {
    auto owner = owner_.lock();
    if (!owner || cancelled_ || owner->stopped)
        return;
    const auto& opt = owner->options;
    if (ec)
        opt.logger.debug("[proxy-client] [listen:{}] stream ended: {}", token_, ec.message());
    else
        opt.logger.debug("[proxy-client] [listen:{}] stream ended with status {}", token_, status);
    backoff_ = backoff_.count() == 0 ? opt.listenRetryMin : std::min(backoff_ * 2, opt.listenRetryMax);
    retryTimer_.expires_after(backoff_);
    retryTimer_.async_wait([weak = weak_from_this()](const std::error_code& e) {
        if (e == asio::error::operation_aborted)
            return;
        if (auto self = weak.lock())
            self->open();
    });
}

void ListenSession::cancel() {
    cancelled_ = true;
    stream_.cancel();
    retryTimer_.cancel();
}

} // namespace dhtgate::detail
