// PermanentPuts: the push side (the "timeout" notice with `vid` before expiry, spec §6.2 step 4)
// and persistence (records / restore, spec §8).
#include "server/permanent_puts.h"

#include "push/push_payload.h"
#include "server/push_listeners.h"
#include "server/push_service.h"
#include "server/server_context.h"
#include "server/wall_clock.h"

namespace dhtgate::server {

void PermanentPuts::armNotice(const EntryKey& k, Entry& e, std::chrono::steady_clock::duration lifetime) {
    if (e.pushToken.empty())
        return; // no push session: nobody to warn
    const std::chrono::steady_clock::duration margin = ctx_.config().push_expiry_margin;
    e.noticeTimer.expires_after(lifetime > margin ? lifetime - margin : std::chrono::steady_clock::duration::zero());
    e.noticeTimer.async_wait([weak = std::weak_ptr<ServerContext>(ctx_.shared_from_this()), k](const std::error_code& ec) {
        if (ec)
            return; // re-armed or cancelled
        if (auto ctx = weak.lock())
            ctx->puts().onNotice(k);
    });
}

void PermanentPuts::onNotice(const EntryKey& k) {
    auto it = entries_.find(k);
    if (it == entries_.end() || it->second->noticeTimer.expiry() > std::chrono::steady_clock::now())
        return; // expired, or refreshed after this timer fired
    auto& e = *it->second;
    auto* service = ctx_.pushListeners().service();
    if (!service)
        return;
    ctx_.log().debug("[push] permanent put {} {} expires soon: timeout notice to {}", k.first.toString(), k.second,
                     e.pushToken);
    service->send(push::putTimeout(k.first.toString(), e.clientId, k.second, e.sessionId), e.pushToken, e.platform,
                  e.topic);
}

std::vector<state::PermanentPutRecord> PermanentPuts::records() const {
    std::vector<state::PermanentPutRecord> out;
    out.reserve(entries_.size());
    for (const auto& [k, e] : entries_) {
        if (!e->value)
            continue;
        state::PermanentPutRecord r;
        r.key = k.first;
        r.value = e->value;
        r.expiry = toUnixSeconds(e->timer.expiry());
        r.client_id = e->clientId;
        r.session_id = e->sessionId;
        r.platform = e->platform;
        r.token = e->pushToken;
        r.topic = e->topic;
        out.push_back(std::move(r));
    }
    return out;
}

void PermanentPuts::restore(const state::PermanentPutRecord& r) {
    const auto left = untilUnixSeconds(r.expiry);
    if (!r.value || left <= std::chrono::steady_clock::duration::zero())
        return;
    const EntryKey k {r.key, r.value->id};
    auto& slot = entries_[k];
    if (!slot)
        slot = std::make_unique<Entry>(ctx_.executor());
    auto& e = *slot;
    e.value = r.value;
    e.pushToken = r.token;
    e.clientId = r.client_id;
    e.sessionId = r.session_id;
    e.platform = r.platform;
    e.topic = r.topic;
    armExpiry(k, e, left);
    startDhtPut(k, e);
}

} // namespace dhtgate::server
