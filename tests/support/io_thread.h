// Test helper: an io_context running on its own thread, and a way to run code on it and wait.
#pragma once

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace dhtgate::test {

class IoThread {
public:
    IoThread() : guard_(asio::make_work_guard(io_)), thread_([this] { io_.run(); }) {}
    ~IoThread() { stop(); }
    IoThread(const IoThread&) = delete;
    IoThread& operator=(const IoThread&) = delete;

    asio::io_context& io() { return io_; }
    std::thread::id id() const { return thread_.get_id(); }

    /// Runs `fn` on the io thread and returns its result; throws if it takes over `timeout`.
    template <typename Fn>
    auto run(Fn fn, std::chrono::milliseconds timeout = std::chrono::seconds(10)) -> decltype(fn()) {
        using R = decltype(fn());
        auto task = std::make_shared<std::packaged_task<R()>>(std::move(fn));
        auto result = task->get_future();
        asio::post(io_, [task] { (*task)(); });
        if (result.wait_for(timeout) != std::future_status::ready)
            throw std::runtime_error("io thread task timed out");
        return result.get();
    }

    /// Lets run() return once all queued work is done, and joins.
    void stop() {
        guard_.reset();
        if (thread_.joinable())
            thread_.join();
    }

private:
    asio::io_context io_;
    asio::executor_work_guard<asio::io_context::executor_type> guard_;
    std::thread thread_;
};

/// A counter other threads bump and a test waits on, with a timeout (no sleeps).
class Counter {
public:
    void bump() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            ++value_;
        }
        cv_.notify_all();
    }
    /// True once the counter reaches `target` within `timeout`.
    bool waitFor(std::size_t target, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
        std::unique_lock<std::mutex> lock(mutex_);
        return cv_.wait_for(lock, timeout, [&] { return value_ >= target; });
    }
    std::size_t value() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return value_;
    }

private:
    mutable std::mutex mutex_; // guards value_
    std::condition_variable cv_;
    std::size_t value_ {0};
};

} // namespace dhtgate::test
