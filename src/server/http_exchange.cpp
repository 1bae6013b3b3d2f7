#include "server/http_exchange.h"

#include "server/raw_stream.h"
#include "server/server_traits.h"

#include <optional>

namespace dhtgate::server {
namespace {

const char* reasonPhrase(int status) {
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return status < 400 ? "OK" : "Error";
    }
}

restinio::http_status_line_t statusLine(int status) {
    return restinio::http_status_line_t {restinio::http_status_code_t {static_cast<std::uint16_t>(status)},
                                         reasonPhrase(status)};
}

template <typename Builder>
Builder& commonHeaders(Builder& b) {
    b.append_header(restinio::http_field::server, "dhtgate");
    b.append_header(restinio::http_field::content_type, "application/json");
    b.append_header(restinio::http_field::access_control_allow_origin, "*");
    return b;
}

void appendJsonEscaped(std::string& out, std::string_view text) {
    for (unsigned char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20 || c >= 0x7f) {
            static const char hex[] = "0123456789abcdef";
            out += "\\u00";
            out += hex[c >> 4];
            out += hex[c & 0xf];
        } else
            out += static_cast<char>(c);
    }
}

} // namespace

struct Request::Impl {
    restinio::request_handle_t req;
    std::uint64_t connectionIdBase {0}; ///< keeps HTTPS connection ids apart from plain ones
};

std::shared_ptr<Request::Impl> makeRequestImpl(restinio::request_handle_t req, std::uint64_t connectionIdBase) {
    return std::make_shared<Request::Impl>(Request::Impl {std::move(req), connectionIdBase});
}

Method Request::method() const {
    const auto m = impl_->req->header().method();
    if (m == restinio::http_method_get()) return Method::get;
    if (m == restinio::http_method_post()) return Method::post;
    if (m == restinio::http_method_options()) return Method::options;
    if (m == restinio::http_method_subscribe()) return Method::subscribe;
    if (m == restinio::http_method_unsubscribe()) return Method::unsubscribe;
    return Method::other;
}

std::string_view Request::methodName() const {
    const char* name = impl_->req->header().method().c_str();
    return name ? name : "?";
}

std::string_view Request::path() const {
    const auto p = impl_->req->header().path();
    return {p.data(), p.size()};
}

const std::string& Request::body() const { return impl_->req->body(); }

std::uint64_t Request::connectionId() const { return impl_->req->connection_id() | impl_->connectionIdBase; }

const std::string& Request::remoteAddress() const {
    // Formatting an address costs more than the rest of a GET / answer's body: keep the last one
    // (clients mostly come back on the same or a few addresses).
    thread_local asio::ip::address last;
    thread_local std::string text = last.to_string();
    const auto address = impl_->req->remote_endpoint().address();
    if (address != last) {
        text = address.to_string();
        last = address;
    }
    return text;
}

bool Request::http10() const {
    // Marked by GuardedSocket: RESTinio 0.6 does not keep the request's HTTP version.
    return impl_->req->header().has_field(std::string(GuardedSocket::kHttp10Header));
}

void Request::reply(int status, std::string body) const {
    auto r = impl_->req->create_response(statusLine(status));
    commonHeaders(r).set_body(std::move(body));
    r.done();
}

void Request::replyError(int status, std::string_view reason) const {
    std::string body = "{\"err\":\"";
    appendJsonEscaped(body, reason);
    body += "\"}";
    reply(status, std::move(body));
}

void Request::replyNotAllowed(std::string_view allow) const {
    auto r = impl_->req->create_response(statusLine(405));
    commonHeaders(r).append_header(restinio::http_field::allow, std::string(allow));
    r.set_body("{\"err\":\"Method not allowed\"}");
    r.done();
}

void Request::replyOptions() const {
    auto r = impl_->req->create_response(statusLine(200));
    commonHeaders(r)
        .append_header(restinio::http_field::access_control_allow_methods, "OPTIONS, GET, POST, SUBSCRIBE, UNSUBSCRIBE")
        .append_header(restinio::http_field::access_control_allow_headers, "content-type")
        .append_header(restinio::http_field::access_control_max_age, "86400");
    r.done();
}

// --- Stream -------------------------------------------------------------------------------------

