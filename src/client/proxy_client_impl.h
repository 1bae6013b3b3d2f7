// Internal state of a ProxyClient (io thread only).
#pragma once

#include "client/url.h"
#include "dhtgate/proxy_client.h"

#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <utility>

namespace dhtgate::detail {

class ListenSession;

/// A permanent put this client keeps refreshing.
struct PermanentPut {
    PermanentPut(asio::io_context& io, dht::InfoHash k, std::shared_ptr<dht::Value> v)
        : key(k), value(std::move(v)), timer(io) {}
    dht::InfoHash key;
    std::shared_ptr<dht::Value> value; ///< with the id the proxy assigned
    asio::steady_timer timer;
};

class ProxyClientImpl : public std::enable_shared_from_this<ProxyClientImpl> {
public:
    ProxyClientImpl(asio::io_context* callerIo, ProxyClientOptions options);

    /// Runs `f` now when on the io thread, else posts it there.
    template <typename F> void onIo(F&& f);
    bool onIoThread() const;

    void get(const dht::InfoHash& key, ProxyClient::GetCallback done, dht::Value::Filter filter);
    void put(const dht::InfoHash& key, std::shared_ptr<dht::Value> value, ProxyClient::PutCallback done,
             bool permanent);
    void cancelPut(const dht::InfoHash& key, dht::Value::Id id);
    void listen(ProxyClient::ListenToken token, const dht::InfoHash& key, ProxyClient::ListenCallback cb,
                dht::Value::Filter filter);
    void cancelListen(ProxyClient::ListenToken token);
    void nodeInfo(ProxyClient::NodeInfoCallback done);
    void stats(ProxyClient::StatsCallback done);
    /// Cancels every operation without callbacks.
    void shutdown();

    std::string keyUrl(const dht::InfoHash& key, std::string_view suffix = {}) const;
    http::Request request(std::string method, std::string url) const;

    const ProxyClientOptions options;
    std::unique_ptr<http::Client> http;
    const bool ownThread;
    std::atomic<ProxyClient::ListenToken> nextToken{1};
    bool stopped{false};

private:
    void startPermanentRefresh(const std::shared_ptr<PermanentPut>& entry, std::chrono::milliseconds after);
    void sendPut(const dht::InfoHash& key, std::shared_ptr<dht::Value> value, bool permanent,
                 ProxyClient::PutCallback done);

    http::detail::Url base_;
    std::string root_; ///< scheme://host:port
    std::map<ProxyClient::ListenToken, std::shared_ptr<ListenSession>> listens_;
    std::map<std::pair<dht::InfoHash, dht::Value::Id>, std::shared_ptr<PermanentPut>> permanents_;
};

template <typename F> void ProxyClientImpl::onIo(F&& f) {
    if (onIoThread())
        f();
    else
        asio::post(http->ioContext(), std::forward<F>(f));
}

} // namespace dhtgate::detail
