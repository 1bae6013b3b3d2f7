// dhtgate: delivers push requests (push_payload.h) to a gorush gateway or UnifiedPush endpoints
// over dhtgate's own http::Client (spec §7.3, §7.4; §15 item 19).
//
// * Connections are reused (the client's keep-alive pool), not one per push as in the reference.
// * At most `max_in_flight` requests run at once; the rest wait in a FIFO queue bounded by
//   `max_queue` (beyond it a push is dropped and counted as failed).
// * Transient failures (connect/resolve errors, timeouts, a closed connection, HTTP 408, 429 and
//   5xx) are retried up to `max_attempts` times with exponential backoff (doubling from
//   `initial_backoff`, capped at `max_backoff`, a Retry-After header honoured within that cap).
//   A waiting retry holds no in-flight slot. Other 4xx answers fail at once.
//
// Thread contract: create, send and shutdown on the io thread of `io`; completions run there.
// stats() may be read from any thread.
#pragma once

#include "dhtgate/config.h"
#include "dhtgate/http_client.h"
#include "dhtgate/logger.h"
#include "push/push_payload.h"

#include <asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <system_error>

namespace dhtgate::push {

struct SenderOptions {
    /// gorush server: "host:port", a bare port (= localhost:port) or an http(s):// URL; "/api/push"
    /// is appended. Empty: only UnifiedPush can be sent.
    std::string gateway;
    std::size_t max_in_flight {16};
    std::size_t max_queue {10000};
    unsigned max_attempts {4}; ///< total tries per push, first one included
    std::chrono::milliseconds initial_backoff {std::chrono::milliseconds(500)};
    std::chrono::milliseconds max_backoff {std::chrono::seconds(30)};
    std::chrono::milliseconds connect_timeout {std::chrono::seconds(5)};
    std::chrono::milliseconds request_timeout {std::chrono::seconds(15)};
    GorushOptions gorush; ///< used by the build-and-send overload
    Logger logger;
};

/// Counters, monotonic since creation.
struct SenderStats {
    std::uint64_t sent {0};    ///< delivered (2xx)
    std::uint64_t failed {0};  ///< given up: permanent error, attempts exhausted, queue full, no gateway
    std::uint64_t retries {0}; ///< attempts after the first
    std::uint64_t queued {0};  ///< waiting for a slot or a retry, now
    std::uint64_t in_flight {0}; ///< now
};

/// SenderOptions from the server configuration (push_* fields). Returns false with `error` set
/// when push_none_platform is not one of "ios", "android", "drop".
bool senderOptionsFromConfig(const ServerConfig& config, const Logger& logger, SenderOptions& out, std::string& error);

/// Normalises a gateway setting into the gorush push URL (see SenderOptions::gateway); "" stays "".
std::string gatewayPushUrl(const std::string& gateway);

class PushSender : public std::enable_shared_from_this<PushSender> {
public:
    /// Final outcome of one push: empty error on a 2xx; `status` is the last HTTP status (0 if none).
    using Done = std::function<void(std::error_code, unsigned status)>;

    static std::shared_ptr<PushSender> create(asio::io_context& io, SenderOptions options);
    /// Cancels queued, waiting and running pushes (no completion runs). Io thread, or io stopped.
    ~PushSender();
    PushSender(const PushSender&) = delete;
    PushSender& operator=(const PushSender&) = delete;

    /// Queues `request`; `done` (optional) runs once on the io thread, never from inside send().
    void send(Request request, Done done = {});

    /// Builds the request for (data, token, platform, topic) with the options' GorushOptions and the
    /// current time, and queues it. Returns false (nothing queued, nothing counted) when the
    /// platform's fallback says drop.
    bool send(const Data& data, std::string_view token, Platform platform, std::string_view topic, Done done = {});

    SenderStats stats() const;
    const std::string& pushUrl() const { return pushUrl_; }

private:
    struct Job;
    using JobPtr = std::shared_ptr<Job>;

    PushSender(asio::io_context& io, SenderOptions options);
    void pump();
    void startAttempt(JobPtr job);
    void onResponse(JobPtr job, std::error_code ec, const http::Response& response);
    void scheduleRetry(JobPtr job, std::chrono::milliseconds delay);
    void finish(const JobPtr& job, std::error_code ec, unsigned status);
    std::chrono::milliseconds backoff(const Job& job, const http::Response& response) const;

    asio::io_context& io_;
    SenderOptions options_;
    std::string pushUrl_;
    std::unique_ptr<http::Client> client_;
    std::deque<JobPtr> queue_;
    std::set<JobPtr> waiting_; ///< retries sleeping on their timer
    std::set<JobPtr> running_;
    std::atomic<std::uint64_t> sent_ {0}, failed_ {0}, retries_ {0}, queued_ {0}, inFlight_ {0};
};

} // namespace dhtgate::push
