// In-flight DHT gets (GET /key/:hash, GET /key/:hash/:valueid), each streaming its result batches
// as chunks until the DHT search ends or `config.handle_timeout` passes. State-executor only.
#pragma once

#include "server/http_exchange.h"

#include <asio/steady_timer.hpp>
#include <opendht/infohash.h>
#include <opendht/value.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>

namespace dhtgate::server {

class ServerContext;

class GetOperations {
public:
    explicit GetOperations(ServerContext& ctx) : ctx_(ctx) {}
    ~GetOperations();

    void start(const dht::InfoHash& key, const Request& req, std::optional<dht::Value::Id> id);
    std::size_t count() const { return ops_.size(); }
    /// Ends every stream now (a `barrierToken` copy is released once each final chunk is written).
    void shutdown(const std::function<void()>& barrierToken);

private:
    struct Op {
        Op(Stream s, const asio::any_io_executor& ex) : stream(std::move(s)), timer(ex) {}
        Stream stream;
        asio::steady_timer timer;
    };
    void onValues(std::uint64_t opId, std::string chunk);
    void finish(std::uint64_t opId);

    ServerContext& ctx_;
    std::unordered_map<std::uint64_t, std::unique_ptr<Op>> ops_;
    std::uint64_t nextId_ {1};
};

} // namespace dhtgate::server
