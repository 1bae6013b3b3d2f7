#include "listen_stream.h"

namespace bench {

void ListenStream::start()
{
    request_ = "GET /key/" + key_ + "/listen HTTP/1.1\r\nHost: " + endpoint_.address().to_string()
             + "\r\nAccept: */*\r\nConnection: keep-alive\r\n\r\n";
    socket_.async_connect(endpoint_, [self = shared_from_this()](asio::error_code ec) {
        if (ec)
            return self->fail();
        asio::async_write(self->socket_, asio::buffer(self->request_), [self](asio::error_code wec, std::size_t) {
            if (wec)
                return self->fail();
            self->doRead();
        });
    });
}

void ListenStream::doRead()
{
    socket_.async_read_some(asio::buffer(buf_), [self = shared_from_this()](asio::error_code ec, std::size_t n) {
        if (ec)
            return self->fail();
        self->onData(n);
        if (!self->closed_)
            self->doRead();
    });
}

void ListenStream::onData(std::size_t n)
{
    pending_.append(buf_.data(), n);
    if (!headersDone_) {
        const std::size_t end = pending_.find("\r\n\r\n");
        if (end == std::string::npos) {
            if (pending_.size() > 65536)
                fail();
            return;
        }
        headersDone_ = true;
        const bool ok = pending_.compare(0, 12, "HTTP/1.1 200") == 0;
        pending_.erase(0, end + 4);
        if (events_.onHeaders)
            events_.onHeaders(*this, ok);
        if (!ok)
            return close();
    }
    const std::string& marker = events_.marker;
    if (!markerSeen_ && !marker.empty() && pending_.find(marker) != std::string::npos) {
        markerSeen_ = true;
        if (events_.onMarker)
            events_.onMarker(*this);
    }
    const std::size_t keep = marker.size() > 1 ? marker.size() - 1 : 0;
    if (pending_.size() > keep)
        pending_.erase(0, pending_.size() - keep);
}

void ListenStream::fail()
{
    if (closed_)
        return;
    close();
    if (events_.onClosed)
        events_.onClosed(*this);
}

void ListenStream::close()
{
    closed_ = true;
    asio::error_code ignored;
    socket_.close(ignored);
}

} // namespace bench
