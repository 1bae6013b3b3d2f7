#include "server/raw_stream.h"

#include <asio/post.hpp>
#include <asio/write.hpp>

#include <cstdio>

namespace dhtgate::server {

RawStream::RawStream(GuardedSocket& socket, std::shared_ptr<void> owner, std::function<void()> onClosed)
    : socket_(socket), owner_(std::move(owner)), onClosed_(std::move(onClosed)) {}

RawStream::~RawStream() {
    std::error_code ignored;
    socket_.lowest_layer().close(ignored);
}

std::shared_ptr<const std::string> RawStream::frame(const std::string& data) {
    char size[24];
    const int n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    auto out = std::make_shared<std::string>();
    out->reserve(static_cast<std::size_t>(n) + data.size() + 2);
    out->append(size, static_cast<std::size_t>(n));
    out->append(data);
    out->append("\r\n", 2);
    return out;
}

void RawStream::start(std::shared_ptr<const std::string> header) {
    send(std::move(header));
    readNext();
}

void RawStream::send(std::shared_ptr<const std::string> framed) {
    if (closed_ || ending_ || !framed || framed->empty())
        return;
    queuedBytes_ += framed->size();
    if (queuedBytes_ > kMaxQueued)
        return close(); // the client does not read: drop it rather than buffer without bound
    queue_.push_back(std::move(framed));
    if (!writing_)
        writeNext();
}

void RawStream::end(std::function<void()> written) {
    if (closed_ || ending_) {
        if (written)
            written();
        return;
    }
    endWritten_ = std::move(written);
    static const auto finalChunk = std::make_shared<const std::string>("0\r\n\r\n");
    queue_.push_back(finalChunk);
    ending_ = true;
    if (!writing_)
        writeNext();
}

void RawStream::writeNext() {
    if (queue_.empty()) {
        if (ending_) {
            std::error_code ignored;
            socket_.lowest_layer().shutdown(asio::socket_base::shutdown_send, ignored);
            close();
        }
        return;
    }
    writing_ = true;
    inFlight_.swap(queue_);
    auto self = shared_from_this();
    auto done = [self](const std::error_code& ec, std::size_t) { self->onWritten(ec); };
    if (inFlight_.size() == 1) {
        asio::async_write(socket_.lowest_layer(), asio::buffer(*inFlight_.front()), std::move(done));
    } else {
        buffers_.clear();
        for (const auto& b : inFlight_)
            buffers_.emplace_back(asio::buffer(*b));
        asio::async_write(socket_.lowest_layer(), buffers_, std::move(done));
    }
}

void RawStream::onWritten(const std::error_code& ec) {
    writing_ = false;
    for (const auto& b : inFlight_)
        queuedBytes_ -= b->size();
    inFlight_.clear();
    if (buffers_.capacity() > 16)
        std::vector<asio::const_buffer>().swap(buffers_);
    if (ec || closed_)
        return close();
    writeNext();
}

void RawStream::readNext() {
    if (closed_)
        return;
    // Nothing more is expected from the client: any bytes are discarded, EOF or an error ends it.
    socket_.lowest_layer().async_read_some(asio::buffer(readBuffer_),
                                           [self = shared_from_this()](const std::error_code& ec, std::size_t) {
                                               if (ec)
                                                   return self->close();
                                               self->readNext();
                                           });
}

void RawStream::close() {
    if (closed_)
        return;
    closed_ = true;
    std::error_code ignored;
    socket_.lowest_layer().close(ignored);
    queue_.clear();
    if (auto written = std::move(endWritten_))
        asio::post(socket_.get_executor(), std::move(written));
    if (auto onClosed = std::move(onClosed_))
        asio::post(socket_.get_executor(), std::move(onClosed));
}

} // namespace dhtgate::server
