// The state shared by the routes of one ProxyServer: the DHT runner, config, logger, the state
// executor, and the per-resource registries (listen streams, permanent puts, in-flight gets, stats).
//
// Thread contract: everything here is touched only on `executor()` (the io thread, or a strand in
// pool mode). Other threads (DhtRunner callbacks) get in only through postFromAnyThread(), which
// drops the work once the server is closed so nothing is posted to an io_context being destroyed.
#pragma once

#include "dhtgate/config.h"
#include "dhtgate/logger.h"
#include "server/http_exchange.h"

#include <asio/any_io_executor.hpp>
#include <asio/post.hpp>
#include <opendht/callbacks.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace dht {
class DhtRunner;
}

namespace dhtgate::server {

class ListenRegistry;
class PermanentPuts;
class GetOperations;
class PushListeners;
class StateBridge;

struct RequestStats {
    std::uint64_t requests {0};    ///< every routed request except node info
    std::uint64_t lastRequests {0};
    std::chrono::steady_clock::time_point lastSnapshot {std::chrono::steady_clock::now()};
    std::int64_t startTime {0};    ///< Unix seconds
};

class ServerContext : public std::enable_shared_from_this<ServerContext> {
public:
    ServerContext(std::shared_ptr<dht::DhtRunner> dht, ServerConfig config, Logger log, asio::any_io_executor executor);
    ~ServerContext();

    /// The runner, to queue work on it: also kicks a driven runner (config.dht_kick) so the io
    /// thread runs that work once the current handler returns.
    dht::DhtRunner& dht() {
        if (config_.dht_kick)
            config_.dht_kick();
        return *dht_;
    }
    const ServerConfig& config() const { return config_; }
    const Logger& log() const { return log_; }
    const asio::any_io_executor& executor() const { return executor_; }

    ListenRegistry& listens() { return *listens_; }
    PermanentPuts& puts() { return *puts_; }
    GetOperations& gets() { return *gets_; }
    PushListeners& pushListeners() { return *pushListeners_; }
    /// The state file's saver bridge; nullptr without `config.state_file`.
    StateBridge* state() { return state_.get(); }
    /// Permanent puts or push listeners changed: save them (coalesced) if a state file is set.
    void stateChanged();
    RequestStats& stats() { return stats_; }

    /// Atomic: stop() reads it from its own thread when the io_context does not run.
    bool stopping() const { return stopping_; }

    /// Keeps a request waiting for a DHT callback. DHT-thread lambdas capture the returned id,
    /// never the request itself (its last reference must not be dropped on the DHT thread).
    std::uint64_t park(Request req);
    std::optional<Request> unpark(std::uint64_t id);

    /// Posts `f` to the state executor from any thread, unless the server is closed.
    template <typename F>
    void postFromAnyThread(F&& f) {
        std::lock_guard<std::mutex> lock(gateMutex_);
        if (!closed_)
            asio::post(executor_, std::forward<F>(f));
    }

    /// Calls `cb` (on the state executor) with node info at most 1 s old. `cb` gets nullptr if the
    /// DHT runner is not running.
    void withNodeInfo(std::function<void(const dht::NodeInfo*)> cb);
    /// The last node info fetched, if any (for the standalone-node put rule).
    const std::optional<dht::NodeInfo>& lastNodeInfo() const { return nodeInfo_; }
    /// Node info at most 1 s old without waiting, or nullptr (then use withNodeInfo()).
    const dht::NodeInfo* freshNodeInfo() const;
    /// Changes each time a new node info snapshot arrives (for caches built from it).
    std::uint64_t nodeInfoGeneration() const { return nodeInfoGeneration_; }

    /// The `GET /` body without its per-client part, rebuilt once per node info snapshot.
    struct NodeInfoBodyCache {
        std::uint64_t generation {0};
        std::string head; ///< up to and including "ops":N
        std::string tail; ///< ,"version":"..."}
    };
    NodeInfoBodyCache& nodeInfoBodyCache() { return nodeInfoBody_; }

    /// Stop serving: ends every stream (calls `written` once all final chunks are written),
    /// cancels DHT listens and permanent puts. On the state executor.
    void shutdown(std::function<void()> written);
    /// After shutdown: nothing more is posted from other threads.
    void close();

private:
    void onNodeInfo(std::shared_ptr<dht::NodeInfo> info);

    std::shared_ptr<dht::DhtRunner> dht_;
    ServerConfig config_;
    Logger log_;
    asio::any_io_executor executor_;

    std::unique_ptr<ListenRegistry> listens_;
    std::unique_ptr<PermanentPuts> puts_;
    std::unique_ptr<GetOperations> gets_;
    std::unique_ptr<PushListeners> pushListeners_;
    std::unique_ptr<StateBridge> state_;
    RequestStats stats_;
    std::atomic<bool> stopping_ {false};

    std::unordered_map<std::uint64_t, Request> parked_;
    std::uint64_t nextParkId_ {1};

    std::optional<dht::NodeInfo> nodeInfo_;
    std::chrono::steady_clock::time_point nodeInfoTime_;
    std::uint64_t nodeInfoGeneration_ {0};
    NodeInfoBodyCache nodeInfoBody_;
    std::vector<std::function<void(const dht::NodeInfo*)>> nodeInfoWaiters_;

    std::mutex gateMutex_; ///< guards closed_ only: the gate for posts from foreign threads
    bool closed_ {false};
};

} // namespace dhtgate::server
