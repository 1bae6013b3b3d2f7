// Incremental HTTP/1.x response parser: a thin wrapper around http_parser (2.9).
#pragma once

#include "dhtgate/http_client.h"

#include <http_parser.h>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <system_error>

namespace dhtgate::http::detail {

/// Parses one response at a time from bytes fed in arbitrary pieces.
///
/// Bodies framed by Content-Length, chunked transfer coding or the end of the connection are
/// decoded and handed to `onBody` fragment by fragment; the parser itself keeps only the
/// status line and headers. Interim 1xx answers are skipped. Header names keep their case;
/// repeated headers are kept in order.
///
/// Errors: errc::protocol_error for malformed input, errc::response_too_large when the header
/// section or the body exceeds its limit, errc::cancelled when a callback asked to stop,
/// errc::connection_closed when the stream ends before the message does.
class ResponseParser {
public:
    /// Called once the header section is complete. Return false to stop parsing.
    std::function<bool()> onHeaders;
    /// Called with each decoded body fragment. Return false to stop parsing.
    std::function<bool(std::string_view)> onBody;

    ResponseParser();
    ResponseParser(const ResponseParser&) = delete;
    ResponseParser& operator=(const ResponseParser&) = delete;

    /// Prepares for a new response. `headRequest`: the response has no body whatever its headers say.
    void reset(bool headRequest = false);
    void setMaxHeaderSize(std::size_t bytes) { maxHeaderSize_ = bytes; }
    /// 0 = unlimited.
    void setMaxBodySize(std::size_t bytes) { maxBodySize_ = bytes; }

    /// Feeds bytes. Stops at the end of the message: `consumed` tells how many bytes were used
    /// (bytes after the message belong to no request). Returns the first error, sticky.
    std::error_code feed(const char* data, std::size_t size, std::size_t& consumed);
    std::error_code feed(std::string_view data) {
        std::size_t consumed = 0;
        return feed(data.data(), data.size(), consumed);
    }
    /// Signals that the peer closed the connection: completes a close-delimited body, else errors.
    std::error_code feedEof();

    bool headersComplete() const { return headersDone_; }
    bool complete() const { return complete_; }
    /// Whether the connection may carry another request after this complete response.
    bool keepAlive() const { return keepAlive_; }
    unsigned status() const { return status_; }
    const Headers& headers() const { return headers_; }
    Headers takeHeaders() { return std::move(headers_); }
    std::size_t bodySize() const { return bodySize_; }

private:
    static int onMessageBeginCb(http_parser*);
    static int onStatusCb(http_parser*, const char*, std::size_t);
    static int onHeaderFieldCb(http_parser*, const char*, std::size_t);
    static int onHeaderValueCb(http_parser*, const char*, std::size_t);
    static int onHeadersCompleteCb(http_parser*);
    static int onBodyCb(http_parser*, const char*, std::size_t);
    static int onMessageCompleteCb(http_parser*);
    bool countHeaderBytes(std::size_t n);

    http_parser parser_ {};
    http_parser_settings settings_ {};
    Headers headers_;
    bool lastWasValue_ {true};
    bool headRequest_ {false};
    bool headersDone_ {false};
    bool complete_ {false};
    bool keepAlive_ {false};
    bool interim_ {false};
    unsigned status_ {0};
    std::size_t headerBytes_ {0};
    std::size_t bodySize_ {0};
    std::size_t maxHeaderSize_ {64 * 1024};
    std::size_t maxBodySize_ {0};
    std::error_code error_;
};

} // namespace dhtgate::http::detail
