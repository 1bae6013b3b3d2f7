// The put/get/listen scenario every proxy must pass with dhtgate::ProxyClient (reference dhtnode
// and dhtgate's own server alike), plus small helpers to wait on ProxyClient callbacks.
#pragma once

#include "dhtgate/proxy_client.h"

#include <opendht/dhtrunner.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

namespace dhtgate::test {

/// Collects listen events from the io thread; tests wait on it.
class ListenRecorder {
public:
    struct Event {
        std::string data;
        dht::Value::Id id;
        bool expired;
    };
    ProxyClient::ListenCallback callback();
    /// Waits until at least `n` events were recorded.
    bool waitCount(std::size_t n, std::chrono::milliseconds timeout);
    std::vector<Event> events() const;

private:
    mutable std::mutex mutex_; // guards events_
    std::condition_variable cv_;
    std::vector<Event> events_;
};

std::string text(const dht::Value& v);
std::shared_ptr<dht::Value> textValue(const std::string& s);

/// Blocking wrappers (test thread only) with a 20 s timeout; they assert on timeouts.
NodeInfo nodeInfo(ProxyClient& client, std::error_code& ec);
ProxyClient::Values get(ProxyClient& client, const dht::InfoHash& key, std::error_code& ec);
std::shared_ptr<dht::Value> put(ProxyClient& client, const dht::InfoHash& key, std::shared_ptr<dht::Value> v,
                                std::error_code& ec, bool permanent = false);
/// Puts through the DHT peer directly and waits for the DHT's answer.
bool peerPut(dht::DhtRunner& peer, const dht::InfoHash& key, std::shared_ptr<dht::Value> v);
/// Runs a no-op through the client's io thread and waits for it: everything posted before has run.
void syncIo(ProxyClient& client);

/// The shared scenario: node info, get of a peer's value, put, listen (stored value first,
/// then new ones, each exactly once), get by id, cancelListen stops callbacks, stats.
void runProxyScenario(const std::string& url, dht::DhtRunner& peer);

} // namespace dhtgate::test
