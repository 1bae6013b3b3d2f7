// GET /key/:hash/listen (spec §3.6, §5): a chunked stream that never ends on its own.
#include "server/handlers.h"

#include "server/listen_registry.h"
#include "server/server_context.h"

namespace dhtgate::server {

void handleListen(ServerContext& ctx, const Request& req, const dht::InfoHash& key) {
    // A listen never ends: it needs chunked encoding, which HTTP/1.0 does not have.
    if (req.http10())
        return req.replyError(505, "Listen needs HTTP/1.1");
    const auto connId = req.connectionId();
    std::weak_ptr<ServerContext> weak = ctx.shared_from_this();
    ctx.listens().add(key, connId, req.startListenStream([weak, connId] {
        if (auto ctx = weak.lock())
            ctx->listens().connectionClosed(connId);
    }));
}

} // namespace dhtgate::server
