// Test helper: wait for a condition with a timeout, without sleeping to synchronise.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>

namespace dhtgate::test {

/// Re-evaluates `check` until it is true or `timeout` passes. `check` must itself block on
/// something real (e.g. a request/response round trip); this loop adds no sleep.
inline bool waitUntil(const std::function<bool()>& check, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    do {
        if (check())
            return true;
    } while (std::chrono::steady_clock::now() < deadline);
    return false;
}

/// Waits for a future with a timeout; true if it became ready.
template <typename T>
bool ready(std::future<T>& f, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    return f.wait_for(timeout) == std::future_status::ready;
}

/// A flag another thread sets and a test waits on.
class Latch {
public:
    void set() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            set_ = true;
        }
        cv_.notify_all();
    }
    bool wait(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
        std::unique_lock<std::mutex> lock(mutex_);
        return cv_.wait_for(lock, timeout, [&] { return set_; });
    }

private:
    std::mutex mutex_; // guards set_
    std::condition_variable cv_;
    bool set_ {false};
};

} // namespace dhtgate::test
