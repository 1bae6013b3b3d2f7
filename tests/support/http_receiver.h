// Test helper: a real, scriptable HTTP/1.1 server on 127.0.0.1 (port 0), standing in for a push
// gateway (gorush's POST /api/push) or a UnifiedPush endpoint. It runs on its own thread,
// records every request, answers with scripted replies, and keeps connections alive unless
// the client asks otherwise, so tests can check connection reuse.
//
// Thread contract: every public function may be called from the test thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace dhtgate::test {

class HttpReceiver {
public:
    struct Received {
        std::string method;
        std::string target;
        std::vector<std::pair<std::string, std::string>> headers; ///< names lower-cased
        std::string body;
        std::size_t connection {0}; ///< index of the connection it came on (0-based, accept order)

        /// Value of header `name` (lower-case), or "" if absent.
        std::string header(const std::string& name) const;
    };
    struct Reply {
        unsigned status {200};
        std::string body {"{}"};
        std::vector<std::pair<std::string, std::string>> headers;
        bool close {false}; ///< close the connection after answering
    };

    HttpReceiver();
    ~HttpReceiver();
    HttpReceiver(const HttpReceiver&) = delete;
    HttpReceiver& operator=(const HttpReceiver&) = delete;

    std::uint16_t port() const { return port_; }
    /// "http://127.0.0.1:<port>"
    std::string url() const;

    /// Replies for the next requests, in order; after them, the default reply.
    void script(std::vector<Reply> replies);
    void setDefaultReply(Reply reply);

    /// Waits until at least `n` requests were received; false on timeout.
    bool waitForRequests(std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(10));
    std::vector<Received> requests() const;
    std::size_t connectionsAccepted() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::uint16_t port_ {0};
};

} // namespace dhtgate::test
