// In-flight DHT gets (GET /key/:hash, GET /key/:hash/:valueid), each streaming its result batches
// as chunks until the DHT search ends or `config.handle_timeout` passes. State-executor only.
//
// Coalescing: a GET arriving while a DHT get of the same key (and value id) started less than
// `config.get_coalescing_window` ago is still running joins it instead of starting another. It
// is sent the batches found so far, then the rest as they come, and ends with the others: the
// answer a get started a moment earlier would give. Each batch is serialised once for every
// joined answer. A put through this proxy closes the key's gets to joiners, so a client that
// puts then gets always gets a DHT get started after its put.
#pragma once

#include "server/http_exchange.h"

#include <asio/steady_timer.hpp>
#include <opendht/infohash.h>
#include <opendht/value.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace dhtgate::server {

class ServerContext;

class GetOperations {
public:
    explicit GetOperations(ServerContext& ctx) : ctx_(ctx) {}
    ~GetOperations();

    void start(const dht::InfoHash& key, const Request& req, std::optional<dht::Value::Id> id);
    /// A put of `key` is starting: later gets of it do not join gets already running.
    void keyChanged(const dht::InfoHash& key);
    /// Answers in flight (joined ones included).
    std::size_t count() const { return answers_; }
    /// DHT gets in flight.
    std::size_t dhtGetCount() const { return gets_.size(); }
    /// Ends every stream now (a `barrierToken` copy is released once each final chunk is written).
    void shutdown(const std::function<void()>& barrierToken);

private:
    /// (key, has a value id, value id): what a joiner must match.
    using JoinKey = std::tuple<dht::InfoHash, bool, dht::Value::Id>;
    struct Get {
        explicit Get(const asio::any_io_executor& ex) : timer(ex) {}
        std::optional<JoinKey> joinKey; ///< set while joinable
        std::chrono::steady_clock::time_point started;
        std::vector<std::shared_ptr<const std::string>> chunks; ///< sent so far, for late joiners
        std::vector<Stream> streams;
        asio::steady_timer timer;
    };
    void onValues(std::uint64_t getId, std::string chunk);
    void finish(std::uint64_t getId);
    void closeToJoiners(Get& get);

    ServerContext& ctx_;
    std::unordered_map<std::uint64_t, std::unique_ptr<Get>> gets_;
    std::map<JoinKey, std::uint64_t> joinable_;
    std::size_t answers_ {0};
    std::uint64_t nextId_ {1};
};

} // namespace dhtgate::server
