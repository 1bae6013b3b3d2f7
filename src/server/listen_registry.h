// Active listen streams (GET /key/:hash/listen), keyed by RESTinio connection id.
//
// All HTTP listeners of one key share one DHT listen and one serialised line per value event
// (serialised once, on the DHT thread). The registry keeps the current values of each key so a
// stream joining an existing DHT listen first receives what is already stored. The DHT listen is
// cancelled when the last stream of its key goes (connection closed, or shutdown).
// State-executor only, except the DHT callback which only serialises and posts.
#pragma once

#include "server/http_exchange.h"

#include <opendht/infohash.h>
#include <opendht/value.h>

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace dhtgate::server {

class ServerContext;

class ListenRegistry {
public:
    using Line = std::shared_ptr<const std::string>;
    struct Event {
        dht::Value::Id id;
        Line line;
        Line framed; ///< the line with its chunk framing, for direct streams (RawStream)
    };

    explicit ListenRegistry(ServerContext& ctx) : ctx_(ctx) {}
    ~ListenRegistry();

    /// Registers the stream of connection `connId` on `key` (one stream per connection).
    void add(const dht::InfoHash& key, std::uint64_t connId, Stream stream);
    bool hasStream(std::uint64_t connId) const { return sessions_.count(connId) != 0; }
    /// The connection is gone: drop its stream, cancel the DHT listen if it was the last one.
    void connectionClosed(std::uint64_t connId);

    /// A value this server stored on its node. libopendht 2.4 does not report a node's own puts
    /// to its local listeners when the node has no peer, so the server reports them itself;
    /// a later identical DHT event is not sent twice.
    void notifyLocalPut(const dht::InfoHash& key, const dht::Value& value);

    std::size_t streamCount() const { return sessions_.size(); }
    std::size_t dhtListenCount() const { return keys_.size(); }

    /// Ends every stream with its final chunk (a `barrierToken` copy is released once written),
    /// cancels every DHT listen.
    void shutdown(const std::function<void()>& barrierToken);

private:
    struct KeyListen {
        std::uint64_t generation {0};
        std::shared_future<std::size_t> token;
        std::map<dht::Value::Id, Event> current;
        std::set<std::uint64_t> connections;
    };
    struct Session {
        dht::InfoHash key;
        Stream stream;
    };

    void startDhtListen(const dht::InfoHash& key, KeyListen& kl);
    void onEvents(const dht::InfoHash& key, std::uint64_t generation, const std::vector<Event>& events, bool expired);
    static Event makeEvent(const dht::Value& value, bool expired);

    ServerContext& ctx_;
    std::map<dht::InfoHash, KeyListen> keys_;
    std::unordered_map<std::uint64_t, Session> sessions_;
    std::uint64_t nextGeneration_ {1};
};

} // namespace dhtgate::server
