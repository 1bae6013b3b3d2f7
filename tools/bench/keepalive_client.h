// listen_load: one keep-alive HTTP/1.1 connection sending requests one after the other and
// reading each complete response (Content-Length or chunked). Reconnects when the server closed.
#pragma once

#include "load_common.h"

#include <asio.hpp>

#include <array>
#include <functional>
#include <memory>
#include <string>

namespace bench {

class KeepAliveClient : public std::enable_shared_from_this<KeepAliveClient> {
public:
    // status is the HTTP status, or 0 on a transport error; seconds is the request's latency.
    using Done = std::function<void(int status, double seconds, const std::string& body)>;

    KeepAliveClient(asio::io_context& io, asio::ip::tcp::endpoint ep) : socket_(io), endpoint_(ep) {}
    // Sends one raw request (a complete HTTP/1.1 message). Only one request may be in flight.
    void send(std::string request, Done done);
    void close();

private:
    void doWrite();
    void doRead();
    void finish(int status, std::string body);

    asio::ip::tcp::socket socket_;
    asio::ip::tcp::endpoint endpoint_;
    bool connected_ {false};
    std::string request_;
    std::string in_;
    std::array<char, 16384> buf_ {};
    Done done_;
    Clock::time_point t0_;
};

// Parses one complete response at the start of `buf`. Returns the bytes it spans (0 while it is
// incomplete) and fills status, body (chunked bodies are de-chunked) and close (Connection: close).
std::size_t parseResponse(const std::string& buf, int& status, std::string& body, bool& close);

} // namespace bench
