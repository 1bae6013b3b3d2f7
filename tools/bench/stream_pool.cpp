#include "stream_pool.h"

namespace bench {

StreamPool::StreamPool(asio::io_context& io, asio::ip::tcp::endpoint ep, std::vector<std::string> keys, std::size_t parallel)
    : io_(io), endpoint_(ep), keys_(std::move(keys)), parallel_(parallel ? parallel : 1)
{
    events_.onHeaders = [this](ListenStream&, bool ok) {
        ++(ok ? ready_ : refused_);
        settleOne();
    };
    events_.onClosed = [this](ListenStream& s) {
        if (s.headersDone()) {
            ++dropped_;
            return;
        }
        ++failed_;
        settleOne();
    };
}

void StreamPool::open(std::size_t count, std::function<void()> settled)
{
    wanted_ += count;
    settled_ = std::move(settled);
    streams_.reserve(wanted_);
    launchMore();
}

void StreamPool::launchMore()
{
    while (launched_ < wanted_ && inFlight_ < parallel_) {
        auto s = std::make_shared<ListenStream>(io_, endpoint_, keys_[launched_ % keys_.size()], events_);
        streams_.push_back(s);
        ++launched_;
        ++inFlight_;
        s->start();
    }
    if (launched_ == wanted_ && inFlight_ == 0 && settled_) {
        auto done = std::move(settled_);
        settled_ = nullptr;
        asio::post(io_, done);
    }
}

void StreamPool::settleOne()
{
    --inFlight_;
    launchMore();
}

void StreamPool::closeAll()
{
    for (auto& s : streams_)
        s->close();
}

} // namespace bench
