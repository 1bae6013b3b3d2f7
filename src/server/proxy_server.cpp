// ProxyServer: owns the RESTinio server (single-thread or pool traits), the io thread(s) when it
// runs its own, and the ServerContext shared with the route handlers.
#include "dhtgate/proxy_server.h"

#include "dhtgate/error.h"
#include "push/push_payload.h"
#include "server/handlers.h"
#include "server/https_server.h"
#include "server/listen_registry.h"
#include "server/server_context.h"
#include "server/server_traits.h"
#include "server/state_bridge.h"
#include "server/write_barrier.h"
#include "tls/tls_context.h"

#include <opendht/dhtrunner.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <thread>

namespace dhtgate {

const char* versionString() { return "0.1.0"; }

namespace {

using namespace server;

template <typename Traits>
std::unique_ptr<ListenerServer> makeHttpServer(asio::io_context& io, const ServerConfig& c,
                                               const std::shared_ptr<ServerContext>& ctx, const Logger& log,
                                               std::atomic<std::uint16_t>& port, bool v6) {
    restinio::server_settings_t<Traits> s;
    std::weak_ptr<ServerContext> weak = ctx;
    s.address(c.address)
        .port(c.port)
        .protocol(v6 ? asio::ip::tcp::v6() : asio::ip::tcp::v4())
        // The guard (GuardedSocket) enforces max_pipelined_requests; RESTinio gets headroom (the
        // answer being written, and one more) so its own limit is never reached.
        .max_pipelined_requests(std::max<std::size_t>(1, c.max_pipelined_requests) + 2)
        .concurrent_accepts_count(std::max<std::size_t>(1, c.concurrent_accepts))
        .read_next_http_message_timelimit(c.read_timeout)
        .write_http_response_timelimit(c.write_timeout)
        // RESTinio's handle timeout also runs while a response streams and would cut listen
        // streams: DHT operations are bounded by our own per-request timers instead.
        .handle_request_timeout(std::chrono::hours(24 * 24))
        .incoming_http_msg_limits(restinio::incoming_http_msg_limits_t {}
                                      .max_url_size(c.max_header_size)
                                      .max_field_name_size(c.max_header_size)
                                      .max_field_value_size(c.max_header_size)
                                      .max_field_count(c.max_header_count + 2) // +2: the guard's HTTP/1.0 or listen marks
                                      .max_body_size(c.max_body_size))
        // RESTinio checks connection timeouts on a periodic tick, one timer per connection: keep it
        // well below the timeouts, but not at 1 s, which costs every idle listen stream a wake-up
        // per second (10,000 streams: ~2% of a core; at 15 s: ~0%, docs/bench.md W7).
        .timer_manager(std::clamp<std::chrono::steady_clock::duration>(
            std::min(c.read_timeout, c.write_timeout) / 4, std::chrono::milliseconds(20), std::chrono::seconds(15)))
        // Each connection's read buffer is a zero-filled vector, touched at once: 1 KiB instead of
        // the default 4 KiB saves ~3 KB of RSS per connection (requests are small; big bodies
        // just take more reads).
        .buffer_size(1024)
        .socket_options_setter([](auto& options) { options.set_option(asio::ip::tcp::no_delay(true)); })
        .acceptor_post_bind_hook([&port](asio::ip::tcp::acceptor& a) { port = a.local_endpoint().port(); })
        .logger(log)
        .connection_state_listener(std::make_shared<ConnectionListener>([weak](std::uint64_t connId) {
            // On the connection's executor: hop to the state executor.
            if (auto ctx = weak.lock())
                ctx->postFromAnyThread([ctx, connId] { ctx->listens().connectionClosed(connId); });
        }))
        .request_handler([weak](restinio::request_handle_t handle) {
            auto ctx = weak.lock();
            if (!ctx)
                return restinio::request_rejected();
            Request req(makeRequestImpl(std::move(handle)));
            asio::dispatch(ctx->executor(), [ctx, req] { routeSafely(*ctx, req); });
            return restinio::request_accepted();
        });
    return std::make_unique<RestinioServer<Traits>>(io, std::move(s));
}

} // namespace

class ProxyServer::Impl {
public:
    Impl(std::shared_ptr<dht::DhtRunner> dht, ServerConfig config, Logger log)
        : dht_(std::move(dht)), config_(std::move(config)), log_(std::move(log)) {}

