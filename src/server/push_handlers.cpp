// SUBSCRIBE / UNSUBSCRIBE /key/:hash (and legacy /:hash), POST /node/pingPush (spec §3.8-3.10).
#include "server/handlers.h"

#include "codec/value_codec.h"
#include "push/push_payload.h"
#include "server/push_listeners.h"
#include "server/push_service.h"
#include "server/server_context.h"

namespace dhtgate::server {

void handleSubscribe(ServerContext& ctx, const Request& req, const dht::InfoHash& key) {
    codec::ParseError err;
    auto push = codec::parsePushRequest(req.body(), err);
    if (!push)
        return req.replyError(err.status, err.reason);
    ctx.pushListeners().subscribe(key, *push, req);
}

void handleUnsubscribe(ServerContext& ctx, const Request& req, const dht::InfoHash& key) {
    codec::ParseError err;
    auto push = codec::parsePushRequest(req.body(), err);
    if (!push) // a missing key is 400 "No token", not the reference's 501 (spec §15.11)
        return req.replyError(err.status, err.reason);
    ctx.pushListeners().unsubscribe(key, push->key, push->client_id);
    req.reply(200, {});
}

void handlePingPush(ServerContext& ctx, const Request& req) {
    codec::ParseError err;
    auto push = codec::parsePushRequest(req.body(), err);
    if (!push)
        return req.replyError(err.status, err.reason);
    auto* service = ctx.pushListeners().service();
    if (!service)
        return req.replyError(501, "Push notifications need a single-threaded server (threads = 1)");
    const auto platform = push::parsePlatform(push->platform);
    std::string why;
    if (!service->canSend(platform, why))
        return req.replyError(400, why);
    service->send(push::ping(push->client_id), push->key, platform, push->topic);
    req.reply(200, "{}\n"); // the reference never answers (spec §15.24)
}

} // namespace dhtgate::server
