// A tiny HTTP server for client tests: real sockets on loopback, port 0, scripted byte-exact replies.
//
// Each accepted connection reads requests (header section + Content-Length body); for each one
// the responder decides the exact bytes to send and what happens next: keep reading, close the
// connection, or stall (send nothing more, keep the socket open). Tests can also push bytes into
// or close a live connection later (for streams). Runs on its own io thread.
#pragma once

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ssl/context.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dhtgate::test {

struct Reply {
    enum class After { keepReading, close, stall };
    std::string bytes;
    After after{After::keepReading};
};

class ScriptedServer {
public:
    /// `request`: the raw request (headers and body); `connection`: 0-based index of the TCP
    /// connection; `index`: 0-based index of the request on that connection.
    using Responder = std::function<Reply(const std::string& request, int connection, int index)>;

    /// TLS server identity in PEM (empty: plain HTTP).
    struct Tls {
        std::string chainPem;
        std::string keyPem;
    };

    explicit ScriptedServer(Responder responder, bool ipv6 = false);
    ScriptedServer(Responder responder, Tls tls);
    ~ScriptedServer();

    std::uint16_t port() const { return port_; }
    std::string url(const std::string& path = "/") const;
    int acceptedConnections() const { return accepted_; }
    int requestCount() const { return requests_; }
    std::vector<std::string> requests() const;

    /// Sends bytes on connection `connection` (thread-safe, posted to the server thread).
    void send(int connection, std::string bytes);
    /// Closes connection `connection`.
    void close(int connection);
    /// Waits until `requestCount() >= n` or the timeout expires; returns whether it was reached.
    bool waitForRequests(int n, std::chrono::milliseconds timeout);
    /// Waits until connection `connection` is closed (by the peer, or by the script).
    bool waitForClose(int connection, std::chrono::milliseconds timeout);

    /// Helpers for common replies.
    static std::string ok(const std::string& body, const std::string& extraHeaders = "");
    static std::string chunk(const std::string& data);

private:
    class Session;
    void accept();
    void notify();

    void listen();

    asio::io_context io_;
    std::unique_ptr<asio::ssl::context> tls_;
    asio::ip::tcp::acceptor acceptor_;
    Responder responder_;
    std::uint16_t port_{0};
    bool ipv6_;
    std::atomic<int> accepted_{0};
    std::atomic<int> requests_{0};
    mutable std::mutex mutex_; // guards requestLog_, sessions_, closed_
    std::condition_variable cv_;
    std::vector<std::string> requestLog_;
    std::vector<std::shared_ptr<Session>> sessions_;
    std::vector<bool> closed_;
    std::thread thread_;
};

} // namespace dhtgate::test
