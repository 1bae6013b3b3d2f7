#include "server/guarded_socket.h"

#include <asio/bind_executor.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <http_parser.h>

#include <climits>
#include <cstring>
#include <string_view>
#include <map>
#include <mutex>
#include <string>

namespace dhtgate::server {
namespace {

std::mutex limitsMutex; // guards limitsByIo (read when RESTinio creates a socket)
std::map<const asio::io_context*, RequestLimits> limitsByIo;

RequestLimits limitsFor(asio::io_context& io) {
    std::lock_guard<std::mutex> lock(limitsMutex);
    auto it = limitsByIo.find(&io);
    return it == limitsByIo.end() ? RequestLimits {} : it->second;
}

} // namespace

void GuardedSocket::setLimits(asio::io_context& io, RequestLimits limits) {
    std::lock_guard<std::mutex> lock(limitsMutex);
    limitsByIo[&io] = limits;
}

void GuardedSocket::clearLimits(asio::io_context& io) {
    std::lock_guard<std::mutex> lock(limitsMutex);
    limitsByIo.erase(&io);
}

class GuardedSocket::Impl : public std::enable_shared_from_this<Impl> {
public:
    using Done = std::function<void(std::error_code, std::size_t)>;

    Impl(asio::io_context& io, RequestLimits limits)
        : io_(io), socket_(io), executor_(io.get_executor()), limits_(limits) {
        http_parser_init(&parser_, HTTP_REQUEST);
        parser_.data = this;
        http_parser_settings_init(&settings_);
        settings_.on_message_begin = [](http_parser* p) { return self(p).onMessageBegin(); };
        settings_.on_headers_complete = [](http_parser* p) { return self(p).onHeadersComplete(); };
        // A field name split across reads comes in several calls: count a field on its first one.
        settings_.on_header_field = [](http_parser* p, const char*, std::size_t) {
            auto& s = self(p);
            if (!s.inFieldName_)
                ++s.fieldCount_;
            s.inFieldName_ = true;
            return 0;
        };
        settings_.on_header_value = [](http_parser* p, const char*, std::size_t) {
            self(p).inFieldName_ = false;
            return 0;
        };
    }

    asio::io_context& io() { return io_; }
    asio::ip::tcp::socket& socket() { return socket_; }
    bool isOpen() const { return !closedByOwner_ && socket_.is_open(); }

    void read(const asio::any_io_executor& ex, asio::mutable_buffer buffer, Done done) {
        // The connection's executor (a strand in pool mode): our completions run there. On one
        // io thread it is the socket's own executor, and completions need no re-dispatch.
        if (!(ex == executor_)) {
            executor_ = ex;
            ownExecutor_ = ex == socket_.get_executor();
        }
        pending_ = std::move(done);
        pendingBuffer_ = buffer;
        deliverIfPending(false);
        maybeRead(); // in draining mode the pending read is held until close
    }

    /// A response starts (RESTinio writes each response from its status line).
    void onWrite(const void* data, std::size_t size) {
        static constexpr std::string_view status = "HTTP/1.";
        if (size < status.size() || std::memcmp(data, status.data(), status.size()) != 0)
            return;
        ++responsesStarted_;
        if (blocked_ && messages_ - responsesStarted_ <= limits_.max_pipelined) {
            blocked_ = false;
            feed();
            deliverIfPending(false);
            maybeRead();
        }
    }

    void cancel(std::error_code& ec) {
        socket_.cancel(ec);
        if (mode_ == Mode::draining)
            abortPending();
    }

    void shutdown(asio::socket_base::shutdown_type what, std::error_code& ec) {
        // Keep reading what the client still sends, so closing does not reset the connection
        // before it has read the rejection.
        socket_.shutdown(mode_ == Mode::draining ? asio::socket_base::shutdown_send : what, ec);
    }

