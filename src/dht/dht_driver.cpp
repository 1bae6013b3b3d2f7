#include "dhtgate/dht_driver.h"

#include "dht/asio_datagram_socket.h"

#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <opendht/dhtrunner.h>

#include <atomic>
#include <exception>

namespace dhtgate {

namespace {

/// DhtRunner::loop() runs either the priority queue (bootstrap, node info, shutdown) or the normal
/// one (put/get/listen), and the normal one only once the node is connected or known to be
/// disconnected. A pump after kick() therefore loops twice (priority, then normal work), and once
/// more whenever the node status changed during a loop (normal work may now run).
constexpr int kKickRounds = 2;
constexpr int kMaxRounds = 4;
/// After loop() threw, when to try again (the DHT's own next wake-up is unknown then).
constexpr auto kRetryAfterError = std::chrono::milliseconds(100);

} // namespace

struct DhtDriver::State : std::enable_shared_from_this<State> {
    State(asio::io_context& context, Logger logger) : io(context), log(std::move(logger)), timer(context) {}

    asio::io_context& io;
    Logger log;
    std::shared_ptr<dht::DhtRunner> runner;
    std::uint16_t port{0};
    std::atomic<bool> stopped{false};
    std::atomic<bool> pumpPosted{false};

    // io thread only
    asio::steady_timer timer;
    bool timerArmed{false};
    dht::time_point timerAt{};
    std::uint64_t timerGeneration{0};
    bool inPump{false};
    bool statusChanged{false}; // set by the runner's status callback, inside loop()

    void kick() {
        if (stopped.load(std::memory_order_relaxed) || pumpPosted.load(std::memory_order_relaxed))
            return;
        if (pumpPosted.exchange(true))
            return;
        asio::post(io, [weak = weak_from_this()] {
            if (auto self = weak.lock()) {
                self->pumpPosted = false;
                self->pump(kKickRounds);
            }
        });
    }

    /// Runs DhtRunner::loop() `rounds` times (more after a status change) and re-arms the timer.
    void pump(int rounds) {
        if (stopped || inPump)
            return;
        inPump = true;
        auto next = dht::time_point::max();
        for (int done = 0; rounds > 0 && done < kMaxRounds; ++done) {
            --rounds;
            statusChanged = false;
            next = loopOnce();
            if (statusChanged && rounds == 0)
                rounds = 1;
        }
        inPump = false;
        if (!stopped)
            arm(next);
    }

    dht::time_point loopOnce() {
        try {
            return runner->loop();
        } catch (const std::exception& e) {
            log.error("[dht-driver] DHT loop failed: {}", e.what());
        } catch (...) {
            log.error("[dht-driver] DHT loop failed");
        }
        return dht::clock::now() + kRetryAfterError;
    }

    /// Makes the timer fire at `next` at the latest. An earlier pending wake-up is kept: the pump
    /// it causes re-arms for the DHT's next job (an early loop() is harmless, a late one is not).
    void arm(dht::time_point next) {
        if (next == dht::time_point::max() || (timerArmed && timerAt <= next))
            return;
        timerArmed = true;
        timerAt = next;
        const auto generation = ++timerGeneration;
        timer.expires_at(next); // cancels the previous wait: its handler sees operation_aborted
        timer.async_wait([weak = weak_from_this(), generation](const std::error_code& ec) {
            if (ec)
                return; // operation_aborted: re-armed or stopped
            auto self = weak.lock();
            if (!self || self->timerGeneration != generation)
                return;
            self->timerArmed = false;
            self->pump(1);
        });
    }

    void stop() {
        if (inPump) {
            // Called from a DHT callback, inside loop() (which holds the runner's lock): later.
            asio::post(io, [self = shared_from_this()] { self->stop(); });
            return;
        }
        if (stopped.exchange(true))
            return;
        std::error_code ignored;
        timer.cancel(ignored);
        timerArmed = false;
        try {
            runner->join(); // stops and destroys the socket; drops queued operations
        } catch (const std::exception& e) {
            log.error("[dht-driver] DHT join failed: {}", e.what());
        }
        log.debug("[dht-driver] stopped");
    }
};

DhtDriver::DhtDriver(asio::io_context& io, std::uint16_t port, Logger log, const std::string& bind_address)
    : state_(std::make_shared<State>(io, log)) {
    auto socket = std::make_unique<dht_io::AsioDatagramSocket>(io, port, bind_address, log);
    state_->port = socket->port();
    std::weak_ptr<State> weak = state_;
    socket->setOnPackets([weak] {
        if (auto self = weak.lock())
            self->pump(1);
    });

    dht::DhtRunner::Config config;
    config.threaded = false;
    dht::DhtRunner::Context context;
    context.sock = std::move(socket);
    context.statusChangedCallback = [weak](dht::NodeStatus v4, dht::NodeStatus v6) {
        if (auto self = weak.lock()) {
            self->statusChanged = true;
            self->log.debug("[dht-driver] node status: IPv4 {}, IPv6 {}", dht::statusToStr(v4), dht::statusToStr(v6));
        }
    };
    state_->runner = std::make_shared<dht::DhtRunner>();
    state_->runner->run(config, std::move(context));
    state_->kick(); // first loop: starts the DHT's periodic jobs
    log.info("[dht-driver] DHT node {} on UDP port {}, driven on the io thread", state_->runner->getNodeId().toString(),
             state_->port);
}

DhtDriver::~DhtDriver() {
    stop();
}

const std::shared_ptr<dht::DhtRunner>& DhtDriver::runner() const {
    return state_->runner;
}

void DhtDriver::kick() {
    state_->kick();
}

std::uint16_t DhtDriver::port() const {
    return state_->port;
}

void DhtDriver::stop() {
    state_->stop();
}

} // namespace dhtgate
