// POST /key/:hash (spec §3.5, §6): parse strictly, put (or hand to PermanentPuts), answer the
// stored value with its final id.
#include "server/handlers.h"

#include "codec/value_codec.h"
#include "server/get_operations.h"
#include "server/listen_registry.h"
#include "server/permanent_puts.h"
#include "server/server_context.h"

#include <opendht/dhtrunner.h>

namespace dhtgate::server {
namespace {

void answerPut(ServerContext& ctx, const Request& req, const dht::InfoHash& key, const std::shared_ptr<dht::Value>& value, bool ok,
               bool noNodes) {
    if (!ok && noNodes) {
        // Dht::put stores the value locally before announcing it: on a node without any peer
        // (standalone) that local copy is the whole DHT, so it is a success, not a 502.
        ctx.withNodeInfo([weak = std::weak_ptr<ServerContext>(ctx.shared_from_this()), key, req, value](const dht::NodeInfo* info) {
            const bool standalone = info && info->ipv4.getKnownNodes() + info->ipv6.getKnownNodes() == 0;
            if (!standalone)
                return req.replyError(502, "Put failed");
            if (auto ctx = weak.lock())
                ctx->listens().notifyLocalPut(key, *value);
            req.reply(200, codec::valueJson(*value) + '\n');
        });
        return;
    }
    if (!ok)
        return req.replyError(502, "Put failed");
    ctx.listens().notifyLocalPut(key, *value);
    req.reply(200, codec::valueJson(*value) + '\n');
}

} // namespace

void handlePut(ServerContext& ctx, const Request& req, const dht::InfoHash& key) {
    const auto& body = req.body();
    if (body.empty())
        return req.replyError(400, "Missing parameters");
    if (body.size() > ctx.config().max_body_size)
        return req.replyError(413, "Request body too large");
    codec::ParseError err;
    auto parsed = codec::parsePut(body, ctx.config().max_value_size, err);
    if (!parsed)
        return req.replyError(err.status, err.reason);
    if (parsed->permanent)
        return ctx.puts().put(key, std::move(parsed->value), parsed->push, req);

    auto value = std::move(parsed->value);
    ctx.gets().keyChanged(key);
    std::weak_ptr<ServerContext> weak = ctx.shared_from_this();
    const auto parked = ctx.park(req);
    ctx.dht().put(key, value, [weak, parked, key, value](bool ok, const std::vector<std::shared_ptr<dht::Node>>& nodes) {
        // DHT thread: hop to the state executor.
        if (auto ctx = weak.lock()) {
            const bool noNodes = nodes.empty();
            ctx->postFromAnyThread([ctx, parked, key, value, ok, noNodes] {
                if (auto req = ctx->unpark(parked))
                    answerPut(*ctx, *req, key, value, ok, noNodes);
            });
        }
    });
}

} // namespace dhtgate::server
