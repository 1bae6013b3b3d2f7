// GET /key/:hash and GET /key/:hash/:valueid (spec §3.4): chunked, one chunk per DHT batch,
// the answer ends when the search ends.
#include "server/handlers.h"

#include "server/get_operations.h"
#include "server/server_context.h"

namespace dhtgate::server {

void handleGet(ServerContext& ctx, const Request& req, const dht::InfoHash& key, std::optional<dht::Value::Id> id) {
    ctx.gets().start(key, req, id);
}

} // namespace dhtgate::server
