#include "push/push_sender.h"

#include "dhtgate/error.h"

#include <asio/post.hpp>
#include <asio/steady_timer.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <random>

namespace dhtgate::push {

struct PushSender::Job {
    explicit Job(asio::io_context& io) : timer(io) {}
    Request request;
    Done done;
    unsigned attempts {0};
    asio::steady_timer timer; ///< backoff before the next attempt
};

namespace {

bool isTransientStatus(unsigned status) { return status == 408 || status == 429 || status >= 500; }

// Errors that a later attempt cannot fix.
bool isPermanentError(std::error_code ec) {
    return ec == errc::invalid_url || ec == errc::tls_handshake_failed || ec == errc::cancelled;
}

std::string describe(const Request& r, const std::string& pushUrl) { return r.to_gateway ? pushUrl : r.target; }

} // namespace

std::string gatewayPushUrl(const std::string& gateway) {
    if (gateway.empty())
        return {};
    std::string base = gateway;
    if (std::all_of(base.begin(), base.end(), [](unsigned char c) { return std::isdigit(c); }))
        base = "localhost:" + base; // the reference's "bare port" form
    if (base.find("://") == std::string::npos)
        base = "http://" + base;
    while (!base.empty() && base.back() == '/')
        base.pop_back();
    const std::string path = "/api/push";
    if (base.size() >= path.size() && base.compare(base.size() - path.size(), path.size(), path) == 0)
        return base;
    return base + path;
}

bool senderOptionsFromConfig(const ServerConfig& config, const Logger& logger, SenderOptions& out, std::string& error) {
    SenderOptions o;
    if (!parseNoneFallback(config.push_none_platform, o.gorush.none_as)) {
        error = "invalid push fallback platform '" + config.push_none_platform + "' (expected ios, android or drop)";
        return false;
    }
    o.gateway = config.push_server;
    o.gorush.bundle_id = config.bundle_id;
    o.gorush.android_legacy = config.push_android_legacy;
    o.max_in_flight = config.push_max_in_flight;
    o.max_queue = config.push_max_queue;
    o.max_attempts = config.push_max_attempts;
    o.logger = logger;
    out = std::move(o);
    return true;
}

std::shared_ptr<PushSender> PushSender::create(asio::io_context& io, SenderOptions options) {
    return std::shared_ptr<PushSender>(new PushSender(io, std::move(options)));
}

PushSender::PushSender(asio::io_context& io, SenderOptions options)
    : io_(io), options_(std::move(options)), pushUrl_(gatewayPushUrl(options_.gateway)) {
    if (options_.max_in_flight == 0)
        options_.max_in_flight = 1;
    if (options_.max_attempts == 0)
        options_.max_attempts = 1;
    http::ClientOptions co;
    co.setConnectTimeout(options_.connect_timeout)
        .setRequestTimeout(options_.request_timeout)
        .setMaxResponseSize(1024 * 1024)
        .setMaxIdlePerHost(options_.max_in_flight) // every slot can keep its connection
        .setLogger(options_.logger);
    client_ = std::make_unique<http::Client>(io_, co);
}

PushSender::~PushSender() {
    client_.reset(); // cancels running requests; their callbacks never run
    for (const auto& job : waiting_)
        job->timer.cancel();
}

void PushSender::send(Request request, Done done) {
    auto fail = [this, &done](std::error_code ec, const char* why) {
        ++failed_;
        options_.logger.warn("[push] dropped a push: {}", why);
        if (done)
            asio::post(io_, [done = std::move(done), ec] { done(ec, 0); });
    };
    if (request.to_gateway && pushUrl_.empty())
        return fail(errc::invalid_config, "no push gateway configured");
    if (queue_.size() + waiting_.size() >= options_.max_queue)
        return fail(std::make_error_code(std::errc::no_buffer_space), "the push queue is full");
    auto job = std::make_shared<Job>(io_);
    job->request = std::move(request);
    job->done = std::move(done);
    queue_.push_back(std::move(job));
    ++queued_;
    // Start from a posted handler, so that send() never completes anything itself.
    asio::post(io_, [weak = weak_from_this()] {
        if (auto self = weak.lock())
            self->pump();
    });
}

bool PushSender::send(const Data& data, std::string_view token, Platform platform, std::string_view topic, Done done) {
    auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    auto request = buildRequest(data, token, platform, topic, now, options_.gorush);
    if (!request)
        return false;
    send(std::move(*request), std::move(done));
    return true;
}

void PushSender::pump() {
    while (running_.size() < options_.max_in_flight && !queue_.empty()) {
        auto job = std::move(queue_.front());
        queue_.pop_front();
        --queued_;
        startAttempt(std::move(job));
    }
}

void PushSender::startAttempt(JobPtr job) {
    if (++job->attempts > 1)
        ++retries_;
    running_.insert(job);
    ++inFlight_;
    const auto& r = job->request;
    http::Request req(r.method, r.to_gateway ? pushUrl_ : r.target);
    req.headers = r.headers;
    req.body = r.body;
    client_->send(std::move(req), [weak = weak_from_this(), job](std::error_code ec, http::Response response) {
        if (auto self = weak.lock())
            self->onResponse(job, ec, response);
    });
}

void PushSender::onResponse(JobPtr job, std::error_code ec, const http::Response& response) {
    running_.erase(job);
    --inFlight_;
    unsigned status = response.status;
    if (!ec && status >= 200 && status < 300) {
        ++sent_;
        options_.logger.debug("[push] delivered to {} ({})", describe(job->request, pushUrl_), status);
        finish(job, {}, status);
    } else {
        bool transient = ec ? !isPermanentError(ec) : isTransientStatus(status);
        if (transient && job->attempts < options_.max_attempts) {
            auto delay = backoff(*job, response);
            options_.logger.debug("[push] attempt {} to {} failed ({}), retrying in {} ms", job->attempts,
                                  describe(job->request, pushUrl_), ec ? ec.message() : std::to_string(status),
                                  delay.count());
            scheduleRetry(job, delay);
        } else {
            ++failed_;
            options_.logger.warn("[push] giving up on {} after {} attempt(s): {}", describe(job->request, pushUrl_),
                                 job->attempts, ec ? ec.message() : "HTTP " + std::to_string(status));
            finish(job, ec ? ec : make_error_code(errc::http_status), status);
        }
    }
    pump();
}

std::chrono::milliseconds PushSender::backoff(const Job& job, const http::Response& response) const {
    auto delay = options_.initial_backoff;
    for (unsigned i = 1; i < job.attempts && delay < options_.max_backoff; ++i)
        delay *= 2;
    if (const auto* retryAfter = response.header("Retry-After")) {
        char* end = nullptr;
        long seconds = std::strtol(retryAfter->c_str(), &end, 10);
        if (end != retryAfter->c_str() && seconds > 0)
            delay = std::max(delay, std::chrono::milliseconds(std::chrono::seconds(seconds)));
    }
    delay = std::min(delay, options_.max_backoff);
    // Spread retries of pushes that failed together (a gateway restart) over [delay/2, delay].
    static thread_local std::minstd_rand rng(std::random_device {}());
    auto half = delay.count() / 2;
    return std::chrono::milliseconds(half + (half > 0 ? static_cast<long>(rng() % static_cast<unsigned long>(half + 1)) : 0));
}

void PushSender::scheduleRetry(JobPtr job, std::chrono::milliseconds delay) {
    waiting_.insert(job);
    ++queued_;
    job->timer.expires_after(delay);
    job->timer.async_wait([weak = weak_from_this(), job](const std::error_code& ec) {
        if (ec == asio::error::operation_aborted)
            return;
        auto self = weak.lock();
        if (!self)
            return;
        self->waiting_.erase(job);
        // Ahead of new pushes: it has waited already.
        self->queue_.push_front(job);
        self->pump();
    });
}

void PushSender::finish(const JobPtr& job, std::error_code ec, unsigned status) {
    if (job->done) {
        auto done = std::move(job->done);
        done(ec, status);
    }
}

SenderStats PushSender::stats() const {
    SenderStats s;
    s.sent = sent_.load();
    s.failed = failed_.load();
    s.retries = retries_.load();
    s.queued = queued_.load();
    s.in_flight = inFlight_.load();
    return s;
}

} // namespace dhtgate::push