    std::error_code start(asio::io_context* external) {
        if (started_)
            return errc::invalid_config;
        std::error_code ec;
        const auto address = asio::ip::make_address(config_.address, ec);
        if (ec || !dht_) {
            log_.error("[server] invalid address '{}'", config_.address);
            return errc::invalid_config;
        }
        // Without this OpenDHT's SecureDht drops encrypted values from get/listen results on a
        // node without identity: a gateway relays them verbatim (spec §9).
        dht_->forwardAllMessages(true);
        std::optional<asio::ssl::context> tlsContext;
        if (auto e = prepareTls(tlsContext))
            return e;
        const bool pool = !external && config_.threads > 1;
        if (pool && (!config_.push_server.empty() || !config_.state_file.empty())) {
            log_.error("[server] push notifications and the state file need a single io thread (threads = 1)");
            return errc::invalid_config;
        }
        if (push::NoneFallback none; !push::parseNoneFallback(config_.push_none_platform, none)) {
            log_.error("[server] invalid push_none_platform '{}' (expected ios, android or drop)", config_.push_none_platform);
            return errc::invalid_config;
        }
        if (external) {
            io_ = external;
        } else {
            ownIo_ = std::make_unique<asio::io_context>(static_cast<int>(std::max(1u, config_.threads)));
            io_ = ownIo_.get();
        }
        asio::any_io_executor exec = pool ? asio::any_io_executor(asio::make_strand(*io_))
                                          : asio::any_io_executor(io_->get_executor());
        ctx_ = std::make_shared<ServerContext>(dht_, config_, log_, exec);
        GuardedSocket::setLimits(*io_, RequestLimits {config_.max_header_size, config_.max_body_size,
                                                      std::max<std::size_t>(1, config_.max_pipelined_requests),
                                                      config_.max_header_count});
        try {
            if (pool)
                http_ = makeHttpServer<PoolTraits>(*io_, config_, ctx_, log_, port_, address.is_v6());
            else
                http_ = makeHttpServer<SingleThreadTraits>(*io_, config_, ctx_, log_, port_, address.is_v6());
            if (config_.serve_http)
                http_->openSync();
            if (tlsContext) {
                https_ = makeHttpsServer(*io_, config_, ctx_, log_, std::move(*tlsContext), httpsPort_,
                                         address.is_v6(), pool);
                https_->openSync();
            }
        } catch (const std::exception& e) {
            log_.error("[server] cannot listen on {}:{}: {}", config_.address, config_.port, e.what());
            if (https_ && config_.serve_http)
                http_->closeSync();
            https_.reset();
            http_.reset();
            ctx_->close();
            ctx_.reset();
            ownIo_.reset();
            io_ = nullptr;
            port_ = 0;
            httpsPort_ = 0;
            return errc::bind_failed;
        }
        started_ = true;
        loadState(*ctx_); // restores saved permanent puts and push listeners (posted, runs first)
        running_ = true;
        if (ownIo_) {
            work_.emplace(asio::make_work_guard(*ownIo_));
            for (unsigned i = 0; i < std::max(1u, config_.threads); ++i)
                threads_.emplace_back([this] { runIo(); });
        }
        const auto host = address.is_v6() ? "[" + config_.address + "]" : config_.address;
        if (config_.serve_http)
            log_.info("[server] serving http://{}:{} ({} thread(s))", host, port_.load(),
                      ownIo_ ? std::max(1u, config_.threads) : 1u);
        if (https_)
            log_.info("[server] serving https://{}:{} (identity {})", host, httpsPort_.load(),
                      config_.identity->second->getId().toString());
        return {};
    }

