// listen_load: opens many listen streams with a bounded number of connection attempts in flight
// and tells when every stream asked for so far is either established (200 headers) or failed.
#pragma once

#include "listen_stream.h"

#include <functional>
#include <memory>
#include <vector>

namespace bench {

class StreamPool {
public:
    // keys: the key of stream i is keys[i % keys.size()].
    StreamPool(asio::io_context& io, asio::ip::tcp::endpoint ep, std::vector<std::string> keys, std::size_t parallel);
    StreamPool(const StreamPool&) = delete;
    StreamPool& operator=(const StreamPool&) = delete;

    // Adds `count` streams; `settled` runs once all streams asked for so far got headers or failed.
    void open(std::size_t count, std::function<void()> settled);
    void closeAll();

    ListenEvents& events() { return events_; }
    std::size_t size() const { return streams_.size(); }
    std::size_t ready() const { return ready_; }     ///< got 200 headers
    std::size_t failed() const { return failed_; }   ///< connect/read error or close before headers
    std::size_t refused() const { return refused_; } ///< non-200 status
    std::size_t dropped() const { return dropped_; } ///< closed by the server after its headers

private:
    void launchMore();
    void settleOne();

    asio::io_context& io_;
    asio::ip::tcp::endpoint endpoint_;
    std::vector<std::string> keys_;
    std::size_t parallel_;
    ListenEvents events_;
    std::vector<std::shared_ptr<ListenStream>> streams_;
    std::size_t wanted_ {0};
    std::size_t launched_ {0};
    std::size_t inFlight_ {0};
    std::size_t ready_ {0}, failed_ {0}, refused_ {0}, dropped_ {0};
    std::function<void()> settled_;
};

} // namespace bench
