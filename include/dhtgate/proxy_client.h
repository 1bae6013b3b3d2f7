// dhtgate: client of an OpenDHT-compatible proxy (dhtgate or the reference `dhtnode --proxyserver`).
//
// Speaks the proxy's HTTP protocol (spec §3-5, §11) with dhtgate::http::Client: get, put
// (optionally permanent, refreshed before the proxy forgets it), listen streams that survive
// reconnections, node info and stats. Values are libopendht's dht::Value / dht::InfoHash.
//
// Thread contract
//   Like http::Client: runs on a caller-owned io_context or on its own internal thread.
//   - Every public method may be called from any thread. Called on the io thread, it acts at
//     once; from another thread, it is posted there.
//   - Every callback runs on the io thread, never from inside the call that registered it.
//   - Each get/put/nodeInfo/stats call gets exactly one completion callback.
//   - Listen callbacks run until cancelListen(); once cancelListen() has run on the io thread no
//     further callback of that listen runs.
//   - Destroying the ProxyClient cancels everything without callbacks. Never destroy it from
//     inside one of its callbacks; with a caller-owned io_context, destroy it on the io thread or
//     while the io_context is not running.
//
// Errors: dhtgate::errc (transport failures from http::Client, bad_response for a body that is not
// what the protocol says) or http::statusError(status) for a non-200 answer.
#pragma once

#include "dhtgate/http_client.h"
#include "dhtgate/logger.h"

#include <opendht/infohash.h>
#include <opendht/value.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace dhtgate {

/// Node info (spec §4.4).
struct NodeInfo {
    struct Family {
        std::uint64_t good{0}, dubious{0}, incoming{0};
    };
    std::string nodeId; ///< DHT node id (40 hex)
    std::string id;     ///< public-key id of the node, if it has an identity
    Family ipv4, ipv6;
    std::uint64_t ops{0};
    std::string publicIp; ///< our address as the proxy sees it (node-info route only)
    std::string json;     ///< the raw JSON body

    /// The proxy's DHT is usable (some `good` node, spec §11.3).
    bool connected() const { return ipv4.good + ipv6.good > 0; }
};

/// Proxy statistics (spec §4.5).
struct ProxyStats {
    std::uint64_t listenCount{0};
    std::uint64_t putCount{0};
    std::uint64_t totalPermanentPuts{0};
    std::uint64_t pushListenersCount{0};
    double requestRate{0};
    std::optional<NodeInfo> nodeInfo;
    std::string json; ///< the raw JSON body
};

struct ProxyClientOptions {
    /// Proxy URL: "host:port", "http://host:port", "https://host:port", "[v6]:port".
    std::string url;
    /// Transport options (timeouts, TLS trust, logger used by the HTTP layer).
    http::ClientOptions http;
    /// Whole-request timeout of get, put, node info and stats (listen streams have none).
    std::chrono::milliseconds requestTimeout{std::chrono::seconds(60)};
    /// Permanent puts are re-posted this long after their last success. The proxy forgets them
    /// 24 h after the last refresh; 22 h is what reference clients use (spec §6.3).
    std::chrono::milliseconds permanentRefresh{std::chrono::hours(22)};
    /// Delay before re-posting a permanent put whose refresh failed.
    std::chrono::milliseconds permanentRetry{std::chrono::seconds(60)};
    /// Backoff of listen stream re-opening: starts at min, doubles up to max, back to min once
    /// a stream gets its 200 answer.
    std::chrono::milliseconds listenRetryMin{std::chrono::milliseconds(250)};
    std::chrono::milliseconds listenRetryMax{std::chrono::seconds(30)};
    Logger logger;

    ProxyClientOptions& setUrl(std::string u) {
        url = std::move(u);
        return *this;
    }
    ProxyClientOptions& setHttp(http::ClientOptions o) {
        http = std::move(o);
        return *this;
    }
    ProxyClientOptions& setRequestTimeout(std::chrono::milliseconds t) {
        requestTimeout = t;
        return *this;
    }
    ProxyClientOptions& setPermanentRefresh(std::chrono::milliseconds t) {
        permanentRefresh = t;
        return *this;
    }
    ProxyClientOptions& setPermanentRetry(std::chrono::milliseconds t) {
        permanentRetry = t;
        return *this;
    }
    ProxyClientOptions& setListenRetry(std::chrono::milliseconds min, std::chrono::milliseconds max) {
        listenRetryMin = min;
        listenRetryMax = max;
        return *this;
    }
    ProxyClientOptions& setLogger(Logger l) {
        logger = std::move(l);
        return *this;
    }
};

namespace detail {
class ProxyClientImpl;
}

class ProxyClient {
public:
    using Values = std::vector<std::shared_ptr<dht::Value>>;
    /// Completion of a get: every value found (one per id), or an error.
    using GetCallback = std::function<void(std::error_code, Values)>;
    /// Completion of a put: the value as stored by the proxy (with its final id), or an error.
    using PutCallback = std::function<void(std::error_code, std::shared_ptr<dht::Value>)>;
    /// Listen events: new or changed values (expired false), or values gone (expired true).
    /// Return false to stop listening (like cancelListen).
    using ListenCallback = std::function<bool(const Values&, bool expired)>;
    using NodeInfoCallback = std::function<void(std::error_code, NodeInfo)>;
    using StatsCallback = std::function<void(std::error_code, ProxyStats)>;
    using ListenToken = std::uint64_t;

    /// Own internal io thread. Throws std::system_error (errc::invalid_url) on a bad URL.
    explicit ProxyClient(ProxyClientOptions options);
    /// Runs on `io`, which the caller runs and keeps alive longer than the ProxyClient.
    ProxyClient(asio::io_context& io, ProxyClientOptions options);
    ~ProxyClient();
    ProxyClient(const ProxyClient&) = delete;
    ProxyClient& operator=(const ProxyClient&) = delete;

    /// GET /key/<key>: values found, deduplicated by id, filtered by `filter` if set.
    void get(const dht::InfoHash& key, GetCallback done, dht::Value::Filter filter = {});
    /// The value `id` under `key` (an empty list when absent).
    void get(const dht::InfoHash& key, dht::Value::Id id, GetCallback done);

    /// POST /key/<key>. An id of 0 lets the proxy choose one. `permanent`: the proxy keeps the
    /// value alive and this client re-posts it every `permanentRefresh` until cancelPut().
    void put(const dht::InfoHash& key, std::shared_ptr<dht::Value> value, PutCallback done, bool permanent = false);
    /// Stops refreshing a permanent put (the proxy forgets it 24 h after its last refresh).
    void cancelPut(const dht::InfoHash& key, dht::Value::Id id);

    /// Opens GET /key/<key>/listen and keeps it open: a dropped stream is re-opened with
    /// backoff; values already reported are not reported again, changed ones are.
    ListenToken listen(const dht::InfoHash& key, ListenCallback callback, dht::Value::Filter filter = {});
    /// Closes the stream; no callback of this listen runs afterwards (see thread contract).
    void cancelListen(ListenToken token);

    /// GET / (node info, with the path of the URL if it has one).
    void nodeInfo(NodeInfoCallback done);
    /// GET /node/stats.
    void stats(StatsCallback done);

    asio::io_context& ioContext();

private:
    std::shared_ptr<detail::ProxyClientImpl> impl_;
};

} // namespace dhtgate
