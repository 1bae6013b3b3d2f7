#include "server/get_operations.h"

#include "codec/value_codec.h"
#include "server/server_context.h"

#include <opendht/dhtrunner.h>

namespace dhtgate::server {

GetOperations::~GetOperations() = default;

void GetOperations::start(const dht::InfoHash& key, const Request& req, std::optional<dht::Value::Id> id) {
    const auto opId = nextId_++;
    auto op = std::make_unique<Op>(req.startStream(), ctx_.executor());
    std::weak_ptr<ServerContext> weak = ctx_.shared_from_this();
    op->timer.expires_after(ctx_.config().handle_timeout);
    op->timer.async_wait([weak, opId](const std::error_code& ec) {
        if (ec)
            return; // cancelled: the get finished first
        if (auto ctx = weak.lock()) {
            ctx->log().debug("[server] [get:{}] timed out, ending the answer", opId);
            ctx->gets().finish(opId);
        }
    });
    ops_.emplace(opId, std::move(op));

    // Both callbacks run on the DHT thread: serialise there (one chunk per batch), then post.
    auto onValues = [weak, opId](const std::vector<std::shared_ptr<dht::Value>>& values) {
        auto ctx = weak.lock();
        if (!ctx)
            return false;
        std::string chunk;
        for (const auto& v : values) {
            if (!v)
                continue;
            codec::appendValueJson(chunk, *v);
            chunk += '\n';
        }
        if (!chunk.empty())
            ctx->postFromAnyThread([ctx, opId, chunk = std::move(chunk)]() mutable {
                ctx->gets().onValues(opId, std::move(chunk));
            });
        return true;
    };
    auto onDone = [weak, opId](bool) {
        if (auto ctx = weak.lock())
            ctx->postFromAnyThread([ctx, opId] { ctx->gets().finish(opId); });
    };
    dht::Value::Filter filter;
    if (id)
        filter = dht::Value::IdFilter(*id);
    ctx_.dht().get(key, std::move(onValues), std::move(onDone), std::move(filter));
}

void GetOperations::onValues(std::uint64_t opId, std::string chunk) {
    auto it = ops_.find(opId);
    if (it != ops_.end())
        it->second->stream.send(std::move(chunk));
}

void GetOperations::finish(std::uint64_t opId) {
    auto it = ops_.find(opId);
    if (it == ops_.end())
        return;
    it->second->timer.cancel();
    it->second->stream.end();
    ops_.erase(it);
}

void GetOperations::shutdown(const std::function<void()>& barrierToken) {
    for (auto& [opId, op] : ops_) {
        op->timer.cancel();
        op->stream.end(barrierToken);
    }
    ops_.clear();
}

} // namespace dhtgate::server