    void close(std::error_code& ec) {
        closedByOwner_ = true;
        abortPending();
        if (mode_ == Mode::draining && socket_.is_open()) {
            // Linger: wait for the client's EOF (or 2 s), then close.
            linger_ = std::make_unique<asio::steady_timer>(io_, std::chrono::seconds(2));
            linger_->async_wait(asio::bind_executor(executor_, [self = shared_from_this()](const std::error_code&) {
                std::error_code ignored;
                self->socket_.close(ignored);
            }));
            maybeRead();
            return;
        }
        socket_.close(ec);
    }

    void ownerGone() {
        if (!linger_) {
            std::error_code ignored;
            socket_.close(ignored);
        }
    }

private:
    enum class Mode { scanning, passthrough, draining };
    enum class Event { none, messageBegin, headersComplete };
    static constexpr std::size_t kMaxBuffered = 256 * 1024; ///< stop reading while blocked beyond this

    static Impl& self(http_parser* p) { return *static_cast<Impl*>(p->data); }

    // Both callbacks pause the parser so feed() learns the exact offsets of the message start and
    // of the header section end (http_parser resumes correctly after a pause).
    int onMessageBegin() {
        inHeaders_ = true;
        fieldCount_ = 0;
        inFieldName_ = false;
        event_ = Event::messageBegin;
        http_parser_pause(&parser_, 1);
        return 0;
    }

    int onHeadersComplete() {
        inHeaders_ = false;
        event_ = Event::headersComplete;
        http_parser_pause(&parser_, 1);
        return 0;
    }

    // The input being parsed: RESTinio's own read buffer (view_, read in place: the common case,
    // no copy), or input_ when bytes were held back from an earlier read.
    const char* inData() const { return view_ ? view_ : input_.data(); }
    std::size_t inSize() const { return view_ ? viewSize_ : input_.size(); }
    void materialize() {
        if (view_) {
            input_.assign(view_, viewSize_);
            view_ = nullptr;
            viewSize_ = 0;
        }
    }

    /// Parses what has not been parsed yet, then releases what RESTinio may see: in place (the
    /// start of its buffer, `inPlace_` bytes) or appended to ready_.
    void feed() {
        while (mode_ == Mode::scanning && !blocked_ && fed_ < inSize()) {
            if (bodyLeft_ > 0) { // a Content-Length body the fast scanner found: pass it on
                const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(bodyLeft_, inSize() - fed_));
                fed_ += n;
                bodyLeft_ -= n;
                continue;
            }
            if (!useParser_) {
                const auto r = scanHeaderSection();
                if (r == Scan::rejected || r == Scan::blocked)
                    break;
                if (r == Scan::fallback) {
                    useParser_ = true;
                    parserOwnsMessage_ = false;
                    http_parser_init(&parser_, HTTP_REQUEST);
                    parser_.data = this;
                }
                continue;
            }
            event_ = Event::none;
            const auto parsed = http_parser_execute(&parser_, &settings_, inData() + fed_, inSize() - fed_);
            const auto err = HTTP_PARSER_ERRNO(&parser_);
            if (err != HPE_PAUSED) {
                fed_ += parsed;
                if (err != HPE_OK || parser_.upgrade)
                    mode_ = Mode::passthrough; // malformed (RESTinio will close) or a protocol switch
                break;
            }
            http_parser_pause(&parser_, 0);
            if (event_ == Event::messageBegin) {
                msgStart_ = fed_ + parsed - 1; // the method's first byte was consumed
                if (parserOwnsMessage_) {
                    // The message the parser took over is complete: the next one goes back to the
                    // fast scanner, from its first byte.
                    inHeaders_ = false;
                    useParser_ = false;
                    fed_ = msgStart_;
                    continue;
                }
                parserOwnsMessage_ = true;
                fed_ += parsed;
                // Back-pressure: RESTinio sees at most max_pipelined requests whose answer has
                // not started (its own table gets headroom, see proxy_server.cpp).
                if (++messages_ - responsesStarted_ > limits_.max_pipelined)
                    blocked_ = true;
            } else {
                // Paused on the LF that ends the header section (parsing resumes from it).
                const auto headerBytes = fed_ + parsed + 1 - msgStart_;
                if (headerBytes > limits_.max_header_size || fieldCount_ > limits_.max_header_count)
                    return reject(431);
                if (parser_.content_length != ULLONG_MAX && parser_.content_length > limits_.max_body_size)
                    return reject(413);
                fed_ += parsed;
                if (parser_.http_major == 1 && parser_.http_minor == 0) {
                    const auto at = fed_ > 0 && inData()[fed_ - 1] == '\r' ? fed_ - 1 : fed_;
                    markHttp10(at);
                }
            }
        }
        std::size_t releasable = fed_;
        if (mode_ == Mode::passthrough) {
            releasable = inSize();
        } else if (blocked_ || inHeaders_) {
            if (!blocked_ && inSize() - msgStart_ > limits_.max_header_size)
                return reject(431);
            releasable = msgStart_; // hold back the unfinished (or not yet allowed) request
        }
        if (view_) {
            inPlace_ = releasable;
            input_.assign(view_ + releasable, viewSize_ - releasable);
            view_ = nullptr;
            viewSize_ = 0;
        } else {
            ready_.append(input_, 0, releasable);
            input_.erase(0, releasable);
        }
        fed_ -= std::min(fed_, releasable);
        msgStart_ -= std::min(msgStart_, releasable);
    }