    void stop() {
        if (!started_ || stopped_)
            return;
        stopped_ = true;
        running_ = false;
        auto done = std::make_shared<std::promise<void>>();
        auto future = done->get_future();
        const bool onIoThread = io_->get_executor().running_in_this_thread();
        if (onIoThread) {
            // Caller-owned io_context, called from its thread: cannot wait here.
            ctx_->shutdown({});
            closeListenersSync();
        } else {
            // Moved in: no copy holding the server may outlive the io_context below.
            auto shutdown = [ctx = ctx_, http = http_, https = https_, serveHttp = config_.serve_http, done] {
                if (ctx->stopping())
                    return;
                // Final chunks written and acceptor closed: then stop() may return.
                WriteBarrier barrier([done] { done->set_value(); });
                if (serveHttp)
                    http->closeAsync(barrier.token());
                if (https)
                    https->closeAsync(barrier.token());
                ctx->shutdown(barrier.token());
            };
            asio::post(ctx_->executor(), std::move(shutdown));
            const auto limit = std::min<std::chrono::milliseconds>(config_.write_timeout, std::chrono::seconds(5));
            if (future.wait_for(limit) != std::future_status::ready && !ownIo_ && !ctx_->stopping()) {
                // The caller's io_context is not running: shut down from here.
                log_.debug("[server] io_context not running during stop(): shutting down inline");
                ctx_->shutdown({});
                closeListenersSync();
            }
        }
        ctx_->close();
        if (ownIo_) {
            // Let the cancelled accept (and what it queued) complete before the io_context goes:
            // its handler holds RESTinio's acceptor, whose strand must die before the io_context.
            for (int round = 0; round < 3; ++round) {
                auto marker = std::make_shared<std::promise<void>>();
                auto reached = marker->get_future();
                asio::post(*ownIo_, [marker] { marker->set_value(); });
                reached.wait_for(std::chrono::seconds(1));
            }
            work_.reset();
            ownIo_->stop();
            for (auto& t : threads_)
                t.join();
            threads_.clear();
        }
        http_.reset();
        https_.reset();
        ctx_.reset();
        GuardedSocket::clearLimits(*io_);
        ownIo_.reset(); // destroys what is left: idle keep-alive connections are closed here
        log_.info("[server] stopped");
    }

    std::uint16_t port() const { return port_; }
    std::uint16_t httpsPort() const { return httpsPort_; }
    bool running() const { return running_; }

private:
    /// Builds the TLS context when HTTPS is configured; checks that something will listen.
    std::error_code prepareTls(std::optional<asio::ssl::context>& out) {
        if (config_.https_port && !config_.identity) {
            log_.error("[server] https_port needs an identity");
            return errc::invalid_config;
        }
        if (!config_.serve_http && !config_.https_port) {
            log_.error("[server] neither HTTP nor HTTPS is enabled");
            return errc::invalid_config;
        }
        if (!config_.https_port)
            return {};
        if (!config_.identity->first || !config_.identity->second) {
            log_.error("[server] the identity has no private key or no certificate");
            return errc::invalid_identity;
        }
        tls::ServerTlsOptions options;
        options.identity = *config_.identity;
        if (auto st = tls::makeServerContext(options, out); !st) {
            log_.error("[server] TLS: {}", st.message);
            return st.code;
        }
        return {};
    }

    void closeListenersSync() {
        if (config_.serve_http)
            http_->closeSync();
        if (https_)
            https_->closeSync();
    }

    void runIo() {
        for (;;) {
            try {
                ownIo_->run();
                return;
            } catch (const std::exception& e) {
                log_.error("[server] bug: exception escaped into the io loop: {}", e.what());
            }
        }
    }

    std::shared_ptr<dht::DhtRunner> dht_;
    ServerConfig config_;
    Logger log_;
    std::unique_ptr<asio::io_context> ownIo_;
    asio::io_context* io_ {nullptr};
    std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
    std::vector<std::thread> threads_;
    std::shared_ptr<ServerContext> ctx_;
    std::shared_ptr<ListenerServer> http_;
    std::shared_ptr<ListenerServer> https_;
    std::atomic<std::uint16_t> httpsPort_ {0};
    std::atomic<std::uint16_t> port_ {0};
    std::atomic<bool> running_ {false};
    bool started_ {false};
    bool stopped_ {false};
};

ProxyServer::ProxyServer(std::shared_ptr<dht::DhtRunner> dht, ServerConfig config, Logger logger)
    : impl_(std::make_unique<Impl>(std::move(dht), std::move(config), std::move(logger))) {}

ProxyServer::~ProxyServer() { stop(); }

std::error_code ProxyServer::start() { return impl_->start(nullptr); }
std::error_code ProxyServer::start(asio::io_context& io) { return impl_->start(&io); }
std::uint16_t ProxyServer::port() const { return impl_->port(); }
std::uint16_t ProxyServer::httpsPort() const { return impl_->httpsPort(); }
void ProxyServer::stop() { impl_->stop(); }
bool ProxyServer::running() const { return impl_->running(); }

} // namespace dhtgate
