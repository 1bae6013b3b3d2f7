// listen_load: one `GET /key/<h>/listen` stream. Reports when its response headers arrived, when
// a marker string (the data of the value the benchmark put) first appears in the stream, and
// when the stream ends or fails.
#pragma once

#include "load_common.h"

#include <asio.hpp>

#include <array>
#include <functional>
#include <memory>
#include <string>

namespace bench {

class ListenStream;

// Shared by every stream of one workload; owned by the workload, outlives the streams.
struct ListenEvents {
    std::string marker;                                  ///< empty: not looking yet
    std::function<void(ListenStream&, bool ok)> onHeaders; ///< ok: a 200 status line
    std::function<void(ListenStream&)> onMarker;
    std::function<void(ListenStream&)> onClosed;           ///< failure or end, after or before headers
};

class ListenStream : public std::enable_shared_from_this<ListenStream> {
public:
    ListenStream(asio::io_context& io, asio::ip::tcp::endpoint ep, const std::string& key, ListenEvents& events)
        : socket_(io), endpoint_(ep), key_(key), events_(events) {}

    void start();
    void close();

    bool headersDone() const { return headersDone_; }
    bool markerSeen() const { return markerSeen_; }
    bool closed() const { return closed_; }
    double markerLatency {0}; ///< set by the workload

private:
    void doRead();
    void onData(std::size_t n);
    void fail();

    asio::ip::tcp::socket socket_;
    asio::ip::tcp::endpoint endpoint_;
    std::string key_;
    ListenEvents& events_;
    std::string request_;
    std::string pending_; ///< header bytes, then the tail kept to find a marker split across reads
    std::array<char, 4096> buf_ {};
    bool headersDone_ {false};
    bool markerSeen_ {false};
    bool closed_ {false};
};

} // namespace bench
