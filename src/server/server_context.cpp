#include "server/server_context.h"

#include "server/get_operations.h"
#include "server/listen_registry.h"
#include "server/permanent_puts.h"
#include "server/push_listeners.h"
#include "server/state_bridge.h"
#include "server/write_barrier.h"

#include <opendht/dhtrunner.h>

namespace dhtgate::server {

ServerContext::ServerContext(std::shared_ptr<dht::DhtRunner> dht, ServerConfig config, Logger log,
                             asio::any_io_executor executor)
    : dht_(std::move(dht)),
      config_(std::move(config)),
      log_(std::move(log)),
      executor_(std::move(executor)),
      listens_(std::make_unique<ListenRegistry>(*this)),
      puts_(std::make_unique<PermanentPuts>(*this)),
      gets_(std::make_unique<GetOperations>(*this)),
      pushListeners_(std::make_unique<PushListeners>(*this)) {
    if (!config_.state_file.empty())
        state_ = std::make_unique<StateBridge>(*this);
    stats_.startTime = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
}

ServerContext::~ServerContext() = default;

void ServerContext::stateChanged() {
    if (state_ && !stopping_)
        state_->markDirty();
}

const dht::NodeInfo* ServerContext::freshNodeInfo() const {
    if (nodeInfo_ && std::chrono::steady_clock::now() - nodeInfoTime_ < std::chrono::seconds(1))
        return &*nodeInfo_;
    return nullptr;
}

void ServerContext::withNodeInfo(std::function<void(const dht::NodeInfo*)> cb) {
    if (const auto* info = freshNodeInfo()) {
        cb(info);
        return;
    }
    if (!dht_->isRunning()) {
        cb(nullptr);
        return;
    }
    nodeInfoWaiters_.push_back(std::move(cb));
    if (nodeInfoWaiters_.size() > 1)
        return; // a fetch is already under way
    std::weak_ptr<ServerContext> weak = shared_from_this();
    dht().getNodeInfo([weak](std::shared_ptr<dht::NodeInfo> info) {
        if (auto ctx = weak.lock())
            ctx->postFromAnyThread([ctx, info = std::move(info)]() mutable { ctx->onNodeInfo(std::move(info)); });
    });
}

void ServerContext::onNodeInfo(std::shared_ptr<dht::NodeInfo> info) {
    if (info) {
        nodeInfo_ = *info;
        nodeInfoTime_ = std::chrono::steady_clock::now();
        ++nodeInfoGeneration_;
    }
    auto waiters = std::move(nodeInfoWaiters_);
    nodeInfoWaiters_.clear();
    for (auto& cb : waiters)
        cb(info ? &*nodeInfo_ : nullptr);
}

std::uint64_t ServerContext::park(Request req) {
    const auto id = nextParkId_++;
    parked_.emplace(id, std::move(req));
    return id;
}

std::optional<Request> ServerContext::unpark(std::uint64_t id) {
    auto it = parked_.find(id);
    if (it == parked_.end())
        return std::nullopt;
    auto req = std::move(it->second);
    parked_.erase(it);
    return req;
}

void ServerContext::shutdown(std::function<void()> written) {
    if (stopping_)
        return;
    stopping_ = true;
    if (state_)
        state_->shutdown(); // saves the puts and listeners before they are cancelled below
    WriteBarrier barrier(std::move(written));
    listens_->shutdown(barrier.token());
    gets_->shutdown(barrier.token());
    puts_->shutdown();
    pushListeners_->shutdown();
    auto parked = std::move(parked_);
    parked_.clear();
    for (auto& [id, req] : parked)
        req.replyError(503, "Server stopping");
    auto waiters = std::move(nodeInfoWaiters_);
    nodeInfoWaiters_.clear();
    for (auto& cb : waiters)
        cb(nullptr);
}

void ServerContext::close() {
    std::lock_guard<std::mutex> lock(gateMutex_);
    closed_ = true;
}

} // namespace dhtgate::server