struct Stream::Impl {
    std::shared_ptr<RawStream> raw; // a listen taken from RESTinio (startListenStream)
    std::optional<restinio::response_builder_t<restinio::chunked_output_t>> chunked;
    // HTTP/1.0: no chunked encoding, the body is buffered and sent by end().
    restinio::request_handle_t http10Request;
    std::string http10Body;
    bool ended {false};
};

Stream Request::startStream() const {
    auto s = std::make_unique<Stream::Impl>();
    if (http10()) {
        s->http10Request = impl_->req;
    } else {
        s->chunked.emplace(impl_->req->create_response<restinio::chunked_output_t>(statusLine(200)));
        commonHeaders(*s->chunked);
        s->chunked->flush();
    }
    return Stream(std::move(s));
}

Stream Request::startListenStream(std::function<void()> onClosed) const {
    using Connection = restinio::impl::connection_t<SingleThreadTraits>;
    static const std::string token(GuardedSocket::kListenUpgrade);
    if (http10() || impl_->req->header().get_field_or(restinio::http_field::upgrade, std::string()) != token)
        return startStream();
    auto& connection = restinio::impl::access_req_connection(*impl_->req);
    auto* concrete = dynamic_cast<Connection*>(connection.get());
    if (!concrete)
        return startStream(); // a thread pool or TLS connection: RESTinio keeps it
    // RESTinio's upgrade hand-off (as its websocket upgrade does): the socket moves out, and the
    // connection object is released once its current read handler returns.
    using Internals = decltype(concrete->move_upgrade_internals());
    auto internals = std::make_shared<Internals>(concrete->move_upgrade_internals());
    connection.reset();
    auto& socket = internals->m_socket;
    auto raw = std::make_shared<RawStream>(socket, std::move(internals), std::move(onClosed));
    static const auto header = std::make_shared<const std::string>(
        "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nServer: dhtgate\r\nContent-Type: application/json\r\n"
        "Access-Control-Allow-Origin: *\r\nTransfer-Encoding: chunked\r\n\r\n");
    raw->start(header);
    auto s = std::make_unique<Stream::Impl>();
    s->raw = std::move(raw);
    return Stream(std::move(s));
}

Stream::Stream() = default;
Stream::Stream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Stream::Stream(Stream&&) noexcept = default;
Stream& Stream::operator=(Stream&& o) noexcept {
    if (this != &o) {
        end();
        impl_ = std::move(o.impl_);
    }
    return *this;
}
Stream::~Stream() { end(); }

void Stream::send(std::shared_ptr<const std::string> chunk, const std::shared_ptr<const std::string>& framed) {
    if (!impl_ || impl_->ended || !chunk || chunk->empty())
        return;
    if (impl_->raw)
        impl_->raw->send(framed ? framed : RawStream::frame(*chunk));
    else if (impl_->chunked)
        impl_->chunked->append_chunk(restinio::writable_item_t(std::move(chunk))).flush();
    else
        impl_->http10Body += *chunk;
}

void Stream::send(std::string chunk) {
    if (!impl_ || impl_->ended || chunk.empty())
        return;
    if (impl_->raw)
        impl_->raw->send(RawStream::frame(chunk));
    else if (impl_->chunked)
        impl_->chunked->append_chunk(std::move(chunk)).flush();
    else
        impl_->http10Body += chunk;
}

void Stream::end(std::function<void()> written) {
    if (!impl_ || impl_->ended) {
        if (written)
            written();
        return;
    }
    impl_->ended = true;
    try {
        if (impl_->raw) {
            impl_->raw->end(std::move(written));
        } else if (impl_->chunked) {
            if (written)
                impl_->chunked->done([written = std::move(written)](const auto&) { written(); });
            else
                impl_->chunked->done();
        } else {
            Request(std::make_shared<Request::Impl>(Request::Impl {impl_->http10Request}))
                .reply(200, std::move(impl_->http10Body));
            if (written)
                written();
        }
    } catch (const std::exception&) {
        // The connection is gone: nothing left to end.
        if (written)
            written();
    }
}

std::size_t splitPath(std::string_view path, std::string_view* out, std::size_t max) {
    std::size_t n = 0;
    std::size_t pos = path.empty() || path[0] != '/' ? 0 : 1;
    while (pos < path.size()) {
        auto next = path.find('/', pos);
        if (next == std::string_view::npos)
            next = path.size();
        if (n == max)
            return max + 1; // too many segments: no route has that many
        out[n++] = path.substr(pos, next - pos);
        pos = next + 1;
    }
    return n;
}

} // namespace dhtgate::server
