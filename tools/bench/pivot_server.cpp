// pivot_server: the ceiling for `GET /` on this machine.
//
// A pure-asio HTTP/1.1 server on one io_context thread that answers `GET /` and `GET /node/info`
// with exactly the bytes the reference proxy (and dhtgate) send for node info (spec §1.2, §3.2):
// same status line, same headers in the same order, same JSON body (a fixed snapshot with the
// requester's address as `public_ip`). Everything else gets the reference's bare 501.
//
// It does the minimum a real server must do per request (find the end of the header section,
// read the request line, the Connection and Content-Length headers, build the answer), so the
// benchmark can say how far a server is from "nothing but asio and the kernel".
//
//   pivot_server [--port P] [--address A] [--node-id HEX40]
// Prints "pivot_server listening on A:P" once bound; stops on SIGINT/SIGTERM.
#include <asio.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

namespace {

using asio::ip::tcp;

constexpr std::size_t kMaxHeaderBytes = 80 * 1024; // the reference closes above about 80 KiB

std::string g_nodeId = "0cdf037d940b317ef8604df7520a9b09a407b892";

std::string nodeInfoBody(const std::string& publicIp)
{
    return R"({"ipv4":{"dubious":0,"good":1,"incoming":1},"ipv6":{"dubious":0,"good":0,"incoming":0},"node_id":")"
         + g_nodeId + R"(","ops":1,"public_ip":")" + publicIp + "\"}\n";
}

std::string okResponse(const std::string& body, bool keepAlive)
{
    std::string r;
    r.reserve(body.size() + 160);
    r += "HTTP/1.1 200 OK\r\nConnection: ";
    r += keepAlive ? "keep-alive" : "close";
    r += "\r\nContent-Length: ";
    r += std::to_string(body.size());
    r += "\r\nServer: RESTinio\r\nContent-Type: application/json\r\nAccess-Control-Allow-Origin: *\r\n\r\n";
    r += body;
    return r;
}

std::string notImplemented(bool keepAlive)
{
    return std::string("HTTP/1.1 501 Not Implemented\r\nConnection: ") + (keepAlive ? "keep-alive" : "close")
         + "\r\nContent-Length: 0\r\n\r\n";
}

bool iequalsPrefix(const char* p, const char* end, const char* lit)
{
    for (; *lit; ++p, ++lit)
        if (p == end || std::tolower(static_cast<unsigned char>(*p)) != *lit)
            return false;
    return true;
}

bool icontains(const char* b, const char* e, const char* lit)
{
    const std::size_t n = std::strlen(lit);
    for (const char* p = b; p + n <= e; ++p)
        if (iequalsPrefix(p, e, lit))
            return true;
    return false;
}

// The parts of one request head the pivot needs.
struct RequestHead {
    bool ok {false};
    bool nodeInfo {false};
    bool keepAlive {false};
    std::size_t contentLength {0};
};

RequestHead parseHead(const char* b, const char* e)
{
    RequestHead h;
    const char* eol = std::search(b, e, "\r\n", "\r\n" + 2);
    const char* sp1 = std::find(b, eol, ' ');
    if (sp1 == eol)
        return h;
    const char* sp2 = std::find(sp1 + 1, eol, ' ');
    if (sp2 == eol)
        return h;
    std::string method(b, sp1);
    std::string target(sp1 + 1, sp2);
    target = target.substr(0, target.find('?'));
    const bool http11 = std::string(sp2 + 1, eol) == "HTTP/1.1";
    h.ok = true;
    h.nodeInfo = method == "GET" && (target == "/" || target == "/node/info" || target == "/node/info/");
    bool close = false, keep = false;
    for (const char* line = eol + 2; line < e;) {
        const char* next = std::search(line, e, "\r\n", "\r\n" + 2);
        if (iequalsPrefix(line, next, "connection:")) {
            close = icontains(line, next, "close");
            keep = icontains(line, next, "keep-alive");
        } else if (iequalsPrefix(line, next, "content-length:")) {
            h.contentLength = std::strtoull(line + 15, nullptr, 10);
        } else if (iequalsPrefix(line, next, "transfer-encoding:")) {
            h.ok = false; // chunked request bodies are not needed for the GET / ceiling
        }
        line = next + 2;
    }
    h.keepAlive = http11 ? !close : keep;
    return h;
}

