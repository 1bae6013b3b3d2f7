#include "client/response_parser.h"

#include "dhtgate/error.h"

namespace dhtgate::http::detail {
namespace {
ResponseParser& self(http_parser* p) { return *static_cast<ResponseParser*>(p->data); }
} // namespace

ResponseParser::ResponseParser() {
    http_parser_settings_init(&settings_);
    settings_.on_message_begin = &onMessageBeginCb;
    settings_.on_status = &onStatusCb;
    settings_.on_header_field = &onHeaderFieldCb;
    settings_.on_header_value = &onHeaderValueCb;
    settings_.on_headers_complete = &onHeadersCompleteCb;
    settings_.on_body = &onBodyCb;
    settings_.on_message_complete = &onMessageCompleteCb;
    reset();
}

void ResponseParser::reset(bool headRequest) {
    http_parser_init(&parser_, HTTP_RESPONSE);
    parser_.data = this;
    headers_.clear();
    lastWasValue_ = true;
    headRequest_ = headRequest;
    headersDone_ = complete_ = keepAlive_ = interim_ = false;
    status_ = 0;
    headerBytes_ = bodySize_ = 0;
    error_.clear();
}

bool ResponseParser::countHeaderBytes(std::size_t n) {
    headerBytes_ += n;
    if (headerBytes_ > maxHeaderSize_) {
        error_ = make_error_code(errc::response_too_large);
        return false;
    }
    return true;
}

int ResponseParser::onMessageBeginCb(http_parser* p) {
    auto& s = self(p);
    s.headers_.clear();
    s.lastWasValue_ = true;
    s.interim_ = false;
    return 0;
}

int ResponseParser::onStatusCb(http_parser* p, const char*, std::size_t n) {
    return self(p).countHeaderBytes(n) ? 0 : 1;
}

int ResponseParser::onHeaderFieldCb(http_parser* p, const char* at, std::size_t n) {
    auto& s = self(p);
    if (!s.countHeaderBytes(n))
        return 1;
    if (s.lastWasValue_)
        s.headers_.emplace_back();
    s.headers_.back().first.append(at, n);
    s.lastWasValue_ = false;
    return 0;
}

int ResponseParser::onHeaderValueCb(http_parser* p, const char* at, std::size_t n) {
    auto& s = self(p);
    if (!s.countHeaderBytes(n))
        return 1;
    if (s.headers_.empty())
        s.headers_.emplace_back();
    s.headers_.back().second.append(at, n);
    s.lastWasValue_ = true;
    return 0;
}

int ResponseParser::onHeadersCompleteCb(http_parser* p) {
    auto& s = self(p);
    s.status_ = p->status_code;
    if (s.status_ >= 100 && s.status_ < 200 && s.status_ != 101) {
        // An interim answer (100 Continue, 103 Early Hints): the real one follows.
        s.interim_ = true;
        return 0;
    }
    s.headersDone_ = true;
    if (s.onHeaders && !s.onHeaders()) {
        s.error_ = make_error_code(errc::cancelled);
        return -1;
    }
    // 1 = "this response has no body" (http_parser's convention for HEAD).
    return s.headRequest_ ? 1 : 0;
}

int ResponseParser::onBodyCb(http_parser* p, const char* at, std::size_t n) {
    auto& s = self(p);
    s.bodySize_ += n;
    if (s.maxBodySize_ && s.bodySize_ > s.maxBodySize_) {
        s.error_ = make_error_code(errc::response_too_large);
        return 1;
    }
    if (s.onBody && !s.onBody(std::string_view(at, n))) {
        s.error_ = make_error_code(errc::cancelled);
        return 1;
    }
    return 0;
}

int ResponseParser::onMessageCompleteCb(http_parser* p) {
    auto& s = self(p);
    if (s.interim_) {
        s.interim_ = false;
        s.headerBytes_ = 0;
        return 0;
    }
    s.complete_ = true;
    s.keepAlive_ = http_should_keep_alive(p) != 0;
    // Stop here: any byte after this message is not part of this response.
    http_parser_pause(p, 1);
    return 0;
}

std::error_code ResponseParser::feed(const char* data, std::size_t size, std::size_t& consumed) {
    consumed = 0;
    if (error_ || complete_)
        return error_;
    consumed = http_parser_execute(&parser_, &settings_, data, size);
    const auto err = HTTP_PARSER_ERRNO(&parser_);
    if (err == HPE_OK || (err == HPE_PAUSED && complete_))
        return {};
    if (!error_)
        error_ = make_error_code(errc::protocol_error);
    return error_;
}

std::error_code ResponseParser::feedEof() {
    if (error_ || complete_)
        return error_;
    // A zero-length execute tells http_parser the stream ended (completes EOF-framed bodies).
    http_parser_execute(&parser_, &settings_, nullptr, 0);
    if (complete_) {
        keepAlive_ = false;
        return {};
    }
    if (!error_)
        error_ = make_error_code(errc::connection_closed);
    return error_;
}

} // namespace dhtgate::http::detail