    enum class Scan { consumed, fallback, blocked, rejected };

    /// The fast path for the common request: a whole header section in the input, CRLF line ends,
    /// no Transfer-Encoding/Upgrade/CONNECT, at most one valid Content-Length. Checks the limits and
    /// the pipelining budget without a full HTTP parse (RESTinio parses the request anyway);
    /// anything else (an unfinished or unusual header section) goes to http_parser (`fallback`).
    Scan scanHeaderSection() {
        const char* d = inData();
        const std::size_t start = fed_;
        const std::size_t size = inSize();
        if (d[start] == '\r' || d[start] == '\n' || (size - start >= 8 && std::memcmp(d + start, "CONNECT ", 8) == 0))
            return Scan::fallback;
        // One walk over the lines (memchr): the request line, the fields, then the empty line
        // that ends the section. No empty line yet: unfinished, the parser holds it back.
        const char* const limit = d + size;
        const char* lineEnd = static_cast<const char*>(std::memchr(d + start, '\n', size - start));
        if (!lineEnd)
            return Scan::fallback;
        const std::string_view requestLine(d + start, lineEnd - (d + start));
        bool http10 = false;
        if (requestLine.size() > 10 && requestLine.compare(requestLine.size() - 10, 10, " HTTP/1.0\r") == 0)
            http10 = true;
        else if (requestLine.size() <= 10 || requestLine.compare(requestLine.size() - 10, 10, " HTTP/1.1\r") != 0)
            return Scan::fallback;
        std::size_t fields = 0;
        std::uint64_t contentLength = 0;
        bool haveLength = false;
        std::size_t end = 0; // past the empty line
        for (const char* line = lineEnd + 1; line < limit;) {
            const char* next = static_cast<const char*>(std::memchr(line, '\n', limit - line));
            if (!next)
                break;
            const std::string_view field(line, next - line); // ends with '\r'
            line = next + 1;
            if (field.size() == 1 && field[0] == '\r') {
                end = static_cast<std::size_t>(line - d);
                break;
            }
            ++fields;
            if (field.size() < 2 || field.back() != '\r' || field[0] == ' ' || field[0] == '\t')
                return Scan::fallback; // bare LF or folded line: let the parser judge
            const auto colon = field.find(':');
            if (colon == std::string_view::npos)
                return Scan::fallback;
            const auto name = field.substr(0, colon);
            if (equalsLower(name, "content-length")) {
                if (haveLength || !parseLength(field.substr(colon + 1, field.size() - colon - 2), contentLength))
                    return Scan::fallback;
                haveLength = true;
            } else if (equalsLower(name, "transfer-encoding") || equalsLower(name, "upgrade")) {
                return Scan::fallback;
            }
        }
        if (end == 0)
            return Scan::fallback; // unfinished: the parser holds it back and checks its size
        msgStart_ = start;
        if (end - start > limits_.max_header_size) {
            reject(431);
            return Scan::rejected;
        }
        if (fields > limits_.max_header_count) {
            reject(431);
            return Scan::rejected;
        }
        if (contentLength > limits_.max_body_size) {
            reject(413);
            return Scan::rejected;
        }
        if (!counted_) {
            counted_ = true;
            // Back-pressure, as in the parser path.
            if (++messages_ - responsesStarted_ > limits_.max_pipelined) {
                blocked_ = true;
                return Scan::blocked;
            }
        }
        counted_ = false;
        fed_ = end;
        if (http10)
            markHttp10(end - 2);
        else if (isListen(requestLine))
            insertLines(end - 2, kListenMark);
        bodyLeft_ = contentLength;
        return Scan::consumed;
    }