class Connection : public std::enable_shared_from_this<Connection> {
public:
    explicit Connection(tcp::socket socket) : socket_(std::move(socket)) {}

    void start()
    {
        asio::error_code ec;
        socket_.set_option(tcp::no_delay(true), ec);
        auto remote = socket_.remote_endpoint(ec);
        std::string ip = "::ffff:127.0.0.1";
        if (!ec)
            ip = remote.address().is_v4() ? "::ffff:" + remote.address().to_string() : remote.address().to_string();
        body_ = nodeInfoBody(ip);
        doRead();
    }

private:
    void doRead()
    {
        socket_.async_read_some(asio::buffer(buf_), [self = shared_from_this()](asio::error_code ec, std::size_t n) {
            if (ec)
                return self->close();
            self->in_.append(self->buf_.data(), n);
            self->process();
        });
    }

    // Answers every complete request in the buffer (pipelining), then writes them all at once.
    void process()
    {
        bool closeAfter = false;
        std::size_t pos = 0;
        while (!closeAfter) {
            const std::size_t end = in_.find("\r\n\r\n", pos);
            if (end == std::string::npos)
                break;
            const RequestHead h = parseHead(in_.data() + pos, in_.data() + end + 2);
            if (!h.ok)
                return close();
            if (end + 4 + h.contentLength > in_.size())
                break; // body not complete yet
            out_ += h.nodeInfo ? okResponse(body_, h.keepAlive) : notImplemented(h.keepAlive);
            closeAfter = !h.keepAlive;
            pos = end + 4 + h.contentLength;
        }
        in_.erase(0, pos);
        if (in_.size() > kMaxHeaderBytes)
            return close();
        if (out_.empty())
            return doRead();
        asio::async_write(socket_, asio::buffer(out_), [self = shared_from_this(), closeAfter](asio::error_code ec, std::size_t) {
            self->out_.clear();
            if (ec || closeAfter)
                return self->close();
            self->doRead();
        });
    }

    void close()
    {
        asio::error_code ec;
        socket_.shutdown(tcp::socket::shutdown_both, ec);
        socket_.close(ec);
    }

    tcp::socket socket_;
    std::array<char, 16384> buf_ {};
    std::string in_;
    std::string out_;
    std::string body_;
};

class Server {
public:
    Server(asio::io_context& io, const tcp::endpoint& ep)
        : io_(io), acceptor_(io, ep), signals_(io, SIGINT, SIGTERM), retry_(io)
    {
        signals_.async_wait([this](asio::error_code, int) {
            asio::error_code ec;
            acceptor_.close(ec);
            retry_.cancel();
            io_.stop();
        });
        doAccept();
    }
    unsigned short port() const { return acceptor_.local_endpoint().port(); }

private:
    void doAccept()
    {
        acceptor_.async_accept([this](asio::error_code ec, tcp::socket socket) {
            if (ec == asio::error::operation_aborted)
                return;
            if (!ec) {
                std::make_shared<Connection>(std::move(socket))->start();
                return doAccept();
            }
            // EMFILE and friends: back off instead of spinning on the error.
            retry_.expires_after(std::chrono::milliseconds(50));
            retry_.async_wait([this](asio::error_code tec) {
                if (tec != asio::error::operation_aborted)
                    doAccept();
            });
        });
    }
    asio::io_context& io_;
    tcp::acceptor acceptor_;
    asio::signal_set signals_;
    asio::steady_timer retry_;
};

} // namespace

int main(int argc, char** argv)
{
    std::string address = "127.0.0.1";
    unsigned short port = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string opt = argv[i];
        if (opt == "--port")
            port = static_cast<unsigned short>(std::stoi(argv[i + 1]));
        else if (opt == "--address")
            address = argv[i + 1];
        else if (opt == "--node-id" && std::strlen(argv[i + 1]) == 40)
            g_nodeId = argv[i + 1];
        else {
            std::cerr << "usage: pivot_server [--port P] [--address A] [--node-id HEX40]\n";
            return 2;
        }
    }
    try {
        asio::io_context io(1);
        Server server(io, tcp::endpoint(asio::ip::make_address(address), port));
        std::printf("pivot_server listening on %s:%u\n", address.c_str(), server.port());
        std::fflush(stdout);
        io.run();
    } catch (const std::exception& e) {
        std::cerr << "pivot_server: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
