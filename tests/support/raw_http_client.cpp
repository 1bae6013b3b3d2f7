#include "support/raw_http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace dhtgate::test {

RawHttpClient::RawHttpClient(std::uint16_t port, std::chrono::milliseconds timeout, const std::string& host)
    : timeout_(timeout) {
    const bool v6 = host.find(':') != std::string::npos;
    fd_ = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0)
        throw std::runtime_error("socket() failed");
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    int rc;
    if (v6) {
        sockaddr_in6 a {};
        a.sin6_family = AF_INET6;
        a.sin6_port = htons(port);
        ::inet_pton(AF_INET6, host.c_str(), &a.sin6_addr);
        rc = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    } else {
        sockaddr_in a {};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        ::inet_pton(AF_INET, host.c_str(), &a.sin_addr);
        rc = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    }
    if (rc != 0) {
        ::close(fd_);
        fd_ = -1;
        throw std::runtime_error("connect() failed: " + std::string(std::strerror(errno)));
    }
}

RawHttpClient::~RawHttpClient() { close(); }

void RawHttpClient::close() {
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
}

bool RawHttpClient::send(std::string_view bytes) {
    while (!bytes.empty()) {
        const auto n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            return false;
        }
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

void RawHttpClient::shutdownWrite() {
    if (fd_ >= 0)
        ::shutdown(fd_, SHUT_WR);
}

bool RawHttpClient::fill() {
    if (eof_ || fd_ < 0)
        return false;
    pollfd p {fd_, POLLIN, 0};
    int rc;
    do
        rc = ::poll(&p, 1, static_cast<int>(timeout_.count()));
    while (rc < 0 && errno == EINTR);
    if (rc <= 0)
        return false; // timeout
    char buf[16384];
    const auto n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) {
        eof_ = true;
        return false;
    }
    in_.append(buf, static_cast<std::size_t>(n));
    return true;
}

bool RawHttpClient::readExact(std::size_t n) {
    while (in_.size() < n)
        if (!fill())
            return false;
    return true;
}

bool RawHttpClient::readUntil(std::string_view delim, std::size_t& pos) {
    for (;;) {
        pos = in_.find(delim);
        if (pos != std::string::npos)
            return true;
        if (!fill())
            return false;
    }
}

std::optional<RawHttpClient::Response> RawHttpClient::readHeaders() {
    std::size_t end;
    if (!readUntil("\r\n\r\n", end))
        return std::nullopt;
    const std::string head = in_.substr(0, end);
    in_.erase(0, end + 4);
    Response r;
    auto lineEnd = head.find("\r\n");
    const std::string statusLine = head.substr(0, lineEnd);
    const auto sp = statusLine.find(' ');
    r.version = statusLine.substr(0, sp);
    r.status = std::atoi(statusLine.c_str() + (sp == std::string::npos ? 0 : sp + 1));
    std::size_t pos = lineEnd == std::string::npos ? head.size() : lineEnd + 2;
    while (pos < head.size()) {
        auto e = head.find("\r\n", pos);
        if (e == std::string::npos)
            e = head.size();
        const auto line = head.substr(pos, e - pos);
        const auto colon = line.find(':');
        if (colon != std::string::npos) {
            std::string name = line.substr(0, colon);
            std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
            auto value = line.substr(colon + 1);
            value.erase(0, value.find_first_not_of(' '));
            r.headers[name] = value;
        }
        pos = e + 2;
    }
    r.chunked = r.header("transfer-encoding").find("chunked") != std::string::npos;
    ended_ = false;
    lineBuf_.clear();
    return r;
}

bool RawHttpClient::readChunk(std::string& out, bool& last) {
    std::size_t eol;
    if (!readUntil("\r\n", eol))
        return false;
    const auto size = std::stoul(in_.substr(0, eol), nullptr, 16);
    in_.erase(0, eol + 2);
    if (size == 0) {
        // Trailer section: empty line ends it.
        if (!readUntil("\r\n", eol))
            return false;
        in_.erase(0, eol + 2);
        last = true;
        return true;
    }
    if (!readExact(size + 2))
        return false;
    out.append(in_, 0, size);
    in_.erase(0, size + 2);
    last = false;
    return true;
}

std::optional<std::string> RawHttpClient::readBody(const Response& headers) {
    std::string body = std::move(lineBuf_);
    lineBuf_.clear();
    if (headers.chunked) {
        if (ended_)
            return body;
        for (bool last = false; !last;)
            if (!readChunk(body, last))
                return std::nullopt;
        ended_ = true;
        return body;
    }
    const auto cl = headers.header("content-length");
    if (!cl.empty()) {
        const auto n = std::stoul(cl);
        if (!readExact(n))
            return std::nullopt;
        body += in_.substr(0, n);
        in_.erase(0, n);
        return body;
    }
    if (headers.status == 204 || headers.status == 304 || headers.status < 200)
        return body;
    while (fill()) {
    }
    if (!eof_)
        return std::nullopt;
    body += in_;
    in_.clear();
    return body;
}

std::optional<RawHttpClient::Response> RawHttpClient::readResponse() {
    auto r = readHeaders();
    if (!r)
        return std::nullopt;
    auto body = readBody(*r);
    if (!body)
        return std::nullopt;
    r->body = std::move(*body);
    return r;
}

std::optional<std::string> RawHttpClient::readLine() {
    for (;;) {
        const auto nl = lineBuf_.find('\n');
        if (nl != std::string::npos) {
            auto line = lineBuf_.substr(0, nl);
            lineBuf_.erase(0, nl + 1);
            return line;
        }
        if (ended_)
            return std::nullopt;
        bool last = false;
        if (!readChunk(lineBuf_, last))
            return std::nullopt;
        if (last)
            ended_ = true;
    }
}

bool RawHttpClient::waitClosed() {
    while (fill())
        in_.clear();
    return eof_;
}

bool RawHttpClient::silentFor(std::chrono::milliseconds t) {
    const auto saved = timeout_;
    timeout_ = t;
    const auto before = in_.size();
    const bool got = fill();
    timeout_ = saved;
    return !got && !eof_ && in_.size() == before;
}

std::string RawHttpClient::request(std::string_view method, std::string_view path, std::string_view body,
                                   std::string_view extraHeaders) {
    std::string r;
    r.append(method).append(" ").append(path).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    if (!body.empty() || method == "POST")
        r.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
    r.append(extraHeaders).append("\r\n").append(body);
    return r;
}

std::optional<RawHttpClient::Response> RawHttpClient::exchange(std::uint16_t port, const std::string& bytes,
                                                                std::chrono::milliseconds timeout) {
    RawHttpClient c(port, timeout);
    if (!c.send(bytes))
        return std::nullopt;
    return c.readResponse();
}

} // namespace dhtgate::test
