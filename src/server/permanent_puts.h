// Permanent puts (spec §6): values the DHT node keeps announcing until `permanent_put_lifetime`
// after their last refresh. One entry per (key, value id), each with its own expiry timer; at
// expiry the DHT put is cancelled. A put with id 0 is matched against existing entries of the key
// with the same push token, client id and content (§6.2) and refreshes that entry; otherwise it
// gets a random id. Concurrent puts of one (key, id) are all answered when the latest DHT put
// completes. State-executor only.
#pragma once

#include "codec/value_codec.h"
#include "push/push_platform.h"
#include "server/http_exchange.h"
#include "state/state_store.h"

#include <asio/steady_timer.hpp>
#include <opendht/infohash.h>
#include <opendht/value.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <vector>

namespace dhtgate::server {

class ServerContext;

class PermanentPuts {
public:
    explicit PermanentPuts(ServerContext& ctx);
    ~PermanentPuts();

    /// Creates or refreshes the entry and answers `req` (200 + stored value, or 502).
    void put(const dht::InfoHash& key, std::shared_ptr<dht::Value> value, const std::optional<codec::PushRequest>& push,
             const Request& req);

    std::size_t keyCount() const;
    std::size_t valueCount() const { return entries_.size(); }

    /// Cancels every DHT put and timer; pending answers get 503.
    void shutdown();

    // Persistence and push notices (permanent_puts_push.cpp).
    /// The entries with their wall-clock expiry.
    std::vector<state::PermanentPutRecord> records() const;
    /// Re-creates a saved entry (re-armed for the time left, re-put in the DHT); ignores it if expired.
    void restore(const state::PermanentPutRecord& record);

private:
    using EntryKey = std::pair<dht::InfoHash, dht::Value::Id>;
    struct Entry {
        explicit Entry(const asio::any_io_executor& ex) : timer(ex), noticeTimer(ex) {}
        std::shared_ptr<dht::Value> value;
        std::string pushToken;
        std::string clientId;
        std::string sessionId;
        asio::steady_timer timer;
        std::uint64_t generation {0}; ///< of the latest DHT put
        bool putPending {false};
        bool putOk {false};
        std::vector<Request> waiting; ///< answered when the latest DHT put completes
        push::Platform platform {push::Platform::none};
        std::string topic;
        asio::steady_timer noticeTimer; ///< the "timeout" push before expiry, with a push token only
    };

    Entry* findSameContent(const dht::InfoHash& key, const dht::Value& value, const std::string& token,
                           const std::string& clientId);
    void armExpiry(const EntryKey& k, Entry& e);
    void armExpiry(const EntryKey& k, Entry& e, std::chrono::steady_clock::duration lifetime);
    void armNotice(const EntryKey& k, Entry& e, std::chrono::steady_clock::duration lifetime);
    void onNotice(const EntryKey& k);
    void startDhtPut(const EntryKey& k, Entry& e);
    void onPutDone(const EntryKey& k, std::uint64_t generation, bool ok, bool noNodes);
    void answer(Entry& e, const Request& req);
    void expire(const EntryKey& k);

    ServerContext& ctx_;
    std::map<EntryKey, std::unique_ptr<Entry>> entries_;
    std::uint64_t nextGeneration_ {1};
    std::mt19937_64 rng_;
};

} // namespace dhtgate::server
