#include "keepalive_client.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace bench {

namespace {

std::string lowered(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

} // namespace

std::size_t parseResponse(const std::string& buf, int& status, std::string& body, bool& close)
{
    const std::size_t headEnd = buf.find("\r\n\r\n");
    if (headEnd == std::string::npos)
        return 0;
    const std::string head = lowered(buf.substr(0, headEnd + 2));
    status = head.size() > 12 ? std::atoi(head.c_str() + 9) : 0;
    close = head.find("\r\nconnection: close\r\n") != std::string::npos;
    std::size_t pos = headEnd + 4;
    if (head.find("\r\ntransfer-encoding: chunked\r\n") != std::string::npos) {
        body.clear();
        for (;;) {
            const std::size_t eol = buf.find("\r\n", pos);
            if (eol == std::string::npos)
                return 0;
            const std::size_t size = std::strtoul(buf.c_str() + pos, nullptr, 16);
            if (size == 0)
                return buf.size() >= eol + 4 ? eol + 4 : 0;
            if (buf.size() < eol + 2 + size + 2)
                return 0;
            body.append(buf, eol + 2, size);
            pos = eol + 2 + size + 2;
        }
    }
    std::size_t length = 0;
    if (auto cl = head.find("\r\ncontent-length:"); cl != std::string::npos)
        length = std::strtoul(head.c_str() + cl + 17, nullptr, 10);
    if (buf.size() < pos + length)
        return 0;
    body = buf.substr(pos, length);
    return pos + length;
}

void KeepAliveClient::send(std::string request, Done done)
{
    request_ = std::move(request);
    done_ = std::move(done);
    t0_ = Clock::now();
    if (connected_)
        return doWrite();
    asio::error_code ignored;
    socket_.close(ignored);
    socket_.async_connect(endpoint_, [self = shared_from_this()](asio::error_code ec) {
        if (ec)
            return self->finish(0, {});
        asio::error_code ignored;
        self->socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
        self->connected_ = true;
        self->doWrite();
    });
}

void KeepAliveClient::doWrite()
{
    asio::async_write(socket_, asio::buffer(request_), [self = shared_from_this()](asio::error_code ec, std::size_t) {
        if (ec)
            return self->finish(0, {});
        self->doRead();
    });
}

void KeepAliveClient::doRead()
{
    socket_.async_read_some(asio::buffer(buf_), [self = shared_from_this()](asio::error_code ec, std::size_t n) {
        if (ec)
            return self->finish(0, {});
        self->in_.append(self->buf_.data(), n);
        int status = 0;
        bool close = false;
        std::string body;
        const std::size_t used = parseResponse(self->in_, status, body, close);
        if (used == 0)
            return self->doRead();
        self->in_.erase(0, used);
        if (close)
            self->connected_ = false;
        self->finish(status, std::move(body));
    });
}

void KeepAliveClient::finish(int status, std::string body)
{
    if (status == 0) {
        connected_ = false;
        in_.clear();
    }
    auto done = std::move(done_);
    done_ = nullptr;
    if (done)
        done(status, secondsSince(t0_), body);
}

void KeepAliveClient::close()
{
    asio::error_code ignored;
    socket_.close(ignored);
    connected_ = false;
}

} // namespace bench
