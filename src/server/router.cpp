// The route table (spec §3.1): manual dispatch on the method and the path segments, no regex.
// Query strings are ignored and one trailing slash is accepted. Unknown routes answer 404, known
// paths with another method 405 + Allow; both with a JSON body and CORS headers (§15.10).
#include "server/handlers.h"

#include "codec/value_codec.h"
#include "server/listen_registry.h"
#include "server/server_context.h"

#include <charconv>

namespace dhtgate::server {
namespace {

constexpr std::string_view kNoIdentity = "This server has no identity: sign and encrypt are not available";

bool parseValueId(std::string_view s, dht::Value::Id& out) {
    const auto* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, out);
    return !s.empty() && ec == std::errc() && p == end;
}

/// Routes that start a DHT operation must not run behind a listen stream on the same connection:
/// their answer would queue behind a response that never ends (§15.2).
bool behindStream(ServerContext& ctx, const Request& req) {
    if (!ctx.listens().hasStream(req.connectionId()))
        return false;
    req.replyError(409, "Request pipelined behind a listen stream");
    return true;
}

/// /key/:hash and the legacy /:hash.
void routeKey(ServerContext& ctx, const Request& req, const dht::InfoHash& key) {
    switch (req.method()) {
    case Method::get: return behindStream(ctx, req) ? void() : handleGet(ctx, req, key, std::nullopt);
    case Method::post: return behindStream(ctx, req) ? void() : handlePut(ctx, req, key);
    case Method::options: return req.replyOptions();
    case Method::subscribe: return behindStream(ctx, req) ? void() : handleSubscribe(ctx, req, key);
    case Method::unsubscribe: return handleUnsubscribe(ctx, req, key);
    default: return req.replyNotAllowed("OPTIONS, GET, POST, SUBSCRIBE, UNSUBSCRIBE");
    }
}

} // namespace

void route(ServerContext& ctx, const Request& req) {
    if (ctx.stopping())
        return req.replyError(503, "Server stopping");
    std::string_view seg[4];
    const auto n = splitPath(req.path(), seg, 3);
    const auto m = req.method();
    const bool nodeInfoRoute = n == 0 || (n == 2 && seg[0] == "node" && seg[1] == "info");
    if (!nodeInfoRoute)
        ++ctx.stats().requests;

    dht::InfoHash key;
    std::string reason;
    if (n == 0) { // GET /
        return m == Method::get ? handleNodeInfo(ctx, req) : req.replyNotAllowed("GET");
    }
    if (n == 2 && seg[0] == "node") {
        if (seg[1] == "info")
            return m == Method::get ? handleNodeInfo(ctx, req) : req.replyNotAllowed("GET");
        if (seg[1] == "stats")
            return m == Method::get ? handleStats(ctx, req) : req.replyNotAllowed("GET");
        if (seg[1] == "pingPush")
            return m == Method::post ? handlePingPush(ctx, req) : req.replyNotAllowed("POST");
    }
    if (n == 3 && seg[0] == ".dhtgate" && seg[1] == "reject") {
        // Synthesised by GuardedSocket for a request over a limit (see guarded_socket.h).
        if (seg[2] == "413")
            return req.replyError(413, "Request body too large");
        if (seg[2] == "431")
            return req.replyError(431, "Request header section too large");
    }
    if (n == 1) { // legacy /:hash
        if (!codec::parseKey(seg[0], key, reason))
            return req.replyError(400, reason);
        return routeKey(ctx, req, key);
    }
    if (seg[0] != "key" || n > 3)
        return req.replyError(404, "No such route");
    if (!codec::parseKey(seg[1], key, reason))
        return req.replyError(400, reason);
    if (n == 2) // /key/:hash
        return routeKey(ctx, req, key);

    const auto sub = seg[2];
    if (sub == "listen") {
        if (m == Method::options)
            return req.replyOptions();
        if (m != Method::get)
            return req.replyNotAllowed("OPTIONS, GET");
        return behindStream(ctx, req) ? void() : handleListen(ctx, req, key);
    }
    if (sub == "options")
        return m == Method::get ? req.replyOptions() : req.replyNotAllowed("GET");
    if (sub == "sign" || sub == "encrypt") {
        if (m != Method::post)
            return req.replyNotAllowed("POST");
        if (!ctx.config().identity || !ctx.config().identity->first)
            return req.replyError(501, kNoIdentity);
        if (behindStream(ctx, req))
            return;
        return sub == "sign" ? handleSign(ctx, req, key) : handleEncrypt(ctx, req, key);
    }
    dht::Value::Id id;
    if (parseValueId(sub, id)) { // GET /key/:hash/:valueid
        if (m != Method::get)
            return req.replyNotAllowed("GET");
        return behindStream(ctx, req) ? void() : handleGet(ctx, req, key, id);
    }
    return req.replyError(404, "No such route");
}

void routeSafely(ServerContext& ctx, const Request& req) noexcept {
    try {
        route(ctx, req);
    } catch (const std::exception& e) {
        ctx.log().error("[server] [conn:{}] bug: {} {} threw: {}", req.connectionId(), req.methodName(), req.path(),
                        e.what());
        try {
            req.replyError(500, "Internal server error");
        } catch (...) {
        }
    }
}

} // namespace dhtgate::server
