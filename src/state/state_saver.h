// dhtgate: coalescing, off-thread saver of the persisted state.
//
//   io thread                               worker thread (owned)
//   ---------                               ---------------------
//   markDirty() ─ arms timer (window) ─┐
//   markDirty() (already armed: no-op) │
//   timer fires: snapshot() + encode() ┴──▶ writeFileAtomically()
//   onWriteDone() ◀──────────────────────── (posted back)
//
// The snapshot is taken and encoded on the io thread (the state belongs to it), so the worker
// only ever sees bytes. At most one write is in flight and at most one encoded snapshot waits
// behind it (a newer one replaces it), so a slow disk costs bounded memory and never blocks
// the io thread. A failed save is retried after `retry_delay` (and by the next markDirty).
#pragma once

#include "dhtgate/logger.h"
#include "state/state_store.h"

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

namespace dhtgate::state {

class StateSaver : public std::enable_shared_from_this<StateSaver> {
public:
    using Snapshot = std::function<PersistedState()>;
    /// Called on the io thread after each save attempt (not for flush()).
    using SavedCallback = std::function<void(std::error_code, const std::string& message)>;

    struct Options {
        std::chrono::milliseconds window {std::chrono::seconds(1)};       ///< coalescing window
        std::chrono::milliseconds retry_delay {std::chrono::seconds(10)}; ///< after a failed save
        Logger logger;
        SavedCallback on_saved;
    };

    /// `io` must outlive the saver. `snapshot` is called on the io thread only.
    static std::shared_ptr<StateSaver> create(asio::io_context& io, std::string path, Snapshot snapshot, Options options);
    static std::shared_ptr<StateSaver> create(asio::io_context& io, std::string path, Snapshot snapshot) {
        return create(io, std::move(path), std::move(snapshot), Options {});
    }

    /// Waits for the write in flight (if any), then stops the worker. A change marked dirty but
    /// not yet saved is NOT written: call flush() first at shutdown. Call on the io thread or
    /// once it has stopped.
    ~StateSaver();
    StateSaver(const StateSaver&) = delete;
    StateSaver& operator=(const StateSaver&) = delete;

    /// The state changed: save it once the coalescing window has passed. Cheap; io thread only.
    void markDirty();

    /// Saves the current state now and returns when it is on disk (after any write in flight).
    /// Blocks the caller: meant for shutdown, on the io thread or after it has stopped.
    std::error_code flush(std::string* message = nullptr);

    /// Nothing armed, in flight or waiting: every change marked so far is on disk (or failed). io thread.
    bool idle() const { return !armed_ && !writing_ && !pending_; }

    const std::string& path() const { return path_; }
    /// Completed save attempts (flush included), successful or not. Any thread.
    std::size_t writes() const { return writes_.load(); }
    std::size_t failures() const { return failures_.load(); }

private:
    StateSaver(asio::io_context& io, std::string path, Snapshot snapshot, Options options);
    void arm(std::chrono::milliseconds delay);
    void onTimer();
    bool takeSnapshot(std::string& bytes, std::string& message);
    void startWrite(std::string bytes);
    void onWriteDone(std::error_code ec, const std::string& message);
    std::error_code writeOnWorker(const std::string& bytes, std::string& message);

    asio::io_context& io_;
    std::string path_;
    Snapshot snapshot_;
    Options options_;
    asio::steady_timer timer_;
    bool armed_ {false};
    bool writing_ {false};
    std::optional<std::string> pending_; ///< newest snapshot waiting for the write in flight

    std::atomic<std::size_t> writes_ {0};
    std::atomic<std::size_t> failures_ {0};
    asio::io_context workerIo_;
    asio::executor_work_guard<asio::io_context::executor_type> workerGuard_;
    std::thread worker_; ///< last: starts once everything it may touch exists
};

} // namespace dhtgate::state