    /// "GET <path ending in /listen[/]>[?query] HTTP/1.1\r" (see kListenUpgrade).
    static bool isListen(std::string_view requestLine) {
        if (requestLine.compare(0, 4, "GET ") != 0)
            return false;
        auto target = requestLine.substr(4, requestLine.size() - 4 - 10);
        target = target.substr(0, target.find('?'));
        if (!target.empty() && target.back() == '/')
            target.remove_suffix(1);
        constexpr std::string_view suffix = "/listen";
        return target.size() > suffix.size() && target.compare(target.size() - suffix.size(), suffix.size(), suffix) == 0;
    }

    static inline const std::string kListenMark = "Connection: upgrade\r\nUpgrade: " + std::string(kListenUpgrade) + "\r\n";

    static bool equalsLower(std::string_view name, std::string_view lower) {
        if (name.size() != lower.size())
            return false;
        for (std::size_t i = 0; i < name.size(); ++i)
            if ((name[i] | 0x20) != lower[i])
                return false;
        return true;
    }

    /// Digits between optional spaces/tabs; false if anything else or too large.
    static bool parseLength(std::string_view v, std::uint64_t& out) {
        std::size_t i = 0;
        while (i < v.size() && (v[i] == ' ' || v[i] == '\t'))
            ++i;
        const std::size_t digits = i;
        std::uint64_t n = 0;
        for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) {
            if (n > (std::uint64_t(1) << 50))
                return false;
            n = n * 10 + std::uint64_t(v[i] - '0');
        }
        if (i == digits)
            return false;
        while (i < v.size() && (v[i] == ' ' || v[i] == '\t'))
            ++i;
        out = n;
        return i == v.size();
    }

    /// RESTinio 0.6 does not keep the request's HTTP version, and HTTP/1.0 clients cannot read
    /// chunked answers: mark the request (see kHttp10Header) at `at`, the start of the empty line.
    void markHttp10(std::size_t at) {
        static const std::string mark = std::string(kHttp10Header) + ": 1\r\n";
        insertLines(at, mark);
    }

    /// Inserts header lines at `at` (before fed_), which takes the input off the in-place path.
    void insertLines(std::size_t at, const std::string& lines) {
        materialize();
        input_.insert(at, lines);
        fed_ += lines.size();
    }

    /// Replaces the request starting at msgStart_ with a synthetic request for kRejectPath.
    void reject(int status) {
        materialize();
        ready_.append(input_, 0, msgStart_);
        ready_ += "GET ";
        ready_ += kRejectPath;
        ready_ += std::to_string(status);
        ready_ += " HTTP/1.1\r\nHost: dhtgate\r\nConnection: close\r\n\r\n";
        input_.clear();
        fed_ = msgStart_ = 0;
        mode_ = Mode::draining;
    }

    /// `direct`: called from our own read completion (on the connection's executor), so RESTinio's
    /// handler may run at once; otherwise it is posted (never run inside RESTinio's own call).
    void deliverIfPending(bool direct) {
        if (!pending_)
            return;
        if (!ready_.empty()) {
            const auto n = std::min(pendingBuffer_.size(), ready_.size());
            std::memcpy(pendingBuffer_.data(), ready_.data(), n);
            ready_.erase(0, n);
            complete({}, n, direct);
        } else if (finalError_ && mode_ != Mode::draining) {
            complete(finalError_, 0, direct);
        }
    }

    void complete(std::error_code ec, std::size_t n, bool direct) {
        auto done = std::move(pending_);
        pending_ = nullptr;
        if (direct && ownExecutor_)
            done(ec, n);
        else
            asio::post(executor_, [done = std::move(done), ec, n] { done(ec, n); });
    }

    void abortPending() {
        if (pending_)
            complete(asio::error::operation_aborted, 0, false);
    }

    void maybeRead() {
        if (reading_ || !socket_.is_open() || finalError_)
            return;
        const bool wanted = mode_ == Mode::draining || (pending_ && input_.size() < kMaxBuffered);
        if (!wanted)
            return;
        reading_ = true;
        // In place only when nothing is held back and nothing can complete RESTinio's read before
        // this one does (an unblocked pipeline or a rejection would, from ready_).
        inPlaceRead_ = mode_ != Mode::draining && input_.empty() && ready_.empty() && !blocked_;
        asio::mutable_buffer target;
        if (inPlaceRead_) {
            target = pendingBuffer_;
            scratch_.reset();
        } else {
            if (!scratch_)
                scratch_ = std::make_unique<char[]>(kScratchSize);
            target = asio::buffer(scratch_.get(), kScratchSize);
        }
        // An in-place read carries RESTinio's handler itself: the connection holds this object,
        // and RESTinio's handler holds the connection, so keeping the handler here would make a
        // cycle that an io_context shutting down (or a server stopped with idle keep-alive
        // connections) could never break. In the asio operation it is destroyed with it.
        Done held;
        if (inPlaceRead_) {
            held = std::move(pending_);
            pending_ = nullptr;
        }
        auto handler = [self = shared_from_this(), held = std::move(held)](const std::error_code& ec, std::size_t n) mutable {
            if (held)
                self->pending_ = std::move(held);
            self->onRealRead(ec, n);
        };
        if (ownExecutor_)
            socket_.async_read_some(target, std::move(handler));
        else
            socket_.async_read_some(target, asio::bind_executor(executor_, std::move(handler)));
    }

    void onRealRead(const std::error_code& ec, std::size_t n) {
        reading_ = false;
        if (mode_ == Mode::draining) {
            if (!ec)
                return maybeRead(); // discard and go on
            if (closedByOwner_) { // the client closed: the linger is over
                std::error_code ignored;
                socket_.close(ignored);
                if (linger_)
                    linger_->cancel();
            }
            return; // an error before the answer was written: the pending read stays held
        }
        if (ec) {
            finalError_ = ec;
        } else if (inPlaceRead_) {
            view_ = static_cast<const char*>(pendingBuffer_.data());
            viewSize_ = n;
            inPlace_ = 0;
            feed();
            if (inPlace_ > 0 && pending_)
                complete({}, inPlace_, true);
        } else {
            input_.append(scratch_.get(), n);
            feed();
        }
        deliverIfPending(true);
        maybeRead();
    }

    static constexpr std::size_t kScratchSize = 16 * 1024;

    asio::io_context& io_;
    asio::ip::tcp::socket socket_;
    asio::any_io_executor executor_;
    bool ownExecutor_ {true};
    RequestLimits limits_;
    http_parser parser_ {};
    http_parser_settings settings_ {};
    Mode mode_ {Mode::scanning};
    Event event_ {Event::none};
    bool useParser_ {false};         ///< this message goes through http_parser (not the fast scanner)
    bool parserOwnsMessage_ {false}; ///< http_parser has begun the message it took over
    bool counted_ {false};           ///< the fast scanner counted the message at msgStart_ (blocked)
    std::uint64_t bodyLeft_ {0};     ///< Content-Length body bytes still to pass on (fast scanner)
    bool inHeaders_ {false};
    bool blocked_ {false};
    std::size_t fieldCount_ {0};
    bool inFieldName_ {false};
    std::uint64_t messages_ {0};
    std::uint64_t responsesStarted_ {0};
    const char* view_ {nullptr}; ///< RESTinio's buffer, read in place and being parsed
    std::size_t viewSize_ {0};
    std::size_t inPlace_ {0};    ///< bytes of the in-place read released to RESTinio as they are
    std::string input_;          ///< received, held back from RESTinio
    std::size_t fed_ {0};        ///< bytes of the input already parsed
    std::size_t msgStart_ {0};   ///< offset in the input of the request being parsed
    std::string ready_;          ///< bytes RESTinio may read (copied into its buffer)
    Done pending_;
    asio::mutable_buffer pendingBuffer_;
    bool reading_ {false};
    bool inPlaceRead_ {false};
    bool closedByOwner_ {false};
    std::error_code finalError_;
    std::unique_ptr<asio::steady_timer> linger_;
    std::unique_ptr<char[]> scratch_; ///< only while bytes are held back or being discarded
};

