#include "server/push_service.h"

#include "push/push_sender.h"

#include <fmt/format.h>

namespace dhtgate::server {

PushService::PushService(asio::io_context& io, const ServerConfig& config, const Logger& log)
    : log_(log), gateway_(!config.push_server.empty()) {
    push::SenderOptions o;
    std::string error;
    if (!push::senderOptionsFromConfig(config, log, o, error)) { // ProxyServer::start rejects this first
        log_.error("[push] {}: using ios", error);
        auto fallback = config;
        fallback.push_none_platform = "ios";
        push::senderOptionsFromConfig(fallback, log, o, error);
    }
    noneAs_ = o.gorush.none_as;
    o.initial_backoff = config.push_initial_backoff;
    o.max_backoff = config.push_max_backoff;
    o.request_timeout = config.push_request_timeout;
    o.connect_timeout = std::min(config.push_request_timeout, std::chrono::milliseconds(std::chrono::seconds(5)));
    o.gorush.ttl_seconds = std::chrono::duration_cast<std::chrono::seconds>(config.push_listener_lifetime).count();
    sender_ = push::PushSender::create(io, std::move(o));
    if (gateway_)
        log_.info("[push] push gateway {}", sender_->pushUrl());
}

PushService::~PushService() = default;

bool PushService::canSend(push::Platform platform, std::string& why) const {
    if (platform == push::Platform::unifiedpush)
        return true;
    if (!gateway_) {
        why = "No push server configured: only unifiedpush subscriptions are accepted";
        return false;
    }
    if (platform == push::Platform::none && noneAs_ == push::NoneFallback::drop) {
        why = "Empty or unknown push platform (this server drops such pushes)";
        return false;
    }
    return true;
}

PushService::Counts& PushService::countsFor(push::Platform platform) {
    switch (platform) {
    case push::Platform::android: return android_;
    case push::Platform::unifiedpush: return unified_;
    case push::Platform::ios: return ios_;
    case push::Platform::none: break;
    }
    return noneAs_ == push::NoneFallback::android ? android_ : ios_;
}

void PushService::send(const push::Data& data, const std::string& token, push::Platform platform, std::string_view topic) {
    std::string why;
    if (!canSend(platform, why)) {
        log_.debug("[push] not sent to {}: {}", token, why);
        return;
    }
    auto& c = countsFor(platform);
    ++(data.priority == push::Priority::high ? c.high : c.normal);
    log_.debug("[push] {} push to {}: {}", push::toString(platform), token, data.json);
    sender_->send(data, token, platform, topic);
}

void PushService::appendStats(std::string& out) const {
    const auto s = sender_->stats();
    auto counts = [&out](const char* name, const Counts& c) {
        fmt::format_to(std::back_inserter(out), "\"{}\":{{\"highPriorityCount\":{},\"normalPriorityCount\":{}}},", name,
                       c.high, c.normal);
    };
    counts("androidPush", android_);
    counts("iosPush", ios_);
    counts("unifiedPush", unified_);
    fmt::format_to(std::back_inserter(out), "\"pushFailed\":{},\"pushQueued\":{},\"pushRetries\":{},\"pushSent\":{},",
                   s.failed, s.queued + s.in_flight, s.retries, s.sent);
}

} // namespace dhtgate::server
