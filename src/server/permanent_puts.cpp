#include "server/permanent_puts.h"

#include "server/get_operations.h"
#include "server/listen_registry.h"
#include "server/server_context.h"

#include <opendht/dhtrunner.h>

#include <set>

namespace dhtgate::server {

PermanentPuts::PermanentPuts(ServerContext& ctx) : ctx_(ctx), rng_(std::random_device {}()) {}
PermanentPuts::~PermanentPuts() = default;

std::size_t PermanentPuts::keyCount() const {
    std::size_t n = 0;
    const dht::InfoHash* last = nullptr;
    for (const auto& [k, e] : entries_) { // sorted by key: count distinct keys
        if (!last || *last != k.first)
            ++n;
        last = &k.first;
    }
    return n;
}

PermanentPuts::Entry* PermanentPuts::findSameContent(const dht::InfoHash& key, const dht::Value& value,
                                                     const std::string& token, const std::string& clientId) {
    for (auto it = entries_.lower_bound({key, 0}); it != entries_.end() && it->first.first == key; ++it) {
        auto& e = *it->second;
        if (e.pushToken == token && e.clientId == clientId && e.value->contentEquals(value))
            return &e;
    }
    return nullptr;
}

void PermanentPuts::put(const dht::InfoHash& key, std::shared_ptr<dht::Value> value,
                        const std::optional<codec::PushRequest>& push, const Request& req) {
    const std::string token = push ? push->key : std::string();
    const std::string clientId = push ? push->client_id : std::string();

    if (value->id == dht::Value::INVALID_ID) {
        if (auto* same = findSameContent(key, *value, token, clientId)) {
            // §6.2: a re-put of known content refreshes the existing entry, no new DHT put.
            if (push && !push->session_id.empty())
                same->sessionId = push->session_id;
            armExpiry({key, same->value->id}, *same);
            answer(*same, req);
            return;
        }
        std::uniform_int_distribution<dht::Value::Id> dist(1);
        do
            value->id = dist(rng_);
        while (entries_.count({key, value->id}));
    }

    const EntryKey k {key, value->id};
    auto& slot = entries_[k];
    if (!slot) {
        slot = std::make_unique<Entry>(ctx_.executor());
        slot->pushToken = token;
        slot->clientId = clientId;
        if (push) {
            slot->platform = push::parsePlatform(push->platform);
            slot->topic = push->topic;
        }
    }
    auto& e = *slot;
    if (push && !push->session_id.empty())
        e.sessionId = push->session_id;
    armExpiry(k, e);
    e.waiting.push_back(req);
    if (e.value && e.value->contentEquals(*value) && e.value->seq == value->seq) {
        // Same value again (e.g. the 2.x client's concurrent certificate announcements):
        // answer with the result of the DHT put already issued.
        if (!e.putPending)
            onPutDone(k, e.generation, e.putOk, false);
        return;
    }
    e.value = std::move(value);
    startDhtPut(k, e);
}

void PermanentPuts::startDhtPut(const EntryKey& k, Entry& e) {
    e.generation = nextGeneration_++;
    e.putPending = true;
    std::weak_ptr<ServerContext> weak = ctx_.shared_from_this();
    const auto generation = e.generation;
    ctx_.gets().keyChanged(k.first);
    ctx_.dht().put(
        k.first, e.value,
        [weak, k, generation](bool ok, const std::vector<std::shared_ptr<dht::Node>>& nodes) {
            if (auto ctx = weak.lock()) {
                const bool noNodes = nodes.empty();
                ctx->postFromAnyThread([ctx, k, generation, ok, noNodes] {
                    ctx->puts().onPutDone(k, generation, ok, noNodes);
                });
            }
        },
        dht::time_point::max(), true);
}

void PermanentPuts::onPutDone(const EntryKey& k, std::uint64_t generation, bool ok, bool noNodes) {
    auto it = entries_.find(k);
    if (it == entries_.end() || it->second->generation != generation)
        return; // superseded by a later put of the same (key, id): its completion answers
    auto& e = *it->second;
    if (!ok && noNodes) {
        // Stored locally but announced to nobody: a success on a standalone node (no peers).
        ctx_.withNodeInfo([weak = std::weak_ptr<ServerContext>(ctx_.shared_from_this()), k, generation](const dht::NodeInfo* info) {
            auto ctx = weak.lock();
            if (!ctx)
                return;
            const bool standalone = info && info->ipv4.getKnownNodes() + info->ipv6.getKnownNodes() == 0;
            ctx->puts().onPutDone(k, generation, standalone, false);
        });
        return;
    }
    e.putPending = false;
    e.putOk = ok;
    if (ok)
        ctx_.listens().notifyLocalPut(k.first, *e.value);
    auto waiting = std::move(e.waiting);
    e.waiting.clear();
    for (const auto& req : waiting)
        answer(e, req);
}

void PermanentPuts::answer(Entry& e, const Request& req) {
    if (e.putPending) {
        e.waiting.push_back(req);
        return;
    }
    if (!e.putOk) {
        req.replyError(502, "Put failed");
        return;
    }
    std::string body;
    codec::appendValueJson(body, *e.value);
    body += '\n';
    req.reply(200, std::move(body));
}

void PermanentPuts::armExpiry(const EntryKey& k, Entry& e) { armExpiry(k, e, ctx_.config().permanent_put_lifetime); }

void PermanentPuts::armExpiry(const EntryKey& k, Entry& e, std::chrono::steady_clock::duration lifetime) {
    armNotice(k, e, lifetime);
    ctx_.stateChanged();
    e.timer.expires_after(lifetime);
    e.timer.async_wait([weak = std::weak_ptr<ServerContext>(ctx_.shared_from_this()), k](const std::error_code& ec) {
        if (ec)
            return; // re-armed or cancelled
        if (auto ctx = weak.lock())
            ctx->puts().expire(k);
    });
}

void PermanentPuts::expire(const EntryKey& k) {
    auto it = entries_.find(k);
    if (it == entries_.end() || it->second->timer.expiry() > asio::steady_timer::clock_type::now())
        return; // refreshed after this timer fired
    ctx_.log().debug("[server] [put] permanent put {} {} expired", k.first.toString(), k.second);
    ctx_.dht().cancelPut(k.first, k.second);
    for (const auto& req : it->second->waiting)
        req.replyError(503, "Permanent put expired");
    entries_.erase(it);
    ctx_.stateChanged();
}

void PermanentPuts::shutdown() {
    for (auto& [k, e] : entries_) {
        e->timer.cancel();
        ctx_.dht().cancelPut(k.first, k.second);
        for (const auto& req : e->waiting)
            req.replyError(503, "Server stopping");
    }
    entries_.clear();
}

} // namespace dhtgate::server
