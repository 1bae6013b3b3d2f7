#include "server/state_bridge.h"

#include "server/permanent_puts.h"
#include "server/push_listeners.h"
#include "server/server_context.h"
#include "state/state_saver.h"

#include <asio/io_context.hpp>

namespace dhtgate::server {

StateBridge::StateBridge(ServerContext& ctx) : ctx_(ctx) {
    auto& io = static_cast<asio::io_context&>(asio::query(ctx.executor(), asio::execution::context));
    state::StateSaver::Options o;
    o.window = ctx.config().state_save_window;
    o.logger = ctx.log();
    saver_ = state::StateSaver::create(io, ctx.config().state_file, [this] { return snapshot(); }, o);
}

StateBridge::~StateBridge() = default;

state::PersistedState StateBridge::snapshot() const {
    state::PersistedState s;
    s.puts = ctx_.puts().records();
    s.listeners = ctx_.pushListeners().records();
    return s;
}

void StateBridge::markDirty() {
    if (saver_)
        saver_->markDirty();
}

void StateBridge::restore(const state::PersistedState& loaded, bool saveAllowed) {
    if (!saveAllowed) {
        ctx_.log().error("[state] not saving to {}: the unusable file there could not be moved aside",
                         ctx_.config().state_file);
        saver_.reset();
    }
    for (const auto& put : loaded.puts)
        ctx_.puts().restore(put);
    for (const auto& listener : loaded.listeners)
        ctx_.pushListeners().restore(listener);
    if (!loaded.empty())
        ctx_.log().info("[state] restored {} permanent put(s) on {} key(s) and {} push listener(s) from {}",
                        ctx_.puts().valueCount(), ctx_.puts().keyCount(), ctx_.pushListeners().listenerCount(),
                        ctx_.config().state_file);
}

void StateBridge::shutdown() {
    if (!saver_)
        return;
    std::string message;
    if (!saver_->flush(&message))
        ctx_.log().info("[state] saved {} permanent put(s) and {} push listener(s) to {}", ctx_.puts().valueCount(),
                        ctx_.pushListeners().listenerCount(), ctx_.config().state_file);
    saver_.reset(); // joins the saver's worker thread
}

void loadState(ServerContext& ctx) {
    const auto& path = ctx.config().state_file;
    if (path.empty() || !ctx.state())
        return;
    auto result = state::loadOrMoveAside(path, state::unixNow());
    bool saveAllowed = true;
    if (result.error) {
        // The gateway starts empty; the bad file is kept under another name for inspection.
        ctx.log().error("[state] {}", result.message);
        if (!result.moved_to.empty())
            ctx.log().error("[state] starting with an empty state; the unusable file was moved to {}", result.moved_to);
        else
            saveAllowed = false;
    } else if (result.file_missing) {
        ctx.log().info("[state] no state file at {} yet: starting empty", path);
    } else if (result.dropped_expired) {
        ctx.log().info("[state] {}: dropped {} expired entr{}", path, result.dropped_expired,
                       result.dropped_expired == 1 ? "y" : "ies");
    }
    auto shared = ctx.shared_from_this();
    ctx.postFromAnyThread([shared, state = std::move(result.state), saveAllowed] {
        if (auto* bridge = shared->state())
            bridge->restore(state, saveAllowed);
    });
}

} // namespace dhtgate::server
