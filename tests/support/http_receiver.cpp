#include "support/http_receiver.h"

#include <asio/ip/tcp.hpp>
#include <asio/read.hpp>
#include <asio/read_until.hpp>
#include <asio/streambuf.hpp>
#include <asio/write.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>
#include <thread>

namespace dhtgate::test {

using asio::ip::tcp;

struct HttpReceiver::Impl {
    asio::io_context io;
    tcp::acceptor acceptor {io};
    std::thread thread;

    mutable std::mutex mutex; // guards everything below (shared with the test thread)
    std::condition_variable cv;
    std::vector<Received> received;
    std::deque<Reply> scripted;
    Reply defaultReply;
    std::size_t accepted {0};
    std::vector<std::weak_ptr<tcp::socket>> sockets;

    Reply nextReply(Received r) {
        std::lock_guard<std::mutex> lock(mutex);
        received.push_back(std::move(r));
        cv.notify_all();
        if (scripted.empty())
            return defaultReply;
        Reply reply = scripted.front();
        scripted.pop_front();
        return reply;
    }

    void accept() {
        acceptor.async_accept([this](std::error_code ec, tcp::socket s) {
            if (ec)
                return;
            auto socket = std::make_shared<tcp::socket>(std::move(s));
            std::size_t index;
            {
                std::lock_guard<std::mutex> lock(mutex);
                index = accepted++;
                sockets.push_back(socket);
            }
            readRequest(socket, std::make_shared<asio::streambuf>(), index);
            accept();
        });
    }

    void readRequest(std::shared_ptr<tcp::socket> socket, std::shared_ptr<asio::streambuf> buf, std::size_t index) {
        asio::async_read_until(*socket, *buf, "\r\n\r\n", [this, socket, buf, index](std::error_code ec, std::size_t n) {
            if (ec)
                return;
            std::string head(asio::buffers_begin(buf->data()), asio::buffers_begin(buf->data()) + static_cast<std::ptrdiff_t>(n));
            buf->consume(n);
            auto req = std::make_shared<Received>();
            req->connection = index;
            std::istringstream lines(head);
            std::string line, version;
            std::getline(lines, line);
            std::istringstream(line) >> req->method >> req->target >> version;
            std::size_t length = 0;
            bool close = false;
            while (std::getline(lines, line) && line != "\r") {
                if (!line.empty() && line.back() == '\r')
                    line.pop_back();
                auto colon = line.find(':');
                if (colon == std::string::npos)
                    continue;
                std::string name = line.substr(0, colon);
                std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
                std::string value = line.substr(colon + 1);
                value.erase(0, value.find_first_not_of(' '));
                if (name == "content-length")
                    length = std::strtoul(value.c_str(), nullptr, 10);
                if (name == "connection" && value == "close")
                    close = true;
                req->headers.emplace_back(name, value);
            }
            std::size_t have = std::min(length, buf->size());
            std::size_t missing = length - have;
            asio::async_read(*socket, *buf, asio::transfer_exactly(missing),
                             [this, socket, buf, index, req, length, close](std::error_code ec2, std::size_t) {
                                 if (ec2)
                                     return;
                                 req->body.assign(asio::buffers_begin(buf->data()),
                                                  asio::buffers_begin(buf->data()) + static_cast<std::ptrdiff_t>(length));
                                 buf->consume(length);
                                 respond(socket, buf, index, nextReply(*req), close);
                             });
        });
    }

    void respond(std::shared_ptr<tcp::socket> socket, std::shared_ptr<asio::streambuf> buf, std::size_t index,
                 const Reply& reply, bool clientClose) {
        bool close = reply.close || clientClose;
        std::ostringstream out;
        out << "HTTP/1.1 " << reply.status << " Scripted\r\n";
        for (const auto& [n, v] : reply.headers)
            out << n << ": " << v << "\r\n";
        out << "Content-Type: application/json\r\nContent-Length: " << reply.body.size() << "\r\n";
        if (close)
            out << "Connection: close\r\n";
        out << "\r\n" << reply.body;
        auto bytes = std::make_shared<std::string>(out.str());
        asio::async_write(*socket, asio::buffer(*bytes), [this, socket, buf, index, bytes, close](std::error_code ec, std::size_t) {
            if (ec)
                return;
            if (close) {
                std::error_code ignored;
                socket->shutdown(tcp::socket::shutdown_both, ignored);
                socket->close(ignored);
                return;
            }
            readRequest(socket, buf, index);
        });
    }
};

std::string HttpReceiver::Received::header(const std::string& name) const {
    for (const auto& [n, v] : headers)
        if (n == name)
            return v;
    return {};
}

HttpReceiver::HttpReceiver() : impl_(std::make_unique<Impl>()) {
    tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
    impl_->acceptor.open(ep.protocol());
    impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
    impl_->acceptor.bind(ep);
    impl_->acceptor.listen();
    port_ = impl_->acceptor.local_endpoint().port();
    impl_->accept();
    impl_->thread = std::thread([this] { impl_->io.run(); });
}

HttpReceiver::~HttpReceiver() {
    asio::post(impl_->io, [this] {
        std::error_code ignored;
        impl_->acceptor.close(ignored);
        std::lock_guard<std::mutex> lock(impl_->mutex);
        for (auto& weak : impl_->sockets)
            if (auto s = weak.lock())
                s->close(ignored);
    });
    impl_->thread.join();
}

std::string HttpReceiver::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

void HttpReceiver::script(std::vector<Reply> replies) {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    for (auto& r : replies)
        impl_->scripted.push_back(std::move(r));
}

void HttpReceiver::setDefaultReply(Reply reply) {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->defaultReply = std::move(reply);
}

bool HttpReceiver::waitForRequests(std::size_t n, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(impl_->mutex);
    return impl_->cv.wait_for(lock, timeout, [&] { return impl_->received.size() >= n; });
}

std::vector<HttpReceiver::Received> HttpReceiver::requests() const {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    return impl_->received;
}

std::size_t HttpReceiver::connectionsAccepted() const {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    return impl_->accepted;
}

} // namespace dhtgate::test
