#include "state/state_saver.h"

#include "dhtgate/error.h"

#include <asio/post.hpp>

#include <future>

namespace dhtgate::state {

std::shared_ptr<StateSaver> StateSaver::create(asio::io_context& io, std::string path, Snapshot snapshot, Options options) {
    return std::shared_ptr<StateSaver>(new StateSaver(io, std::move(path), std::move(snapshot), std::move(options)));
}

StateSaver::StateSaver(asio::io_context& io, std::string path, Snapshot snapshot, Options options)
    : io_(io), path_(std::move(path)), snapshot_(std::move(snapshot)), options_(std::move(options)), timer_(io),
      workerGuard_(asio::make_work_guard(workerIo_)), worker_([this] { workerIo_.run(); }) {}

StateSaver::~StateSaver() {
    timer_.cancel();
    workerGuard_.reset(); // run() returns once the queued writes are done
    if (worker_.joinable())
        worker_.join();
}

void StateSaver::markDirty() {
    if (!armed_)
        arm(options_.window);
}

void StateSaver::arm(std::chrono::milliseconds delay) {
    armed_ = true;
    timer_.expires_after(delay);
    timer_.async_wait([weak = weak_from_this()](const std::error_code& ec) {
        if (ec == asio::error::operation_aborted)
            return;
        if (auto self = weak.lock())
            self->onTimer();
    });
}

void StateSaver::onTimer() {
    armed_ = false;
    std::string bytes, message;
    if (!takeSnapshot(bytes, message)) {
        onWriteDone(errc::state_io, message);
        return;
    }
    if (writing_) {
        pending_ = std::move(bytes); // replaces an older waiting snapshot: only the newest matters
        return;
    }
    startWrite(std::move(bytes));
}

bool StateSaver::takeSnapshot(std::string& bytes, std::string& message) {
    try {
        bytes = encode(snapshot_());
        return true;
    } catch (const std::exception& e) { // the snapshot callback is the host's code
        message = std::string("cannot take a state snapshot: ") + e.what();
        return false;
    }
}

void StateSaver::startWrite(std::string bytes) {
    writing_ = true;
    asio::post(workerIo_, [this, weak = weak_from_this(), bytes = std::move(bytes)] {
        // `this` is alive: the destructor joins this thread before members go away.
        std::string message;
        auto ec = writeOnWorker(bytes, message);
        asio::post(io_, [weak, ec, message = std::move(message)] {
            if (auto self = weak.lock())
                self->onWriteDone(ec, message);
        });
    });
}

std::error_code StateSaver::writeOnWorker(const std::string& bytes, std::string& message) {
    auto ec = writeFileAtomically(path_, bytes, &message);
    if (ec)
        ++failures_;
    ++writes_;
    return ec;
}

void StateSaver::onWriteDone(std::error_code ec, const std::string& message) {
    writing_ = false;
    if (ec) {
        options_.logger.error("[state] {}", message);
        if (!armed_)
            arm(options_.retry_delay);
    } else {
        options_.logger.debug("[state] saved {}", path_);
    }
    if (options_.on_saved)
        options_.on_saved(ec, message);
    if (pending_) {
        auto bytes = std::move(*pending_);
        pending_.reset();
        startWrite(std::move(bytes));
    }
}

std::error_code StateSaver::flush(std::string* message) {
    timer_.cancel();
    armed_ = false;
    pending_.reset(); // superseded by the snapshot below
    std::string bytes, why;
    if (!takeSnapshot(bytes, why)) {
        options_.logger.error("[state] {}", why);
        if (message)
            *message = why;
        return errc::state_io;
    }
    // Queued behind any write in flight, so the file ends with this (the newest) snapshot.
    std::promise<std::pair<std::error_code, std::string>> done;
    auto result = done.get_future();
    asio::post(workerIo_, [this, &done, &bytes] {
        std::string m;
        auto ec = writeOnWorker(bytes, m);
        done.set_value({ec, std::move(m)});
    });
    auto [ec, why2] = result.get();
    if (ec)
        options_.logger.error("[state] {}", why2);
    else
        options_.logger.debug("[state] flushed {}", path_);
    if (message)
        *message = why2;
    return ec;
}

} // namespace dhtgate::state
