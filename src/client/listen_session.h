// One listen on a key through the proxy: a long-lived GET /key/<h>/listen, re-opened when dropped.
#pragma once

#include "dhtgate/proxy_client.h"

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include <map>
#include <memory>
#include <string>

namespace dhtgate::detail {

class ProxyClientImpl;

/// Keeps a listen stream open (io thread only).
///
/// Each value line is decoded; a value is reported when its id is new or its content changed,
/// and reported expired when the proxy says so for a value reported before. Because a re-opened
/// stream starts by re-sending every stored value, this bookkeeping is what prevents duplicates
/// after a reconnection. When the stream ends for any reason (server restart, network error,
/// non-200 answer), it is re-opened after a backoff delay (doubling from listenRetryMin to
/// listenRetryMax, reset by the next 200 answer).
class ListenSession : public std::enable_shared_from_this<ListenSession> {
public:
    ListenSession(std::weak_ptr<ProxyClientImpl> owner, asio::io_context& io, ProxyClient::ListenToken token,
                  dht::InfoHash key, ProxyClient::ListenCallback callback, dht::Value::Filter filter);

    void open();
    /// Closes the stream and stops re-opening; no callback runs afterwards.
    void cancel();

private:
    bool onLine(std::string_view line);
    void onClosed(std::error_code ec, unsigned status);
    bool deliver(const std::shared_ptr<dht::Value>& value, bool expired);

    std::weak_ptr<ProxyClientImpl> owner_;
    ProxyClient::ListenToken token_;
    dht::InfoHash key_;
    ProxyClient::ListenCallback callback_;
    dht::Value::Filter filter_;
    std::map<dht::Value::Id, std::string> seen_; ///< canonical JSON of each reported value
    http::RequestHandle stream_;
    asio::steady_timer retryTimer_;
    std::chrono::milliseconds backoff_{0};
    bool cancelled_{false};
    bool status200_{true};
    unsigned opens_{0};
};

} // namespace dhtgate::detail
