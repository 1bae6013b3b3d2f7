// Connects the server's persistent promises (permanent puts, push listeners) to the state file
// (state/state_store.h, state/state_saver.h; spec §8, §15.21): loads and restores them at start,
// saves after every change (coalesced over `state_save_window`) and at shutdown.
//
// Thread contract: created with the ServerContext; markDirty/restore/shutdown on the state
// executor (shutdown may also run once the io_context has stopped). loadStateFile runs on the
// thread calling ProxyServer::start (file IO never runs on the io thread, except the final flush).
#pragma once

#include "dhtgate/logger.h"
#include "state/state_store.h"

#include <memory>
#include <string>

namespace dhtgate::state {
class StateSaver;
}

namespace dhtgate::server {

class ServerContext;

class StateBridge {
public:
    explicit StateBridge(ServerContext& ctx);
    ~StateBridge();
    StateBridge(const StateBridge&) = delete;
    StateBridge& operator=(const StateBridge&) = delete;

    /// Re-creates the loaded entries: permanent puts re-put in the DHT, push listeners re-listened,
    /// their timers re-armed for the time left. `saveAllowed` false (a bad file could not be moved
    /// aside) disables saving, so that file is never overwritten.
    void restore(const state::PersistedState& loaded, bool saveAllowed);
    void markDirty();
    /// Writes the current state now (blocking), then stops saving.
    void shutdown();

private:
    state::PersistedState snapshot() const;

    ServerContext& ctx_;
    std::shared_ptr<state::StateSaver> saver_;
};

/// Loads `ctx.config().state_file` on the calling thread, reports a bad file (moved aside) in the
/// log, and posts the restoration to the state executor. No-op without a state file.
void loadState(ServerContext& ctx);

} // namespace dhtgate::server
