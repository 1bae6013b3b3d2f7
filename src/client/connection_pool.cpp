#include "client/connection_pool.h"

namespace dhtgate::http::detail {

ConnectionPtr ConnectionPool::take(const std::string& authority) {
    auto it = idle_.find(authority);
    if (it == idle_.end())
        return {};
    auto& list = it->second;
    ConnectionPtr found;
    while (!list.empty() && !found) {
        auto conn = std::move(list.back().conn);
        list.pop_back();
        --total_;
        if (conn->isOpen())
            found = std::move(conn);
    }
    if (list.empty())
        idle_.erase(it);
    return found;
}

void ConnectionPool::release(ConnectionPtr conn) {
    if (!conn || !conn->isOpen() || maxPerHost_ == 0 || maxTotal_ == 0) {
        if (conn)
            conn->close();
        return;
    }
    auto& list = idle_[conn->authority()];
    if (list.size() >= maxPerHost_) {
        list.front().conn->close();
        list.pop_front();
        --total_;
    }
    list.push_back({std::move(conn), ++clock_});
    ++total_;
    while (total_ > maxTotal_)
        evictOldest();
}

void ConnectionPool::evictOldest() {
    auto oldest = idle_.end();
    for (auto it = idle_.begin(); it != idle_.end(); ++it)
        if (oldest == idle_.end() || it->second.front().since < oldest->second.front().since)
            oldest = it;
    if (oldest == idle_.end())
        return;
    oldest->second.front().conn->close();
    oldest->second.pop_front();
    --total_;
    if (oldest->second.empty())
        idle_.erase(oldest);
}

void ConnectionPool::clear() {
    for (auto& [authority, list] : idle_)
        for (auto& idle : list)
            idle.conn->close();
    idle_.clear();
    total_ = 0;
}

} // namespace dhtgate::http::detail
