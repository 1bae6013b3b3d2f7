#include "support/scripted_server.h"

#include <asio/post.hpp>
#include <asio/read.hpp>
#include <asio/ssl/stream.hpp>
#include <asio/write.hpp>

#include <deque>
#include <sstream>

namespace dhtgate::test {

class ScriptedServer::Session : public std::enable_shared_from_this<Session> {
public:
    Session(ScriptedServer& server, asio::ip::tcp::socket socket, int index)
        : server_(server), socket_(std::move(socket)), index_(index) {}

    void start() {
        if (!server_.tls_)
            return read();
        tls_ = std::make_unique<asio::ssl::stream<asio::ip::tcp::socket>>(std::move(socket_), *server_.tls_);
        auto self = shared_from_this();
        tls_->async_handshake(asio::ssl::stream_base::server, [this, self](std::error_code ec) {
            if (ec)
                return markClosed(); // e.g. the client rejected our certificate
            read();
        });
    }

    void send(std::string bytes, Reply::After after) {
        queue_.push_back({std::move(bytes), after});
        if (queue_.size() == 1)
            writeNext();
    }

    void markClosed() {
        {
            std::lock_guard<std::mutex> lock(server_.mutex_);
            server_.closed_[index_] = true;
        }
        server_.notify();
    }

    void close() {
        std::error_code ec;
        lowest().shutdown(asio::socket_base::shutdown_both, ec);
        lowest().close(ec);
    }

private:
    void read() {
        auto self = shared_from_this();
        auto handler = [this, self](std::error_code ec, std::size_t n) {
            if (ec)
                return markClosed();
            data_.append(buf_, n);
            if (!stalled_)
                handleRequests();
            read();
        };
        if (tls_)
            tls_->async_read_some(asio::buffer(buf_), std::move(handler));
        else
            socket_.async_read_some(asio::buffer(buf_), std::move(handler));
    }

    void handleRequests() {
        while (!stalled_) {
            auto end = data_.find("\r\n\r\n");
            if (end == std::string::npos)
                return;
            std::size_t length = 0;
            std::istringstream headers(data_.substr(0, end));
            std::string line;
            while (std::getline(headers, line)) {
                if (line.size() > 15 &&
                    (line.compare(0, 15, "Content-Length:") == 0 || line.compare(0, 15, "content-length:") == 0))
                    length = std::stoul(line.substr(15));
            }
            if (data_.size() < end + 4 + length)
                return;
            std::string request = data_.substr(0, end + 4 + length);
            data_.erase(0, end + 4 + length);
            {
                std::lock_guard<std::mutex> lock(server_.mutex_);
                server_.requestLog_.push_back(request);
            }
            ++server_.requests_;
            Reply reply = server_.responder_(request, index_, served_++);
            server_.notify();
            if (reply.after == Reply::After::stall)
                stalled_ = true;
            send(std::move(reply.bytes), reply.after);
            if (reply.after == Reply::After::close)
                return;
        }
    }

    void writeNext() {
        auto self = shared_from_this();
        auto handler = [this, self](std::error_code ec, std::size_t) {
            auto after = queue_.front().after;
            queue_.pop_front();
            if (ec)
                return;
            if (after == Reply::After::close) {
                close();
                return markClosed();
            }
            if (!queue_.empty())
                writeNext();
        };
        if (tls_)
            asio::async_write(*tls_, asio::buffer(queue_.front().bytes), std::move(handler));
        else
            asio::async_write(socket_, asio::buffer(queue_.front().bytes), std::move(handler));
    }

    asio::ip::tcp::socket& lowest() { return tls_ ? tls_->next_layer() : socket_; }

    struct Out {
        std::string bytes;
        Reply::After after;
    };
    ScriptedServer& server_;
    asio::ip::tcp::socket socket_;
    std::unique_ptr<asio::ssl::stream<asio::ip::tcp::socket>> tls_;
    int index_;
    int served_{0};
    bool stalled_{false};
    char buf_[16384];
    std::string data_;
    std::deque<Out> queue_;
};

ScriptedServer::ScriptedServer(Responder responder, bool ipv6)
    : acceptor_(io_), responder_(std::move(responder)), ipv6_(ipv6) {
    listen();
}

ScriptedServer::ScriptedServer(Responder responder, Tls tls)
    : acceptor_(io_), responder_(std::move(responder)), ipv6_(false) {
    tls_ = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
    tls_->use_certificate_chain(asio::buffer(tls.chainPem));
    tls_->use_private_key(asio::buffer(tls.keyPem), asio::ssl::context::pem);
    listen();
}

void ScriptedServer::listen() {
    asio::ip::tcp::endpoint ep(ipv6_ ? asio::ip::make_address("::1") : asio::ip::make_address("127.0.0.1"), 0);
    acceptor_.open(ep.protocol());
    acceptor_.set_option(asio::socket_base::reuse_address(true));
    acceptor_.bind(ep);
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    accept();
    thread_ = std::thread([this] { io_.run(); });
}

ScriptedServer::~ScriptedServer() {
    asio::post(io_, [this] {
        std::error_code ec;
        acceptor_.close(ec);
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto& s : sessions_)
            s->close();
    });
    thread_.join();
}

std::string ScriptedServer::url(const std::string& path) const {
    return std::string(tls_ ? "https://" : "http://") + (ipv6_ ? "[::1]" : "127.0.0.1") + ":" + std::to_string(port_) +
           path;
}

void ScriptedServer::accept() {
    acceptor_.async_accept([this](std::error_code ec, asio::ip::tcp::socket socket) {
        if (ec)
            return;
        std::shared_ptr<Session> session;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            session = std::make_shared<Session>(*this, std::move(socket), int(sessions_.size()));
            sessions_.push_back(session);
            closed_.push_back(false);
        }
        ++accepted_;
        notify();
        session->start();
        accept();
    });
}

void ScriptedServer::notify() {
    std::lock_guard<std::mutex> lock(mutex_);
    cv_.notify_all();
}

std::vector<std::string> ScriptedServer::requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requestLog_;
}

void ScriptedServer::send(int connection, std::string bytes) {
    asio::post(io_, [this, connection, bytes = std::move(bytes)]() mutable {
        std::lock_guard<std::mutex> lock(mutex_);
        if (connection < int(sessions_.size()))
            sessions_[connection]->send(std::move(bytes), Reply::After::stall);
    });
}

void ScriptedServer::close(int connection) {
    asio::post(io_, [this, connection] {
        std::lock_guard<std::mutex> lock(mutex_);
        if (connection < int(sessions_.size()))
            sessions_[connection]->close();
    });
}

bool ScriptedServer::waitForRequests(int n, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return requests_ >= n; });
}

bool ScriptedServer::waitForClose(int connection, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return connection < int(closed_.size()) && closed_[connection]; });
}

std::string ScriptedServer::ok(const std::string& body, const std::string& extraHeaders) {
    return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + extraHeaders +
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string ScriptedServer::chunk(const std::string& data) {
    std::ostringstream out;
    out << std::uppercase << std::hex << data.size() << "\r\n" << data << "\r\n";
    return out.str();
}

} // namespace dhtgate::test
