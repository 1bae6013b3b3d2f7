// One HTTP request and its answer, without RESTinio in the interface: handlers and the router
// include this header only, which keeps RESTinio's heavy headers in two translation units
// (http_exchange.cpp and proxy_server.cpp).
//
// Thread contract: a Request/Stream may be used from any single thread at a time; answers are
// handed to RESTinio, which writes them on the connection's own executor. The server only uses
// them on its state executor.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace dhtgate::server {

enum class Method { get, post, options, subscribe, unsubscribe, other };

/// Common answer headers (spec §1.2) are added by every reply function.
class Stream;

class Request {
public:
    struct Impl;
    explicit Request(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

    Method method() const;
    std::string_view methodName() const;
    /// The path without query string.
    std::string_view path() const;
    const std::string& body() const;
    std::uint64_t connectionId() const;
    /// The peer address without port (IPv4 peers of a dual-stack socket as ::ffff:a.b.c.d).
    /// The reference stays valid until the next call on this thread.
    const std::string& remoteAddress() const;
    bool http10() const;

    /// 200-style answer with Content-Length; `body` is sent as is (success bodies end with '\n').
    void reply(int status, std::string body) const;
    /// {"err":"<reason>"} without a trailing newline.
    void replyError(int status, std::string_view reason) const;
    /// 405 with an Allow header.
    void replyNotAllowed(std::string_view allow) const;
    /// 200, empty body, CORS preflight headers (spec §3.7, methods per §15.12).
    void replyOptions() const;
    /// Starts a chunked 200 answer; its headers are flushed at once.
    Stream startStream() const;
    /// startStream() for a listen: when the request guard marked it (single io thread, plain
    /// HTTP), the connection is taken from RESTinio and the stream written directly (RawStream);
    /// `onClosed` then runs once when the client goes away. Otherwise the same as startStream(),
    /// and `onClosed` is dropped (RESTinio's connection-state listener reports the close).
    Stream startListenStream(std::function<void()> onClosed) const;

private:
    std::shared_ptr<Impl> impl_;
};

/// A chunked answer. For HTTP/1.0 requests the body is buffered and sent with Content-Length by
/// end(). Destroying an un-ended Stream ends it.
class Stream {
public:
    struct Impl;
    Stream();
    explicit Stream(std::unique_ptr<Impl> impl);
    Stream(Stream&&) noexcept;
    Stream& operator=(Stream&&) noexcept;
    ~Stream();

    explicit operator bool() const { return impl_ != nullptr; }
    /// One chunk (shared buffers let one serialised value go to many streams). `framed`, if
    /// given, is the same chunk with its chunked-encoding framing, used by direct streams.
    void send(std::shared_ptr<const std::string> chunk, const std::shared_ptr<const std::string>& framed = nullptr);
    void send(std::string chunk);
    /// Sends the final chunk; `written` (optional) runs once the final chunk is written or failed.
    void end(std::function<void()> written = {});

private:
    std::unique_ptr<Impl> impl_;
};

/// Splits a path into its segments, ignoring one trailing slash ("/key/h/" = "/key/h").
std::size_t splitPath(std::string_view path, std::string_view* out, std::size_t max);

} // namespace dhtgate::server
