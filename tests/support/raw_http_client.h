// Test helper: a blocking HTTP/1.1 client on a raw TCP socket, with a timeout on every wait.
// It sends arbitrary bytes (malformed, pipelined, half-sent requests), reads responses with
// chunked decoding, and reads stream bodies line by line (listen streams).
//
//   RawHttpClient c(port);
//   c.send(RawHttpClient::request("GET", "/"));
//   auto r = c.readResponse();          // nullopt on timeout / close before a full response
//   CPPUNIT_ASSERT_EQUAL(200, r->status);
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace dhtgate::test {

class RawHttpClient {
public:
    struct Response {
        int status {0};
        std::string version;                        ///< e.g. "HTTP/1.1"
        std::map<std::string, std::string> headers; ///< names lower-cased
        std::string body;                           ///< decoded (de-chunked)
        bool chunked {false};
        std::string header(const std::string& lowerName) const {
            auto it = headers.find(lowerName);
            return it == headers.end() ? std::string() : it->second;
        }
    };

    /// Connects to host:port (throws std::runtime_error if it cannot).
    explicit RawHttpClient(std::uint16_t port, std::chrono::milliseconds timeout = std::chrono::seconds(5),
                           const std::string& host = "127.0.0.1");
    ~RawHttpClient();
    RawHttpClient(const RawHttpClient&) = delete;
    RawHttpClient& operator=(const RawHttpClient&) = delete;

    void setTimeout(std::chrono::milliseconds t) { timeout_ = t; }

    /// Sends all bytes; false if the peer is gone.
    bool send(std::string_view bytes);
    /// Half-closes (no more bytes from us).
    void shutdownWrite();
    void close();

    /// Reads one complete response (Content-Length, chunked, or until close).
    std::optional<Response> readResponse();
    /// Reads the status line and headers only; the body is then read with readLine()/readBody().
    std::optional<Response> readHeaders();
    /// Next '\n'-terminated line of a chunked body started by readHeaders() (the '\n' stripped).
    /// nullopt on timeout, close, or the final chunk (then streamEnded() is true).
    std::optional<std::string> readLine();
    bool streamEnded() const { return ended_; }
    /// The rest of a body started by readHeaders() (chunked, Content-Length or until close).
    std::optional<std::string> readBody(const Response& headers);

    /// True once the peer has closed the connection (data received meanwhile is discarded).
    bool waitClosed();
    /// True if nothing at all arrives within `t` (used only to check that no answer is sent).
    bool silentFor(std::chrono::milliseconds t);

    /// Builds a request: "METHOD path HTTP/1.1", Host, Content-Length (when body or forced),
    /// then `extraHeaders` (each "Name: value\r\n").
    static std::string request(std::string_view method, std::string_view path, std::string_view body = {},
                               std::string_view extraHeaders = {});
    /// One request on a fresh connection.
    static std::optional<Response> exchange(std::uint16_t port, const std::string& bytes,
                                            std::chrono::milliseconds timeout = std::chrono::seconds(5));

private:
    bool fill();                    ///< waits for more bytes; false on timeout/EOF/error
    bool readExact(std::size_t n);  ///< until in_ holds n bytes
    bool readUntil(std::string_view delim, std::size_t& pos);
    bool readChunk(std::string& out, bool& last);

    int fd_ {-1};
    std::chrono::milliseconds timeout_;
    std::string in_;      ///< received, not yet consumed
    std::string lineBuf_; ///< decoded body bytes not yet returned by readLine
    bool eof_ {false};
    bool ended_ {false};
};

} // namespace dhtgate::test
