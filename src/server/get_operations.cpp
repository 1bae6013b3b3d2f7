#include "server/get_operations.h"

#include "codec/value_codec.h"
#include "server/server_context.h"

#include <opendht/dhtrunner.h>

namespace dhtgate::server {

GetOperations::~GetOperations() = default;

void GetOperations::start(const dht::InfoHash& key, const Request& req, std::optional<dht::Value::Id> id) {
    const JoinKey joinKey {key, id.has_value(), id.value_or(0)};
    const auto window = ctx_.config().get_coalescing_window;
    if (auto it = joinable_.find(joinKey); it != joinable_.end()) {
        auto& get = *gets_.at(it->second);
        if (std::chrono::steady_clock::now() - get.started < window) {
            auto stream = req.startStream();
            for (const auto& chunk : get.chunks)
                stream.send(chunk);
            get.streams.push_back(std::move(stream));
            ++answers_;
            return;
        }
        closeToJoiners(get); // too old to join: this request starts a fresh one
    }

    const auto getId = nextId_++;
    auto get = std::make_unique<Get>(ctx_.executor());
    get->started = std::chrono::steady_clock::now();
    get->streams.push_back(req.startStream());
    ++answers_;
    if (window.count() > 0) {
        get->joinKey = joinKey;
        joinable_[joinKey] = getId;
    }
    std::weak_ptr<ServerContext> weak = ctx_.shared_from_this();
    get->timer.expires_after(ctx_.config().handle_timeout);
    get->timer.async_wait([weak, getId](const std::error_code& ec) {
        if (ec)
            return; // cancelled: the get finished first
        if (auto ctx = weak.lock()) {
            ctx->log().debug("[server] [get:{}] timed out, ending the answer", getId);
            ctx->gets().finish(getId);
        }
    });
    gets_.emplace(getId, std::move(get));

    // Both callbacks run on the DHT thread: serialise there (one chunk per batch), then post.
    auto onValues = [weak, getId](const std::vector<std::shared_ptr<dht::Value>>& values) {
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
            ctx->postFromAnyThread([ctx, getId, chunk = std::move(chunk)]() mutable {
                ctx->gets().onValues(getId, std::move(chunk));
            });
        return true;
    };
    auto onDone = [weak, getId](bool) {
        if (auto ctx = weak.lock())
            ctx->postFromAnyThread([ctx, getId] { ctx->gets().finish(getId); });
    };
    dht::Value::Filter filter;
    if (id)
        filter = dht::Value::IdFilter(*id);
    ctx_.dht().get(key, std::move(onValues), std::move(onDone), std::move(filter));
}

void GetOperations::keyChanged(const dht::InfoHash& key) {
    auto it = joinable_.lower_bound(JoinKey {key, false, 0});
    while (it != joinable_.end() && std::get<0>(it->first) == key) {
        gets_.at(it->second)->joinKey.reset();
        it = joinable_.erase(it);
    }
}

void GetOperations::closeToJoiners(Get& get) {
    if (get.joinKey) {
        joinable_.erase(*get.joinKey);
        get.joinKey.reset();
    }
}

void GetOperations::onValues(std::uint64_t getId, std::string chunk) {
    auto it = gets_.find(getId);
    if (it == gets_.end())
        return;
    auto& get = *it->second;
    auto shared = std::make_shared<const std::string>(std::move(chunk));
    for (auto& stream : get.streams)
        stream.send(shared);
    if (get.joinKey)
        get.chunks.push_back(std::move(shared));
}

void GetOperations::finish(std::uint64_t getId) {
    auto it = gets_.find(getId);
    if (it == gets_.end())
        return;
    auto get = std::move(it->second);
    gets_.erase(it);
    closeToJoiners(*get);
    get->timer.cancel();
    answers_ -= get->streams.size();
    for (auto& stream : get->streams)
        stream.end();
}

void GetOperations::shutdown(const std::function<void()>& barrierToken) {
    for (auto& [getId, get] : gets_) {
        get->timer.cancel();
        for (auto& stream : get->streams)
            stream.end(barrierToken);
    }
    gets_.clear();
    joinable_.clear();
    answers_ = 0;
}

} // namespace dhtgate::server
