// Push listeners (spec §3.8-3.10, §7): DHT listens the server holds on behalf of devices that
// cannot keep a listen stream open, waking them through the push gateway.
//
// A listener is (token, key, client_id). All listeners of one key share ONE DHT listen; each DHT
// event gives one push per listener. A listener expires `push_listener_lifetime` after its last
// SUBSCRIBE, and gets a "timeout" notice `push_expiry_margin` before that, each on its own
// asio::steady_timer. A listener joining a key whose DHT listen already runs gets one push for
// the values already known, as a fresh DHT listen would give it.
//
// Thread contract: state-executor only, except the DHT callback, which only posts.
#pragma once

#include "codec/value_codec.h"
#include "push/push_platform.h"
#include "server/http_exchange.h"
#include "state/state_store.h"

#include <asio/steady_timer.hpp>
#include <opendht/infohash.h>
#include <opendht/value.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dhtgate::server {

class ServerContext;
class PushService;

class PushListeners {
public:
    explicit PushListeners(ServerContext& ctx);
    ~PushListeners();

    /// The push service, or nullptr when push is unavailable (a server with an io pool).
    PushService* service() { return service_.get(); }

    /// SUBSCRIBE: creates or refreshes the listener and answers `req` (spec §3.8).
    void subscribe(const dht::InfoHash& key, const codec::PushRequest& push, const Request& req);
    /// UNSUBSCRIBE: removes the listener if it exists. Returns whether one was removed.
    bool unsubscribe(const dht::InfoHash& key, const std::string& token, const std::string& clientId);

    /// A value this server stored itself (see ListenRegistry::notifyLocalPut).
    void notifyLocalPut(const dht::InfoHash& key, const dht::Value& value);

    /// Distinct tokens with at least one listener (stats "pushListenersCount").
    std::size_t tokenCount() const;
    std::size_t listenerCount() const;
    std::size_t dhtListenCount() const { return keys_.size(); }

    /// Persistence: the listeners with their wall-clock expiry; restore() re-creates one (a
    /// record already expired is ignored).
    std::vector<state::PushListenerRecord> records() const;
    void restore(const state::PushListenerRecord& record);

    /// Cancels every DHT listen and timer and drops the sender (pending pushes are lost).
    void shutdown();

private:
    using ListenerId = std::pair<std::string, std::string>; ///< (token, client_id)
    struct Listener {
        explicit Listener(const asio::any_io_executor& ex) : expiryTimer(ex), noticeTimer(ex) {}
        std::string sessionId;
        push::Platform platform {push::Platform::none};
        std::string topic;
        asio::steady_timer expiryTimer;
        asio::steady_timer noticeTimer;
    };
    /// What a push needs of a value, and its packed form to recognise a value already pushed.
    struct Seen {
        dht::Value::Id id {0};
        unsigned priority {0};
        dht::Blob packed;
    };
    using Values = std::vector<Seen>;
    struct KeyListen {
        std::uint64_t generation {0};
        std::shared_future<std::size_t> token;
        std::map<dht::Value::Id, Seen> current;
        std::map<ListenerId, std::unique_ptr<Listener>> listeners;
    };
    Listener& upsert(const dht::InfoHash& key, const ListenerId& id, bool& created, bool& newKey);
    void arm(const dht::InfoHash& key, const ListenerId& id, Listener& l, std::chrono::steady_clock::duration lifetime);
    void onNotice(const dht::InfoHash& key, const ListenerId& id);
    void onExpiry(const dht::InfoHash& key, const ListenerId& id);
    void remove(std::map<dht::InfoHash, KeyListen>::iterator it, const ListenerId& id);
    void startDhtListen(const dht::InfoHash& key, KeyListen& kl);
    void onEvents(const dht::InfoHash& key, std::uint64_t generation, const Values& values, bool expired);
    void pushValues(const dht::InfoHash& key, const ListenerId& id, const Listener& l, const Values& values,
                    bool expired);

    ServerContext& ctx_;
    std::unique_ptr<PushService> service_;
    std::map<dht::InfoHash, KeyListen> keys_;
    std::uint64_t nextGeneration_ {1};
};

} // namespace dhtgate::server
