// Idle keep-alive connections, per scheme+host:port, bounded.
#pragma once

#include "client/connection.h"

#include <cstddef>
#include <deque>
#include <map>
#include <string>

namespace dhtgate::http::detail {

/// Holds connections between requests (io thread only). The most recently released
/// connection is reused first; above the limits the oldest idle connection is closed.
///
/// An idle connection the server has closed is only noticed when it is reused: the request
/// then fails before any response byte, and the client retries it once on a new connection.
class ConnectionPool {
public:
    ConnectionPool(std::size_t maxPerHost, std::size_t maxTotal) : maxPerHost_(maxPerHost), maxTotal_(maxTotal) {}
    ~ConnectionPool() { clear(); }

    /// An idle open connection to `authority`, or null.
    ConnectionPtr take(const std::string& authority);
    /// Offers a connection whose last response completed cleanly and allows reuse.
    void release(ConnectionPtr conn);
    /// Closes every idle connection.
    void clear();
    std::size_t idleCount() const { return total_; }

private:
    void evictOldest();

    std::size_t maxPerHost_;
    std::size_t maxTotal_;
    std::size_t total_ {0};
    std::uint64_t clock_ {0};
    struct Idle {
        ConnectionPtr conn;
        std::uint64_t since;
    };
    std::map<std::string, std::deque<Idle>> idle_;
};

} // namespace dhtgate::http::detail
