// dhtgate: configuration of the proxy server. Plain data, built once and handed to ProxyServer.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <opendht/crypto.h>

namespace dhtgate {

struct ServerConfig {
    // --- Listening socket -------------------------------------------------------------------
    std::string address {"127.0.0.1"}; ///< IPv4 or IPv6 literal, or "::" / "0.0.0.0" for all
    std::uint16_t port {8080};         ///< 0 picks a free port; read it back with ProxyServer::port()
    bool serve_http {true};            ///< false: HTTPS only (needs identity and https_port)

    // --- HTTPS and the server identity (docs/tls.md) ---------------------------------------------
    /// The proxy's identity: HTTPS certificate and key, signing key of /sign and /encrypt, and the
    /// "id" of node info. Null: no HTTPS, sign/encrypt answer 501.
    std::shared_ptr<dht::crypto::Identity> identity;
    /// Set (with an identity): also serve every route over TLS 1.2+ on this port (0: a free port,
    /// read back with ProxyServer::httpsPort()), on the same address.
    std::optional<std::uint16_t> https_port;

    // --- Threading and connection handling -----------------------------------------------------
    unsigned threads {1};                  ///< 1: single io thread, no locks. N > 1: a pool (for comparison)
    std::size_t max_pipelined_requests {16};
    std::size_t concurrent_accepts {1};    ///< accept operations kept in flight at once
    /// Called on the server's executor after the server queued work on the DhtRunner; set it to
    /// DhtDriver::kick when the runner is driven by a DhtDriver (include/dhtgate/dht_driver.h).
    /// Empty (the default) for a threaded DhtRunner. Cheap: the driver coalesces kicks.
    std::function<void()> dht_kick;

    // --- Limits --------------------------------------------------------------------------------
    std::size_t max_body_size {96 * 1024};   ///< larger request bodies get 413 before being read whole
    std::size_t max_value_size {64 * 1024};  ///< larger DHT values get 413 at once
    std::size_t max_header_size {16 * 1024}; ///< a header field or URL above this gets 431 / 414
    std::size_t max_header_count {100};

    // --- Timeouts --------------------------------------------------------------------------------
    std::chrono::milliseconds read_timeout {std::chrono::seconds(60)};   ///< idle keep-alive / slow request
    std::chrono::milliseconds write_timeout {std::chrono::seconds(60)};  ///< each response write
    std::chrono::milliseconds handle_timeout {std::chrono::seconds(30)}; ///< a non-streaming answer

    // --- Gets ----------------------------------------------------------------------------------
    /// A GET of a key whose DHT get started less than this ago and still runs joins that get
    /// instead of starting another (docs/server.md, "Get coalescing"); 0 disables.
    std::chrono::milliseconds get_coalescing_window {std::chrono::seconds(1)};

    // --- Lifetimes (spec §6.4; shortened in tests) ----------------------------------------------
    std::chrono::seconds permanent_put_lifetime {std::chrono::hours(24)};
    std::chrono::seconds push_listener_lifetime {std::chrono::hours(24)};
    std::chrono::seconds push_expiry_margin {std::chrono::hours(2)};

    // --- Push notifications (spec §7; docs/push.md; single io thread only) -----------------------
    std::string push_server;               ///< gorush: "host:port", "port" or an http(s) URL; "" = UnifiedPush only
    std::string bundle_id;                 ///< iOS topic when a subscription gives none
    std::string push_none_platform {"ios"}; ///< empty/unknown platform is sent as: "ios", "android" or "drop"
    bool push_android_legacy {false};      ///< 2.4.12 android form for old gorush versions
    std::size_t push_max_in_flight {16};   ///< concurrent push requests
    std::size_t push_max_queue {10000};    ///< pushes waiting beyond that are dropped (counted as failed)
    unsigned push_max_attempts {4};        ///< tries per push, transient failures only
    std::chrono::milliseconds push_initial_backoff {500}; ///< before the first retry; doubles per retry
    std::chrono::milliseconds push_max_backoff {std::chrono::seconds(30)};
    std::chrono::milliseconds push_request_timeout {std::chrono::seconds(15)}; ///< whole push request

    // --- Persistence (spec §8; docs/state.md; single io thread only) ----------------------------
    std::string state_file;                ///< "" = nothing persisted
    std::chrono::milliseconds state_save_window {std::chrono::seconds(1)}; ///< coalescing window
};

} // namespace dhtgate
