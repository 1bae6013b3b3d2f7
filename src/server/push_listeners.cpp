#include "server/push_listeners.h"

#include "push/push_payload.h"
#include "server/get_operations.h"
#include "server/push_service.h"
#include "server/server_context.h"
#include "server/wall_clock.h"

#include <asio/io_context.hpp>
#include <asio/strand.hpp>
#include <opendht/dhtrunner.h>

#include <set>
#include <typeinfo>

namespace dhtgate::server {
PushListeners::PushListeners(ServerContext& ctx) : ctx_(ctx) {
    // PushSender runs on a plain io_context thread; with an io pool (a strand) it would race.
    if (ctx.executor().target_type() == typeid(asio::strand<asio::io_context::executor_type>))
        return;
    auto& io = static_cast<asio::io_context&>(asio::query(ctx.executor(), asio::execution::context));
    service_ = std::make_unique<PushService>(io, ctx.config(), ctx.log());
}

PushListeners::~PushListeners() = default;

void PushListeners::subscribe(const dht::InfoHash& key, const codec::PushRequest& push, const Request& req) {
    if (!service_)
        return req.replyError(501, "Push notifications need a single-threaded server (threads = 1)");
    const auto platform = push::parsePlatform(push.platform);
    std::string why;
    if (!service_->canSend(platform, why))
        return req.replyError(400, why);
    const ListenerId id {push.key, push.client_id};
    bool created = false, newKey = false;
    auto& l = upsert(key, id, created, newKey);
    // Every SUBSCRIBE updates the session, platform and topic (value pushes use the latest, unlike
    // the reference, which keeps the first platform and topic for them).
    l.sessionId = push.session_id;
    l.platform = platform;
    l.topic = push.topic;
    arm(key, id, l, ctx_.config().push_listener_lifetime);
    ctx_.stateChanged();
    ctx_.log().debug("[push] [conn:{}] {} {} for {} ({})", req.connectionId(), created ? "subscribe" : "resubscribe",
                     key.toString(), push.key, push.platform);
    if (created) {
        req.reply(200, "{}\n");
        auto& kl = keys_[key];
        if (newKey)
            startDhtListen(key, kl);
        else if (!kl.current.empty()) {
            Values known;
            for (const auto& [vid, seen] : kl.current)
                known.push_back(seen);
            pushValues(key, id, l, known, false);
        }
        return;
    }
    if (push.refresh) {
        auto s = req.startStream();
        s.send(std::string("{}\n"));
        s.end();
        return;
    }
    // An existing listener without "refresh": the current values, one per line (spec §3.8).
    ctx_.gets().start(key, req, std::nullopt);
}

bool PushListeners::unsubscribe(const dht::InfoHash& key, const std::string& token, const std::string& clientId) {
    auto it = keys_.find(key);
    if (it == keys_.end() || !it->second.listeners.count({token, clientId}))
        return false;
    remove(it, {token, clientId});
    ctx_.stateChanged();
    ctx_.log().debug("[push] unsubscribe {} for {}", key.toString(), token);
    return true;
}

PushListeners::Listener& PushListeners::upsert(const dht::InfoHash& key, const ListenerId& id, bool& created, bool& newKey) {
    auto [kit, isNew] = keys_.try_emplace(key);
    newKey = isNew;
    auto& slot = kit->second.listeners[id];
    created = !slot;
    if (!slot)
        slot = std::make_unique<Listener>(ctx_.executor());
    return *slot;
}

void PushListeners::arm(const dht::InfoHash& key, const ListenerId& id, Listener& l,
                        std::chrono::steady_clock::duration lifetime) {
    std::weak_ptr<ServerContext> weak = ctx_.shared_from_this();
    l.expiryTimer.expires_after(lifetime);
    l.expiryTimer.async_wait([weak, key, id](const std::error_code& ec) {
        if (ec)
            return; // re-armed or cancelled
        if (auto ctx = weak.lock())
            ctx->pushListeners().onExpiry(key, id);
    });
    const std::chrono::steady_clock::duration margin = ctx_.config().push_expiry_margin;
    l.noticeTimer.expires_after(lifetime > margin ? lifetime - margin : std::chrono::steady_clock::duration::zero());
    l.noticeTimer.async_wait([weak, key, id](const std::error_code& ec) {
        if (ec)
            return;
        if (auto ctx = weak.lock())
            ctx->pushListeners().onNotice(key, id);
    });
}

void PushListeners::onNotice(const dht::InfoHash& key, const ListenerId& id) {
    auto it = keys_.find(key);
    if (it == keys_.end())
        return;
    auto l = it->second.listeners.find(id);
    if (l == it->second.listeners.end() || l->second->noticeTimer.expiry() > std::chrono::steady_clock::now())
        return; // gone, or refreshed after this timer fired
    auto& listener = *l->second;
    ctx_.log().debug("[push] listener {} for {} expires soon: timeout notice", key.toString(), id.first);
    service_->send(push::listenerTimeout(key.toString(), id.second, listener.sessionId), id.first, listener.platform,
                   listener.topic);
}

void PushListeners::onExpiry(const dht::InfoHash& key, const ListenerId& id) {
    auto it = keys_.find(key);
    if (it == keys_.end())
        return;
    auto l = it->second.listeners.find(id);
    if (l == it->second.listeners.end() || l->second->expiryTimer.expiry() > std::chrono::steady_clock::now())
        return;
    ctx_.log().debug("[push] listener {} for {} expired", key.toString(), id.first);
    remove(it, id);
    ctx_.stateChanged();
}

void PushListeners::remove(std::map<dht::InfoHash, KeyListen>::iterator it, const ListenerId& id) {
    it->second.listeners.erase(id); // its timers are cancelled with it
    if (it->second.listeners.empty()) {
        ctx_.dht().cancelListen(it->first, it->second.token);
        keys_.erase(it);
    }
}

void PushListeners::startDhtListen(const dht::InfoHash& key, KeyListen& kl) {
    kl.generation = nextGeneration_++;
    std::weak_ptr<ServerContext> weak = ctx_.shared_from_this();
    const auto generation = kl.generation;
    kl.token = ctx_.dht()
                   .listen(key,
                           [weak, key, generation](const std::vector<std::shared_ptr<dht::Value>>& values, bool expired) {
                               // DHT thread: copy what the pushes need, then hop to the state executor.
                               auto ctx = weak.lock();
                               if (!ctx)
                                   return false;
                               Values seen;
                               for (const auto& v : values)
                                   if (v)
                                       seen.push_back({v->id, v->priority, v->getPacked()});
                               ctx->postFromAnyThread([ctx, key, generation, seen = std::move(seen), expired] {
                                   ctx->pushListeners().onEvents(key, generation, seen, expired);
                               });
                               return true;
                           })
                   .share();
}

void PushListeners::notifyLocalPut(const dht::InfoHash& key, const dht::Value& value) {
    auto it = keys_.find(key);
    if (it != keys_.end())
        onEvents(key, it->second.generation, {Seen {value.id, value.priority, value.getPacked()}}, false);
}

void PushListeners::onEvents(const dht::InfoHash& key, std::uint64_t generation, const Values& values, bool expired) {
    auto it = keys_.find(key);
    if (it == keys_.end() || it->second.generation != generation)
        return; // a late event of a cancelled listen
    auto& kl = it->second;
    Values changed;
    for (const auto& v : values) {
        if (expired) {
            kl.current.erase(v.id);
        } else {
            auto [cur, inserted] = kl.current.try_emplace(v.id, v);
            if (!inserted) {
                if (cur->second.packed == v.packed)
                    continue; // already pushed (e.g. reported by notifyLocalPut first)
                cur->second = v;
            }
        }
        changed.push_back(v);
    }
    if (changed.empty())
        return;
    for (const auto& [id, l] : kl.listeners)
        pushValues(key, id, *l, changed, expired);
}

void PushListeners::pushValues(const dht::InfoHash& key, const ListenerId& id, const Listener& l, const Values& values,
                               bool expired) {
    push::ValueEvent ev;
    ev.key = key.toString();
    ev.client_id = id.second;
    ev.session_id = l.sessionId;
    ev.time_ms = unixMillis();
    ev.expired = expired;
    for (const auto& v : values)
        ev.values.push_back({v.id, v.priority, {}});
    service_->send(push::valueNotification(ev), id.first, l.platform, l.topic);
}

std::size_t PushListeners::tokenCount() const {
    std::set<std::string> tokens;
    for (const auto& [key, kl] : keys_)
        for (const auto& [id, l] : kl.listeners)
            tokens.insert(id.first);
    return tokens.size();
}

std::size_t PushListeners::listenerCount() const {
    std::size_t n = 0;
    for (const auto& [key, kl] : keys_)
        n += kl.listeners.size();
    return n;
}

std::vector<state::PushListenerRecord> PushListeners::records() const {
    std::vector<state::PushListenerRecord> out;
    for (const auto& [key, kl] : keys_)
        for (const auto& [id, l] : kl.listeners)
            out.push_back({id.first, key, id.second, toUnixSeconds(l->expiryTimer.expiry()), l->sessionId, l->platform,
                           l->topic});
    return out;
}

void PushListeners::restore(const state::PushListenerRecord& r) {
    const auto left = untilUnixSeconds(r.expiry);
    std::string why;
    if (left <= std::chrono::steady_clock::duration::zero())
        return;
    if (!service_ || !service_->canSend(r.platform, why)) {
        ctx_.log().warn("[push] dropping the saved listener {} for {}: {}", r.key.toString(), r.token,
                        service_ ? why : "push unavailable");
        return;
    }
    const ListenerId id {r.token, r.client_id};
    bool created = false, newKey = false;
    auto& l = upsert(r.key, id, created, newKey);
    l.sessionId = r.session_id;
    l.platform = r.platform;
    l.topic = r.topic;
    arm(r.key, id, l, left);
    if (newKey)
        startDhtListen(r.key, keys_[r.key]);
}

void PushListeners::shutdown() {
    for (auto& [key, kl] : keys_)
        ctx_.dht().cancelListen(key, kl.token);
    keys_.clear();
    service_.reset();
}

} // namespace dhtgate::server
