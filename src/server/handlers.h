// The route handlers. Each runs on the state executor, answers through the Request, and never
// throws (the router catches what a bug might throw and answers 500).
#pragma once

#include "server/http_exchange.h"

#include <opendht/infohash.h>
#include <opendht/value.h>

#include <optional>

namespace dhtgate::server {

class ServerContext;

/// The route table: dispatches one request (spec §3.1).
void route(ServerContext& ctx, const Request& req);
/// route() for the event loop: an exception (a bug of ours) is logged and answered 500, never
/// propagated into the io_context.
void routeSafely(ServerContext& ctx, const Request& req) noexcept;

// node_handlers.cpp
void handleNodeInfo(ServerContext& ctx, const Request& req);
void handleStats(ServerContext& ctx, const Request& req);

// get_handler.cpp
void handleGet(ServerContext& ctx, const Request& req, const dht::InfoHash& key, std::optional<dht::Value::Id> id);

// put_handler.cpp
void handlePut(ServerContext& ctx, const Request& req, const dht::InfoHash& key);

// sign_handlers.cpp (only with ServerConfig::identity)
void handleSign(ServerContext& ctx, const Request& req, const dht::InfoHash& key);
void handleEncrypt(ServerContext& ctx, const Request& req, const dht::InfoHash& key);

// listen_handler.cpp
void handleListen(ServerContext& ctx, const Request& req, const dht::InfoHash& key);

// push_handlers.cpp
void handleSubscribe(ServerContext& ctx, const Request& req, const dht::InfoHash& key);
void handleUnsubscribe(ServerContext& ctx, const Request& req, const dht::InfoHash& key);
void handlePingPush(ServerContext& ctx, const Request& req);

} // namespace dhtgate::server