GuardedSocket::GuardedSocket(asio::io_context& io) : impl_(std::make_shared<Impl>(io, limitsFor(io))) {}

GuardedSocket::GuardedSocket(GuardedSocket&& other)
    : impl_(std::move(other.impl_)) {
    // RESTinio keeps accepting into the moved-from socket: leave it usable.
    other.impl_ = std::make_shared<Impl>(impl_->io(), limitsFor(impl_->io()));
}

GuardedSocket& GuardedSocket::operator=(GuardedSocket&& other) {
    if (this != &other) {
        if (impl_)
            impl_->ownerGone();
        impl_ = std::move(other.impl_);
        other.impl_ = std::make_shared<Impl>(impl_->io(), limitsFor(impl_->io()));
    }
    return *this;
}

GuardedSocket::~GuardedSocket() {
    if (impl_)
        impl_->ownerGone();
}

asio::ip::tcp::socket& GuardedSocket::lowest_layer() { return impl_->socket(); }
const asio::ip::tcp::socket& GuardedSocket::lowest_layer() const { return impl_->socket(); }
GuardedSocket::executor_type GuardedSocket::get_executor() { return impl_->socket().get_executor(); }
asio::ip::tcp::endpoint GuardedSocket::remote_endpoint() const { return impl_->socket().remote_endpoint(); }
bool GuardedSocket::is_open() const { return impl_->isOpen(); }
void GuardedSocket::cancel(std::error_code& ec) { impl_->cancel(ec); }
void GuardedSocket::shutdown(asio::socket_base::shutdown_type what, std::error_code& ec) { impl_->shutdown(what, ec); }
void GuardedSocket::close() {
    std::error_code ec;
    impl_->close(ec);
}
void GuardedSocket::close(std::error_code& ec) { impl_->close(ec); }

void GuardedSocket::startRead(const asio::any_io_executor& ex, asio::mutable_buffer buffer,
                              std::function<void(std::error_code, std::size_t)> done) {
    impl_->read(ex, buffer, std::move(done));
}

void GuardedSocket::sawWrite(const void* data, std::size_t size) { impl_->onWrite(data, size); }

} // namespace dhtgate::server
