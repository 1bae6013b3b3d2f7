// The server's side of push sending: one PushSender (push/push_sender.h) configured from
// ServerConfig, plus the per-platform counters of /node/stats (spec §4.5).
//
// Thread contract: state-executor only (the server's single io thread). Destroy it there too, or
// once the io_context has stopped (the sender cancels its requests on destruction).
#pragma once

#include "dhtgate/config.h"
#include "dhtgate/logger.h"
#include "push/push_payload.h"
#include "push/push_platform.h"

#include <asio/io_context.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace dhtgate::push {
class PushSender;
}

namespace dhtgate::server {

class PushService {
public:
    PushService(asio::io_context& io, const ServerConfig& config, const Logger& log);
    ~PushService();
    PushService(const PushService&) = delete;
    PushService& operator=(const PushService&) = delete;

    /// Whether a push for `platform` can be sent at all: UnifiedPush needs no gateway (the token
    /// is the endpoint URL); the other platforms need `push_server`, and an empty platform also
    /// needs `push_none_platform` != drop. `why` gets the reason when not.
    bool canSend(push::Platform platform, std::string& why) const;

    /// Queues one push; counted as attempted for `platform` and `data.priority`.
    void send(const push::Data& data, const std::string& token, push::Platform platform, std::string_view topic);

    /// Appends the push members of /node/stats (each followed by a comma):
    /// androidPush, iosPush, unifiedPush {highPriorityCount, normalPriorityCount}, pushSent,
    /// pushFailed, pushRetries, pushQueued.
    void appendStats(std::string& out) const;

private:
    struct Counts {
        std::uint64_t high {0};
        std::uint64_t normal {0};
    };
    Counts& countsFor(push::Platform platform);

    Logger log_;
    bool gateway_ {false};
    push::NoneFallback noneAs_ {push::NoneFallback::ios};
    std::shared_ptr<push::PushSender> sender_;
    Counts android_, ios_, unified_;
};

} // namespace dhtgate::server
